//go:build !race

package clicks

const raceEnabled = false
