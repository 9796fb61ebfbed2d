//go:build !race

package nodesched

const raceEnabled = false
