//go:build race

package opensearch

// raceFlag builds the trawl binary the tests run as the test binary was
// built (so the build cache of the race-enabled packages serves it).
var raceFlag = []string{"-race"}
