package webfarm

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// startFarm starts a farm on a free port and stops it when the test ends.
func startFarm(t testing.TB, cfg Config) *Farm {
	t.Helper()
	cfg.Port = 0
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := f.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := f.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return f
}

// farmClient returns an HTTP client that resolves names through the
// farm's hosts file (written to disk and read back, as a crawler would)
// and does not follow redirects.
func farmClient(t testing.TB, f *Farm, timeout time.Duration) *http.Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hosts")
	if err := f.WriteHostsFile(path); err != nil {
		t.Fatal(err)
	}
	names, err := ReadHostsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if a, ok := names[host]; ok {
				addr = net.JoinHostPort(a.String(), port)
			}
			return d.DialContext(ctx, network, addr)
		},
		DisableCompression:  true,
		MaxIdleConnsPerHost: 4,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// smallConfig is a farm small enough to crawl in a test, with every
// feature somewhere.
func smallConfig(seed int64) Config {
	cfg := Config{
		Seed:          seed,
		Hosts:         7,
		PagesPerHost:  40,
		SharedIPHosts: 2,
		Features:      FeatCommon,
		HostFeatures: map[int]Features{
			1: FeatCommon | FeatCalendar,
			2: FeatCommon | FeatDeepPaths,
			3: FeatCommon | FeatSlow | FeatLarge | FeatStall,
			4: FeatCommon | FeatCrawlDelay,
			5: FeatCommon | FeatRobotsErrors,
			6: FeatCommon | FeatRobotsErrors,
		},
		LargeBytes: 200 << 10,
		SlowChunks: 3,
		SlowDelay:  5 * time.Millisecond,
	}
	return cfg
}
