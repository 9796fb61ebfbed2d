//go:build race

package webanalyzer

// raceEnabled shrinks the test graphs under the race detector.
const raceEnabled = true
