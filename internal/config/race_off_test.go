//go:build !race

package config

// raceEnabled is true under the race detector: the large inputs then run
// smaller.
const raceEnabled = false
