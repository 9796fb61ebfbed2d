package dupserver

import (
	"time"

	"github.com/trawl/trawl/internal/loop"
)

// PeerID names one connection of a machine: a node scheduler, the replica
// link of a duplicate server, or the duplicate server link of a replica. The
// driver gives every new connection a fresh ID and never reuses one, so a
// message that arrives late from a closed connection cannot be mistaken for
// one from its successor. 0 is never a peer.
type PeerID = loop.Peer

// Connection tags: which listener accepted a connection, or which dial
// opened it (loop.Event.Tag).
const (
	// TagListen: the main listener (node schedulers; in replica mode the
	// duplicate server), and connections given to Server.Serve.
	TagListen = "listen"
	// TagFailover: a replica's failover listener (node schedulers that
	// lost their duplicate server).
	TagFailover = "failover"
	// TagReplica: the duplicate server's link to its replica.
	TagReplica = "replica"
)

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
