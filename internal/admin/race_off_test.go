//go:build !race

package admin_test

// raceEnabled is true under the race detector: the memory tests then run
// smaller (the detector multiplies time and memory).
const raceEnabled = false
