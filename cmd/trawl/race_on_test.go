//go:build race

package main

// raceEnabled shrinks the web analyzer's test runs under the race
// detector (every table program is then a race-instrumented process).
const raceEnabled = true
