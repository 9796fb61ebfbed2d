package multinode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// TTLResolver is a Resolver that also reports how long its answer may be
// kept: the least TTL of the records it was built from.
type TTLResolver interface {
	Resolver
	LookupHostTTL(ctx context.Context, host string) ([]netip.Addr, time.Duration, error)
}

// DNSResolver asks DNS servers directly, with github.com/miekg/dns, so that
// it learns the TTL of every record (Go's own resolver does not report
// them). It asks for A and AAAA records, follows the CNAME chain the server
// returns, and answers with the least TTL along the chain. A truncated UDP
// answer is asked again over TCP.
type DNSResolver struct {
	// Servers are the DNS servers (host:port), tried in order; empty: the
	// nameservers of /etc/resolv.conf.
	Servers []string
	// Timeout bounds one query (2 s if 0).
	Timeout time.Duration
	// Dial, if set, opens the connection of a query (network "udp" or
	// "tcp"), e.g. to count its bytes.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// maxCNAMEs bounds the CNAME chain followed inside one answer.
const maxCNAMEs = 8

func (r *DNSResolver) servers() ([]string, error) {
	if len(r.Servers) > 0 {
		return r.Servers, nil
	}
	cc, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil {
		return nil, fmt.Errorf("multinode: dns: no servers configured and /etc/resolv.conf unreadable: %w", err)
	}
	var out []string
	for _, s := range cc.Servers {
		out = append(out, net.JoinHostPort(s, cc.Port))
	}
	if len(out) == 0 {
		return nil, errors.New("multinode: dns: /etc/resolv.conf names no nameserver")
	}
	return out, nil
}

// LookupHost implements Resolver.
func (r *DNSResolver) LookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, _, err := r.LookupHostTTL(ctx, host)
	return addrs, err
}

// LookupHostTTL returns the IPv4 then IPv6 addresses of host and the least
// TTL of the records behind them. A name that does not exist (NXDOMAIN, or
// no address of either family) is ErrNotFound.
func (r *DNSResolver) LookupHostTTL(ctx context.Context, host string) ([]netip.Addr, time.Duration, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, 0, nil
	}
	servers, err := r.servers()
	if err != nil {
		return nil, 0, err
	}
	name := dns.Fqdn(strings.ToLower(host))
	var (
		addrs    []netip.Addr
		ttl      uint32
		haveTTL  bool
		notFound = 0
		lastErr  error
	)
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
		msg, err := r.exchange(ctx, servers, name, qt)
		if err != nil {
			lastErr = err
			continue
		}
		if msg.Rcode == dns.RcodeNameError {
			notFound++
			continue
		}
		if msg.Rcode != dns.RcodeSuccess {
			lastErr = fmt.Errorf("multinode: dns %s %s: %s", dns.TypeToString[qt], host, dns.RcodeToString[msg.Rcode])
			continue
		}
		got, t, ok := answerAddrs(msg, name, qt)
		if !ok {
			notFound++
			continue
		}
		addrs = append(addrs, got...)
		if !haveTTL || t < ttl {
			ttl, haveTTL = t, true
		}
	}
	if len(addrs) > 0 {
		return addrs, time.Duration(ttl) * time.Second, nil
	}
	if notFound == 2 {
		return nil, 0, fmt.Errorf("%w: %s", ErrNotFound, host)
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("%w: %s", ErrNotFound, host)
	}
	return nil, 0, lastErr
}

// answerAddrs follows the CNAME chain from name in msg's answer section and
// returns the addresses of type qt at its end, with the least TTL on the way.
func answerAddrs(msg *dns.Msg, name string, qt uint16) ([]netip.Addr, uint32, bool) {
	var ttl uint32 = ^uint32(0)
	for range maxCNAMEs {
		var addrs []netip.Addr
		next := ""
		for _, rr := range msg.Answer {
			h := rr.Header()
			if !strings.EqualFold(h.Name, name) {
				continue
			}
			switch v := rr.(type) {
			case *dns.A:
				if qt == dns.TypeA {
					if a, ok := netip.AddrFromSlice(v.A.To4()); ok {
						addrs = append(addrs, a)
						ttl = min(ttl, h.Ttl)
					}
				}
			case *dns.AAAA:
				if qt == dns.TypeAAAA {
					if a, ok := netip.AddrFromSlice(v.AAAA.To16()); ok {
						addrs = append(addrs, a.Unmap())
						ttl = min(ttl, h.Ttl)
					}
				}
			case *dns.CNAME:
				next = v.Target
				ttl = min(ttl, h.Ttl)
			}
		}
		if len(addrs) > 0 {
			return addrs, ttl, true
		}
		if next == "" {
			return nil, 0, false
		}
		name = next
	}
	return nil, 0, false
}

func (r *DNSResolver) exchange(ctx context.Context, servers []string, name string, qt uint16) (*dns.Msg, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	q := new(dns.Msg)
	q.SetQuestion(name, qt)
	q.RecursionDesired = true
	var lastErr error
	for _, s := range servers {
		for _, network := range []string{"udp", "tcp"} {
			c := &dns.Client{Net: network, Timeout: timeout}
			qctx, cancel := context.WithTimeout(ctx, timeout)
			var msg *dns.Msg
			var err error
			if r.Dial != nil {
				var nc net.Conn
				if nc, err = r.Dial(qctx, network, s); err == nil {
					co := &dns.Conn{Conn: nc}
					msg, _, err = c.ExchangeWithConnContext(qctx, q, co)
					co.Close()
				}
			} else {
				msg, _, err = c.ExchangeContext(qctx, q, s)
			}
			cancel()
			if err != nil {
				lastErr = fmt.Errorf("multinode: dns %s via %s/%s: %w", strings.TrimSuffix(name, "."), network, s, err)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				break // next server
			}
			if msg.Truncated && network == "udp" {
				continue // ask again over TCP
			}
			return msg, nil
		}
	}
	if lastErr == nil {
		lastErr = errors.New("multinode: dns: no server answered")
	}
	return nil, lastErr
}

// LookupHostTTL answers from the hosts table first, whose entries have no
// TTL (0: the configured one applies), then from Fallback.
func (h *HostsResolver) LookupHostTTL(ctx context.Context, host string) ([]netip.Addr, time.Duration, error) {
	if addrs, ok := h.names[normHost(host)]; ok {
		return append([]netip.Addr(nil), addrs...), 0, nil
	}
	if tr, ok := h.Fallback.(TTLResolver); ok {
		return tr.LookupHostTTL(ctx, host)
	}
	if h.Fallback != nil {
		a, err := h.Fallback.LookupHost(ctx, host)
		return a, 0, err
	}
	return nil, 0, fmt.Errorf("%w: %s", ErrNotFound, host)
}
