//go:build race

package nodesched

// raceEnabled is true when the race detector is on: the big crawl then runs
// on a smaller farm (the detector slows the crawl about tenfold); test.sh
// runs the full size without it.
const raceEnabled = true
