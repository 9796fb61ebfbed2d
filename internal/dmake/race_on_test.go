//go:build race

package dmake_test

// raceEnabled is true under the race detector: the process tests then build
// over a few megabytes instead of 200.
const raceEnabled = true
