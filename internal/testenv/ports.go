package testenv

import (
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

// FreeBasePort returns a base port whose base+offsets are free on
// 127.0.0.1 right now, below the kernel's ephemeral range (32768 and up),
// so that no outgoing connection takes one of them before the process
// under test listens. Roles with fixed offsets from a base port (the
// content distributor's +390/+391, the indexer's +400) need one.
func FreeBasePort(t testing.TB, offsets ...int) int {
	t.Helper()
	top := 0
	for _, off := range offsets {
		top = max(top, off)
	}
	for range 200 {
		base := 20000 + rand.IntN(32000-20000-top)
		ok := true
		for _, off := range offsets {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+off)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("testenv: no free base port")
	return 0
}
