package multinode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
)

// Resolver resolves host names for the multinode scheduler (3.2.5.4). It
// must be safe for concurrent use.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]netip.Addr, error)
}

// ErrNotFound reports a host name a resolver does not know.
var ErrNotFound = errors.New("multinode: host not found")

// NetResolver resolves with a net.Resolver (nil: net.DefaultResolver).
type NetResolver struct {
	Resolver *net.Resolver
}

// LookupHost returns the IPv4 and IPv6 addresses of host.
func (r NetResolver) LookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	res := r.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	addrs, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, host)
		}
		return nil, fmt.Errorf("multinode: resolve %s: %w", host, err)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.Unmap())
	}
	return out, nil
}

// maxHostsFile caps a hosts file.
const maxHostsFile = 64 << 20

// HostsResolver answers from a table in /etc/hosts format ("address name
// [alias...]" per line, '#' starts a comment) and asks Fallback, when set,
// for names the table lacks. Names compare case-insensitively, without a
// trailing dot; a name listed on several lines gets every address, in file
// order.
type HostsResolver struct {
	names    map[string][]netip.Addr
	Fallback Resolver
}

// ParseHosts reads a hosts table.
func ParseHosts(data []byte) (*HostsResolver, error) {
	if len(data) > maxHostsFile {
		return nil, fmt.Errorf("multinode: hosts file larger than %d bytes", maxHostsFile)
	}
	r := &HostsResolver{names: map[string][]netip.Addr{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if i := strings.IndexByte(t, '#'); i >= 0 {
			t = t[:i]
		}
		f := strings.Fields(t)
		if len(f) == 0 {
			continue
		}
		addr, err := netip.ParseAddr(f[0])
		if err != nil {
			return nil, fmt.Errorf("multinode: hosts file line %d: bad address %q", line, f[0])
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("multinode: hosts file line %d: address without a name", line)
		}
		addr = addr.Unmap()
		for _, n := range f[1:] {
			n = normHost(n)
			if n == "" {
				continue
			}
			dup := false
			for _, a := range r.names[n] {
				dup = dup || a == addr
			}
			if !dup {
				r.names[n] = append(r.names[n], addr)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("multinode: hosts file: %w", err)
	}
	return r, nil
}

// LoadHostsFile reads a hosts file; fallback (may be nil) resolves the
// names it lacks.
func LoadHostsFile(path string, fallback Resolver) (*HostsResolver, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("multinode: hosts file: %w", err)
	}
	r, err := ParseHosts(data)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	r.Fallback = fallback
	return r, nil
}

// Len returns the number of names in the table.
func (r *HostsResolver) Len() int { return len(r.names) }

// LookupHost returns the addresses of host.
func (r *HostsResolver) LookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, ok := r.names[normHost(host)]; ok {
		return append([]netip.Addr(nil), a...), nil
	}
	if r.Fallback != nil {
		return r.Fallback.LookupHost(ctx, host)
	}
	return nil, fmt.Errorf("%w: %s", ErrNotFound, host)
}
