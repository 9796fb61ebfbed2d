package dupserver

import (
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

// PeerID names one connection of a machine: a node scheduler, the replica
// link of a duplicate server, or the duplicate server link of a replica. The
// driver gives every new connection a fresh ID and never reuses one, so a
// message that arrives late from a closed connection cannot be mistaken for
// one from its successor. 0 is never a peer.
type PeerID uint64

// Action is what a machine asks its driver to do: send Msg to To with
// Priority, or, when Close is set, close the connection To.
type Action struct {
	To       PeerID
	Msg      cmt.Message
	Priority cmt.Priority
	Close    bool
}

// Defaults of the machines' timers and bounds.
const (
	// DefaultKeepAlive is the keep-alive timer of 3.3.2 and 3.4.2.
	DefaultKeepAlive = 120 * time.Second
	// DefaultReplicaTimeout is how long the duplicate server waits for the
	// replica to answer a forwarded checksum message before it gives the
	// replica up, answers the node schedulers from its own store and
	// reconnects (docs/decisions/dupserver.md).
	DefaultReplicaTimeout = 10 * time.Second
	// DefaultWindow bounds the checksum messages forwarded to the replica
	// and not yet answered.
	DefaultWindow = 8192
	// DefaultMaxQueued bounds the checksum messages held because an
	// operation on the same checksum is waiting for the replica.
	DefaultMaxQueued = 65536
	// resyncBatch is how many dirty keys one store scan reads.
	resyncBatch = 256
)
