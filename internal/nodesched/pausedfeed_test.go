package nodesched

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// pausedXML has two content destinations; "arch" is paused (MS-FSCCFG
// 2.2.4.9) when paused is "yes".
func pausedXML(paused string) string {
	return `<?xml version="1.0"?>
<CrawlerConfig><DomainSpecification name="c1">
<attrib name="start_uris" type="list-string"><member>http://a.test/</member></attrib>
<section name="feeding">
<section name="live"><attrib name="collection" type="string">idx_live</attrib></section>
<section name="arch"><attrib name="collection" type="string">idx_arch</attrib>
<attrib name="paused" type="boolean">` + paused + `</attrib></section>
</section>
</DomainSpecification></CrawlerConfig>`
}

// TestFeedingPausedDestination drives a collection whose configuration
// pauses a destination through administrator commands and configuration
// changes, reopening the store after each step: the state seen by an
// administrator (Machine.Feeding) lists the paused destination until it
// is resumed by name or with every destination, and that resumption
// survives a restart, until a suspension by name or a configuration that
// no longer pauses it.
func TestFeedingPausedDestination(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_700_000_000, 0)
	open := func(paused string) (*Machine, *store.Store) {
		t.Helper()
		cfg, err := config.Parse("t.xml", []byte(pausedXML(paused)), nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(dir, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMachine(MachineConfig{NodeID: "n1", Store: st, Env: crawlpipe.Env{NodeID: "n1"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.AddCollection(cfg.Collections[0], now); err != nil {
			t.Fatal(err)
		}
		return m, st
	}
	suspend := func(on bool, dests ...string) func(m *Machine) error {
		return func(m *Machine) error {
			return m.Handle(MNS, &cmt.AdmConfFeedingSuspend{Collection: "c1", Suspend: on, Destinations: dests}, now)
		}
	}
	reconf := func(paused string) func(m *Machine) error {
		return func(m *Machine) error {
			cfg, err := config.Parse("t.xml", []byte(pausedXML(paused)), nil)
			if err != nil {
				return err
			}
			return m.AddCollection(cfg.Collections[0], now)
		}
	}
	set := func(names ...string) map[string]bool {
		out := map[string]bool{}
		for _, n := range names {
			out[n] = true
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		paused string // the configuration the store is reopened with
		do     func(m *Machine) error
		want   FeedingState
	}{
		{"paused by the configuration", "yes", func(*Machine) error { return nil },
			FeedingState{Destinations: set("arch")}},
		{"live suspended too", "yes", suspend(true, "live"),
			FeedingState{Destinations: set("arch", "live")}},
		{"arch resumed by name", "yes", suspend(false, "arch"),
			FeedingState{Destinations: set("live"), Resumed: set("arch")}},
		{"arch suspended by name again", "yes", suspend(true, "default:idx_arch"),
			FeedingState{Destinations: set("live", "default:idx_arch", "arch")}},
		{"every destination resumed", "yes", suspend(false),
			FeedingState{Resumed: set("arch")}},
		{"every destination suspended", "yes", suspend(true),
			FeedingState{All: true, Destinations: set("arch")}},
		{"resumed again", "yes", suspend(false), FeedingState{Resumed: set("arch")}},
		{"the configuration no longer pauses arch", "no", reconf("no"), FeedingState{}},
		{"then pauses it again", "yes", reconf("yes"), FeedingState{Destinations: set("arch")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, st := open(tc.paused)
			if err := tc.do(m); err != nil {
				t.Fatal(err)
			}
			before := m.Feeding("c1")
			persist(t, m, st)
			st.Close()
			m, st = open(tc.paused)
			defer st.Close()
			for when, got := range map[string]FeedingState{"before reopening": before, "after reopening": m.Feeding("c1")} {
				if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s (-want +got):\n%s", when, diff)
				}
			}
		})
	}
}

// TestFeedingStateCodec round-trips saved feeding states, reads the older
// form, and rejects corrupt ones.
func TestFeedingStateCodec(t *testing.T) {
	for _, st := range []FeedingState{
		{},
		{All: true},
		{Destinations: map[string]bool{"a": true, "default:x": true}},
		{Resumed: map[string]bool{"arch": true}},
		{All: true, Destinations: map[string]bool{"a": true}, Resumed: map[string]bool{"b": true, "c": true}},
	} {
		got, err := decodeFeedingState(encodeFeedingState(st))
		if err != nil {
			t.Fatalf("%+v: %v", st, err)
		}
		if diff := cmp.Diff(st, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
	old := append([]byte{1}, "\x01a\x02bb"...) // all, then destinations a and bb
	if got, err := decodeFeedingState(old); err != nil || !got.All || !cmp.Equal(got.Destinations, map[string]bool{"a": true, "bb": true}) {
		t.Errorf("older form: %+v, %v", got, err)
	}
	for name, b := range map[string][]byte{
		"unknown flag":      {0x04},
		"count too large":   {0x02, 0x7f, 0x01, 'a'},
		"truncated string":  {0x00, 0x05, 'a'},
		"truncated count":   {0x02, 0x80},
		"truncated resumed": {0x02, 0x00, 0x03, 'a'},
	} {
		if _, err := decodeFeedingState(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzDecodeFeedingState checks that the saved feeding state decoder
// never panics and that what it reads encodes back to an equal state.
func FuzzDecodeFeedingState(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 'a'})
	f.Add(encodeFeedingState(FeedingState{All: true, Destinations: map[string]bool{"a": true}, Resumed: map[string]bool{"b": true}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeFeedingState(b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "nodesched:") && !strings.HasPrefix(err.Error(), "store:") {
				t.Errorf("error without package prefix: %v", err)
			}
			return
		}
		again, err := decodeFeedingState(encodeFeedingState(st))
		if err != nil || !cmp.Equal(st, again, cmpopts.EquateEmpty()) {
			t.Errorf("%+v re-read as %+v (%v)", st, again, err)
		}
	})
}
