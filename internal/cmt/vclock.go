package cmt

// VectorClock is the per-connection vector clock of PPDUP_SET_CONFIG and
// PPDUP_CONFIG_ACK (2.2.1.1, 3.1.5.22, 3.3.5.8).
//
// The spec says the clock is incremented for every message sent on a
// connection, yet only SET_CONFIG and CONFIG_ACK carry it, and a node
// scheduler accepts an ACK only when its vc equals its own clock, which
// only works if the receiver echoes the SET_CONFIG's value. trawl therefore
// counts configurations: the sender of a SET_CONFIG calls Next and puts the
// result in VClock, the receiver echoes that VClock in its CONFIG_ACK, and
// the sender accepts the ACK when Acked reports it answers the latest
// SET_CONFIG. Stale ACKs (an answer to an older SET_CONFIG) are ignored,
// as product note <1> of section 6 says.
//
// The clock belongs to the role's state for one peer (a node scheduler
// keeps one per duplicate server, a duplicate server one for its replica),
// not to Conn: Conn carries messages and never rewrites them, and the role
// state machines, which must be testable without connections, decide what
// a CONFIG_ACK means. The zero value is a clock at 0.
type VectorClock struct {
	n int64
}

// Next advances the clock and returns the value for the next SET_CONFIG.
func (c *VectorClock) Next() int64 {
	c.n++
	return c.n
}

// Current returns the value of the latest SET_CONFIG (0 before any).
func (c *VectorClock) Current() int64 { return c.n }

// Acked reports whether an ACK carrying vc answers the latest SET_CONFIG.
func (c *VectorClock) Acked(vc int64) bool { return c.n != 0 && vc == c.n }
