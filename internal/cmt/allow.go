package cmt

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// AllowList is the allow-list of peer addresses of a listener (MS-FSCMT has
// no authentication: it is a private-network protocol, see
// docs/decisions/cmt.md). The zero value (no prefixes) admits every peer.
type AllowList struct {
	prefixes []netip.Prefix
}

// ParseAllowList parses CIDR prefixes ("10.0.0.0/8") or single addresses
// ("127.0.0.2", taken as /32 or /128).
func ParseAllowList(specs []string) (AllowList, error) {
	var a AllowList
	for _, s := range specs {
		for _, part := range strings.Split(s, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if p, err := netip.ParsePrefix(part); err == nil {
				a.prefixes = append(a.prefixes, p.Masked())
				continue
			}
			ip, err := netip.ParseAddr(part)
			if err != nil {
				return AllowList{}, fmt.Errorf("cmt: allow-list entry %q is neither a CIDR prefix nor an address", part)
			}
			ip = ip.Unmap()
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return a, nil
}

// Empty reports whether the list admits every peer.
func (a AllowList) Empty() bool { return len(a.prefixes) == 0 }

// String lists the prefixes, comma-separated ("any" when empty).
func (a AllowList) String() string {
	if a.Empty() {
		return "any"
	}
	s := make([]string, len(a.prefixes))
	for i, p := range a.prefixes {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// Allows reports whether a peer at addr may connect. An address that is not
// an IP address (an in-memory pipe) is always admitted: the list guards
// network listeners.
func (a AllowList) Allows(addr net.Addr) bool {
	if a.Empty() || addr == nil {
		return true
	}
	var ip netip.Addr
	switch x := addr.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(x.IP)
	default:
		ap, err := netip.ParseAddrPort(addr.String())
		if err != nil {
			return addr.Network() != "tcp" && addr.Network() != "udp"
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// AllowListener wraps ln so that Accept closes, and reports through
// refused, every connection from a peer the list does not admit.
func AllowListener(ln net.Listener, a AllowList, refused func(remote net.Addr)) net.Listener {
	if a.Empty() {
		return ln
	}
	return &allowListener{Listener: ln, allow: a, refused: refused}
}

type allowListener struct {
	net.Listener
	allow   AllowList
	refused func(net.Addr)
}

func (l *allowListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.allow.Allows(c.RemoteAddr()) {
			return c, nil
		}
		if l.refused != nil {
			l.refused(c.RemoteAddr())
		}
		c.Close()
	}
}
