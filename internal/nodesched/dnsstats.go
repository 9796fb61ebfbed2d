package nodesched

import (
	"maps"

	"github.com/trawl/trawl/internal/cmt"
)

// DNSCounts are a node scheduler's DNS statistics (MS-FSCADM 2.2.4.8 on
// `trawl node`): it resolves through its multinode scheduler
// (CMD_UM_DNS_REQUEST, MS-FSCMT 3.1.5.19), so a request is a
// CMD_UM_DNS_REQUEST sent and a response a CMD_UM_DNS_REPLY received.
// RCodes counts the replies by the DNS answer they stand for: 0 with
// addresses, 3 without (the reply carries no reason). Retries counts the
// requests for a name whose previous reply had no address; Written and
// Read the bytes of those messages' payloads as sent.
type DNSCounts struct {
	Requests, Responses, Retries int64
	Written, Read                int64
	RCodes                       map[int]int64
}

// dnsStats is what the machine counts (DNSCounts) and the names whose
// last reply had no address.
type dnsStats struct {
	DNSCounts
	failed map[string]bool
}

// countDNSOut counts a CMD_UM_DNS_REQUEST about to be sent.
func (m *Machine) countDNSOut(msg cmt.Message) {
	x, ok := msg.(*cmt.UMDNSRequest)
	if !ok {
		return
	}
	m.dnsStats.Requests++
	if m.dnsStats.failed[x.Site] {
		m.dnsStats.Retries++
	}
	if b, err := cmt.EncodePayload(x, cmt.PriorityNormal); err == nil {
		m.dnsStats.Written += int64(len(b))
	}
}

// countDNSIn counts a CMD_UM_DNS_REPLY.
func (m *Machine) countDNSIn(x *cmt.UMDNSReply, host string) {
	s := &m.dnsStats
	s.Responses++
	if s.RCodes == nil {
		s.RCodes, s.failed = map[int]int64{}, map[string]bool{}
	}
	if len(x.Addrs) > 0 {
		s.RCodes[0]++
		delete(s.failed, host)
	} else {
		s.RCodes[3]++
		s.failed[host] = true
	}
	if b, err := cmt.EncodePayload(x, cmt.PriorityNormal); err == nil {
		s.Read += int64(len(b))
	}
}

// DNSStats returns the node scheduler's DNS counters.
func (m *Machine) DNSStats() DNSCounts {
	out := m.dnsStats.DNSCounts
	out.RCodes = maps.Clone(out.RCodes)
	return out
}
