package multinode

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
)

var t0 = time.Unix(1245064336, 0)

// testSpec parses one collection named name whose DomainSpecification
// holds body.
func testSpec(t testing.TB, name, body string) *CollectionSpec {
	t.Helper()
	xml := fmt.Sprintf(`<?xml version="1.0"?><CrawlerConfig><DomainSpecification name=%q>%s</DomainSpecification></CrawlerConfig>`, name, body)
	cfg, err := config.Parse("test.xml", []byte(xml), &config.Options{SkipFileChecks: true})
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	s, err := NewCollectionSpec(cfg.Collections[0], nil)
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	return s
}

func startURIs(uris ...string) string {
	s := `<attrib name="start_uris" type="list-string">`
	for _, u := range uris {
		s += "<member>" + u + "</member>"
	}
	return s + "</attrib>"
}

// entry returns a crawl queue entry for raw as a node scheduler would send
// it.
func entry(t testing.TB, raw string) cmt.Entry {
	t.Helper()
	e, err := StartEntry(raw)
	if err != nil {
		t.Fatal(err)
	}
	e.Flags = cmt.URIFUnscreened
	return e
}

// sent returns the messages sent to conn, in order.
func sent(acts []Action, conn ConnID) []cmt.Message {
	var out []cmt.Message
	for _, a := range acts {
		if s, ok := a.(Send); ok && s.Conn == conn {
			out = append(out, s.Message)
		}
	}
	return out
}

// codes returns the command codes of msgs.
func codes(msgs []cmt.Message) []cmt.Command {
	var out []cmt.Command
	for _, m := range msgs {
		out = append(out, m.Code())
	}
	return out
}

func actionsOf[T Action](acts []Action) []T {
	var out []T
	for _, a := range acts {
		if x, ok := a.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

func hasLog(acts []Action, level slog.Level, msg string) bool {
	for _, l := range actionsOf[LogLine](acts) {
		if l.Level == level && l.Msg == msg {
			return true
		}
	}
	return false
}

// harness drives a machine with registered node schedulers.
type harness struct {
	t    testing.TB
	m    *MNS
	now  time.Time
	conn map[string]ConnID
	next ConnID
}

func newHarness(t testing.TB, cfg Config, specs ...*CollectionSpec) *harness {
	h := &harness{t: t, m: New(cfg), now: t0, conn: map[string]ConnID{}}
	h.m.Tick(h.now)
	for _, s := range specs {
		if _, err := h.m.AddCollection(s, h.now); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// join connects and registers node id; with answer, it answers every
// CMD_UM_ASK_ROUTE with CMD_UM_LAST_ROUTE at once.
func (h *harness) join(id string, answer bool) []Action {
	h.next++
	c := h.next
	h.conn[id] = c
	h.m.Connect(c, h.now)
	acts := h.m.Receive(c, &cmt.UMInit{NodeID: id, AdminHost: id + ".example", AdminPort: 10000}, h.now)
	if answer {
		for _, msg := range sent(acts, c) {
			if ar, ok := msg.(*cmt.UMAskRoute); ok {
				acts = append(acts, h.m.Receive(c, &cmt.UMLastRoute{Collection: ar.Collection}, h.now)...)
			}
		}
	}
	return acts
}

func (h *harness) recv(id string, msg cmt.Message) []Action {
	return h.m.Receive(h.conn[id], msg, h.now)
}

// resolveAll answers every Lookup in acts (recursively) with addresses
// from table (a missing name fails).
func (h *harness) resolveAll(acts []Action, table map[string][]netip.Addr) []Action {
	out := append([]Action(nil), acts...)
	for i := 0; i < len(out); i++ {
		if l, ok := out[i].(Lookup); ok {
			addrs, found := table[l.Host]
			var err error
			if !found {
				err = ErrNotFound
			}
			out = append(out, h.m.DNSResult(l.Host, addrs, err, h.now)...)
		}
	}
	return out
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
