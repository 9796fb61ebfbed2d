//go:build !race

package opensearch

// raceFlag builds the trawl binary the tests run as the test binary was
// built (so the build cache serves it).
var raceFlag []string
