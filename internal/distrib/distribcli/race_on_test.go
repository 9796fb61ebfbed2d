//go:build race

package distribcli_test

const raceEnabled = true
