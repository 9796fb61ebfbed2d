//go:build !race

package webanalyzer

const raceEnabled = false
