//go:build !race

package dmake_test

const raceEnabled = false
