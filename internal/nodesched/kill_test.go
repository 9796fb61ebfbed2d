package nodesched

import (
	"context"
	"encoding/hex"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/store"
)

// TestHelperNode is the child process of TestKill9: a node scheduler
// connected over TCP to the parent's fake multinode scheduler.
func TestHelperNode(t *testing.T) {
	dir, addr := os.Getenv("TRAWL_NS_HELPER_DIR"), os.Getenv("TRAWL_NS_HELPER_MNS")
	if dir == "" {
		return // not a child: nothing to do
	}
	d := New(Config{NodeID: "node1", DataDir: dir, MNS: TCPDialer(addr, "mns", nil), Workers: 32})
	_ = d.Run(context.Background())
}

func storeDigest(t testing.TB, dir string) map[string]string {
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string]string{}
	err = st.URIs("farm", "", func(r *store.URIRecord) error {
		cs := ""
		if r.HasChecksum {
			cs = hex.EncodeToString(r.Checksum[:])
		}
		// Which of two equal documents owns the checksum depends on fetch
		// order; a duplicate and its owner compare alike.
		status := r.Status
		if status == store.StatusDuplicate {
			status = store.StatusFetched
		}
		out[r.URI] = status.String() + " " + cs
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKill9 kills a crawling node scheduler with SIGKILL five times at
// random moments, restarting it on the same store, lets a last run finish,
// and compares the store with an uninterrupted crawl's.
func TestKill9(t *testing.T) {
	farm := startFarm(t, 5, 50)
	ref := t.TempDir()
	r := runCrawl(t, farm, ref, 0, killFetchTimeout)
	waitIdle(t, r.d, 90*time.Second)
	r.stop(t)
	want := storeDigest(t, ref)
	wantStats := killStats(t, ref)

	dir := t.TempDir()
	col := farmCollection(t, farm, farm.DefaultCrawl(), XMLOpts(0, killFetchTimeout))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mns := newFakeMNS(t, farm, "node1", col)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go mns.serveListener(ctx, ln)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for i := 0; i < 5; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperNode$")
		cmd.Env = append(os.Environ(), "TRAWL_NS_HELPER_DIR="+dir, "TRAWL_NS_HELPER_MNS="+ln.Addr().String())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(300+rng.Intn(1500)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	got0 := storeDigest(t, dir)
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	mns2 := newFakeMNS(t, farm, "node1", col)
	d := New(Config{NodeID: "node1", Store: st, MNS: mns2.dialer(rctx), Workers: 64})
	done := make(chan error, 1)
	go func() { done <- d.Run(rctx) }()
	waitIdle(t, d, 90*time.Second)
	rcancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st.Close()
	got := storeDigest(t, dir)
	t.Logf("after 5 kills the store held %d URIs; finished with %d (uninterrupted: %d)", len(got0), len(got), len(want))
	for u, w := range want {
		if g, ok := got[u]; !ok {
			t.Errorf("missing %s", u)
		} else if g != w {
			t.Errorf("%s: got %q, uninterrupted crawl %q", u, g, w)
		}
	}
	for u := range got {
		if _, ok := want[u]; !ok {
			t.Errorf("extra %s", u)
		}
	}
	// The statistics survive the kills, each event counted once: per
	// collection and per site as in the uninterrupted crawl.
	t.Logf("uninterrupted: %d sites, collection counters %v", len(wantStats)-1, wantStats[""])
	if diff := cmp.Diff(wantStats, killStats(t, dir)); diff != "" {
		t.Errorf("statistics after 5 kills (-uninterrupted +killed):\n%s", diff)
	}
}

// killStable are the counters of TestKill9 that do not depend on timing
// or on the restarts themselves (a restart queues the start URIs again and
// fetches robots.txt again: real events, not counted twice).
var killStable = []string{"processed", "fetched", "stored", "bytes", "doc_bytes", "doc_bytes_n", "doc_bytes_max",
	"links_local", "links_other", "redirects", "deleted", "modified", "unchanged", "noindex", "nofollow",
	"has_lastmod", "has_etag", "retries"}

// killStats reads the counters saved in the store in dir (collection
// "farm"), reduced to killStable, http_* and mime_*, by collection
// ("") and by site.
func killStats(t testing.TB, dir string) map[string]Counters {
	t.Helper()
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	coll, sites, err := SavedStats(st, "farm")
	if err != nil {
		t.Fatal(err)
	}
	keep := func(c Counters) Counters {
		out := Counters{}
		for k, v := range c {
			if slices.Contains(killStable, k) || strings.HasPrefix(k, "http_") || strings.HasPrefix(k, "mime_") {
				out[k] = v
			}
		}
		return out
	}
	out := map[string]Counters{"": keep(coll)}
	for s, c := range sites {
		if k := keep(c); len(k) > 0 {
			out[s] = k
		}
	}
	return out
}

// killFetchTimeout is the fetch_timeout of both crawls of TestKill9. The farm
// has no stalled pages, so it only has to be long enough that the 4 MiB
// page never times out in one crawl and not the other on a loaded machine
// (with 2 s it did, under the race detector at load 10).
const killFetchTimeout = 15
