//go:build race

package clicks

// raceEnabled: under the race detector, whose binaries take about a second
// to start, TestClickBuild runs one build instead of two.
const raceEnabled = true
