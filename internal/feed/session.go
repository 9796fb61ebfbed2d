package feed

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/trawl/trawl/internal/config"
)

// Callback reports the outcome of one operation of a submitted batch: nil
// when the destination has it (applied, or already applied: a resend), an
// error wrapping ErrRejected when the destination will never take it, any
// other error when it may be sent again later.
type Callback func(seq uint64, err error)

// ErrRejected marks a permanent per-operation failure: the operation is
// dropped from the outbox instead of being resent.
var ErrRejected = errors.New("feed: rejected")

// Session is one content-feeding session with a destination: an in-process
// index (Destination), or later a content distributor (MS-FSCDFT) reached
// over the network.
//
// Submit hands over a batch. It may return before the operations are
// applied; the session then calls cb once per operation, from any
// goroutine, possibly before Submit returns. An error from Submit means the
// session has failed: the feeder closes it, takes back the batch and every
// operation still unanswered, and creates a new session after a backoff.
// A callback that comes after that is ignored. Close ends the session; it
// need not call the callbacks of unanswered operations.
type Session interface {
	Submit(ctx context.Context, batch []Operation, cb Callback) error
	Close() error
}

// Dialer creates a session with a target; the feeder calls it at start and
// again after every failure.
type Dialer func(ctx context.Context, t Target) (Session, error)

// Target is one content destination of a crawl collection (an MS-FSCCFG
// feeding section entry).
type Target struct {
	// Name is the destination's name, or "default:<collection>" for the
	// implicit destination of a collection without a feeding section.
	Name string
	// Collection is the content collection documents are submitted to.
	Collection string
	// Primary targets report their callbacks to FeederOptions.OnResult.
	Primary bool
	// Paused targets start suspended.
	Paused bool
}

// DefaultTargetName is the name of a collection's implicit destination.
func DefaultTargetName(collection string) string { return "default:" + collection }

// Targets returns the content destinations of a crawl collection from its
// feeding section. With no section, documents go to one primary destination
// "default:<crawl collection>" with content collection crawlCollection.
// When no destination says primary, the first one is primary.
func Targets(crawlCollection string, dests []config.Destination) ([]Target, error) {
	if len(dests) == 0 {
		return []Target{{Name: DefaultTargetName(crawlCollection), Collection: crawlCollection, Primary: true}}, nil
	}
	out := make([]Target, 0, len(dests))
	seen := map[string]bool{}
	anyPrimary := false
	for _, d := range dests {
		if d.Name == "" || strings.IndexByte(d.Name, 0) >= 0 {
			return nil, fmt.Errorf("feed: bad content destination name %q", d.Name)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("feed: content destination %q defined twice", d.Name)
		}
		if d.Collection == "" {
			return nil, fmt.Errorf("feed: content destination %q has no collection", d.Name)
		}
		seen[d.Name] = true
		anyPrimary = anyPrimary || d.Primary
		out = append(out, Target{Name: d.Name, Collection: d.Collection, Primary: d.Primary, Paused: d.Paused})
	}
	if !anyPrimary {
		out[0].Primary = true
	}
	return out, nil
}

// matches reports whether a destination named in CMD_ADM_CONF_FEEDING_SUSPEND
// (a destination name or "default:<content collection>") names t.
func (t Target) matches(name string) bool {
	if name == t.Name {
		return true
	}
	c, ok := strings.CutPrefix(name, "default:")
	return ok && c == t.Collection
}
