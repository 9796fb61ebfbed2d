package filter

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// field is one part of an address range: the bits [off, off+width) of the
// address (from the most significant bit) must lie in [lo, hi].
type field struct {
	off, width uint8
	lo, hi     uint16
}

// AddrMask is a compiled ipmask or ip6mask rule.
type AddrMask struct {
	v6     bool
	prefix netip.Prefix // prefix form (IPv6)
	mask   uint32       // IPv4 bit mask form (CIDR, ip:mask, plain address)
	base   uint32
	fields []field // range form
}

// ParseIPMask parses an ipmask rule (MS-FSCCFG 2.2.4.1). Accepted forms,
// white space around the separators ignored:
//
//   - range: "207.46.197.0-100", "207.46.190-197.100": every octet is a
//     number or a range lo-hi, and an address matches when each octet lies
//     in its range;
//   - prefix: "207.46.197.0/24", "207.46.197.0 /24" (N from 0 to 32);
//   - bit mask: "207.46.197.0:255.255.255.0" or with a hexadecimal mask
//     "207.46.197.0:0xffffff00": an address matches when (a & m) == (ip & m).
//     A hexadecimal mask of more than 8 digits keeps its low 32 bits, which
//     reads the spec's own example "0xffffffff00" as 255.255.255.0, the
//     mask of its twin example;
//   - a plain address, matching only itself.
//
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are matched as IPv4.
func ParseIPMask(s string) (*AddrMask, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.Contains(s, "/"):
		addr, bits, _ := strings.Cut(s, "/")
		a, err := parseIPv4(addr)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(strings.TrimSpace(bits))
		if err != nil || n < 0 || n > 32 {
			return nil, fmt.Errorf("filter: ipmask %q: prefix length must be 0 to 32", s)
		}
		m := uint32(0)
		if n > 0 {
			m = ^uint32(0) << (32 - n)
		}
		return &AddrMask{mask: m, base: a & m}, nil
	case strings.Contains(s, ":"):
		addr, ms, _ := strings.Cut(s, ":")
		a, err := parseIPv4(addr)
		if err != nil {
			return nil, err
		}
		ms = strings.TrimSpace(ms)
		var m uint32
		if strings.Contains(ms, ".") {
			if m, err = parseIPv4(ms); err != nil {
				return nil, err
			}
		} else {
			h := strings.TrimPrefix(strings.TrimPrefix(ms, "0x"), "0X")
			v, err := strconv.ParseUint(h, 16, 64)
			if err != nil || h == "" {
				return nil, fmt.Errorf("filter: ipmask %q: bad mask %q", s, ms)
			}
			m = uint32(v)
		}
		return &AddrMask{mask: m, base: a & m}, nil
	case strings.Contains(s, "-"):
		parts := strings.Split(s, ".")
		if len(parts) != 4 {
			return nil, fmt.Errorf("filter: ipmask %q: want four octets", s)
		}
		r := &AddrMask{}
		for i, p := range parts {
			lo, hi, err := parseRange(p, 10, 255)
			if err != nil {
				return nil, fmt.Errorf("filter: ipmask %q: %v", s, err)
			}
			r.fields = append(r.fields, field{off: uint8(96 + 8*i), width: 8, lo: lo, hi: hi})
		}
		return r, nil
	default:
		a, err := parseIPv4(s)
		if err != nil {
			return nil, err
		}
		return &AddrMask{mask: ^uint32(0), base: a}, nil
	}
}

func parseIPv4(s string) (uint32, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || !a.Is4() {
		return 0, fmt.Errorf("filter: %q is not an IPv4 address", s)
	}
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), nil
}

// parseRange parses "n" or "lo-hi" in the given base.
func parseRange(s string, base int, max uint64) (lo, hi uint16, err error) {
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "-")
	l, err := strconv.ParseUint(strings.TrimSpace(a), base, 16)
	if err != nil || l > max {
		return 0, 0, fmt.Errorf("bad number %q", a)
	}
	h := l
	if isRange {
		if h, err = strconv.ParseUint(strings.TrimSpace(b), base, 16); err != nil || h > max {
			return 0, 0, fmt.Errorf("bad number %q", b)
		}
		if h < l {
			return 0, 0, fmt.Errorf("empty range %q", s)
		}
	}
	return uint16(l), uint16(h), nil
}

// ParseIP6Mask parses an ip6mask rule (MS-FSCCFG 2.2.4.1). Accepted forms:
//
//   - range: "2002:CF2E:C500-C564:0:0:0:0:0", "::ffff:207.46.197.0-100":
//     every 16-bit group (and every octet of an embedded IPv4 address) is a
//     number or a range lo-hi; "::" stands for zero groups;
//   - prefix: "2002:CF2E:C500:0:0:0:0:0/60" (N from 0 to 128).
//
// The spec's examples write 7 groups and no "::" ("2002:CF2E:C500:0:0:0:0");
// such an address is read with a zero eighth group, as if it ended in "::".
// IPv4 addresses are matched in their IPv4-mapped form ::ffff:a.b.c.d.
func ParseIP6Mask(s string) (*AddrMask, error) {
	s = strings.TrimSpace(s)
	if addr, bits, ok := strings.Cut(s, "/"); ok {
		a, err := netip.ParseAddr(fixSevenGroups(strings.TrimSpace(addr)))
		if err != nil || a.Zone() != "" || !a.Is6() {
			return nil, fmt.Errorf("filter: ip6mask %q: bad IPv6 address", s)
		}
		n, err := strconv.Atoi(strings.TrimSpace(bits))
		if err != nil || n < 0 || n > 128 {
			return nil, fmt.Errorf("filter: ip6mask %q: prefix length must be 0 to 128", s)
		}
		return &AddrMask{v6: true, prefix: netip.PrefixFrom(a, n).Masked()}, nil
	}
	fields, err := parseIP6Range(fixSevenGroups(s))
	if err != nil {
		return nil, fmt.Errorf("filter: ip6mask %q: %v", s, err)
	}
	return &AddrMask{v6: true, fields: fields}, nil
}

// fixSevenGroups appends a zero group to an address of 7 groups without
// "::" (the spec's examples).
func fixSevenGroups(s string) string {
	if !strings.Contains(s, "::") && !strings.Contains(s, ".") && strings.Count(s, ":") == 6 {
		return s + ":0"
	}
	return s
}

func parseIP6Range(s string) ([]field, error) {
	head, tail, compressed := strings.Cut(s, "::")
	if strings.Contains(tail, "::") {
		return nil, fmt.Errorf("more than one \"::\"")
	}
	groups := func(part string, isTail bool) ([]field, int, error) {
		var fs []field
		bits := 0
		if part == "" {
			return nil, 0, nil
		}
		ps := strings.Split(part, ":")
		for i, p := range ps {
			if strings.Contains(p, ".") {
				if i != len(ps)-1 || (!isTail && compressed) {
					return nil, 0, fmt.Errorf("embedded IPv4 address must come last")
				}
				octets := strings.Split(p, ".")
				if len(octets) != 4 {
					return nil, 0, fmt.Errorf("bad embedded IPv4 address %q", p)
				}
				for _, o := range octets {
					lo, hi, err := parseRange(o, 10, 255)
					if err != nil {
						return nil, 0, err
					}
					fs = append(fs, field{width: 8, lo: lo, hi: hi})
					bits += 8
				}
				continue
			}
			if p == "" || len(strings.TrimSpace(strings.SplitN(p, "-", 2)[0])) > 4 {
				return nil, 0, fmt.Errorf("bad group %q", p)
			}
			lo, hi, err := parseRange(p, 16, 0xffff)
			if err != nil {
				return nil, 0, err
			}
			fs = append(fs, field{width: 16, lo: lo, hi: hi})
			bits += 16
		}
		return fs, bits, nil
	}
	hf, hb, err := groups(head, !compressed)
	if err != nil {
		return nil, err
	}
	tf, tb, err := groups(tail, true)
	if err != nil {
		return nil, err
	}
	fs := hf
	switch {
	case compressed:
		if hb+tb > 112 {
			return nil, fmt.Errorf("too many groups")
		}
		for b := hb + tb; b < 128; b += 16 {
			fs = append(fs, field{width: 16})
		}
		fs = append(fs, tf...)
	case hb != 128:
		return nil, fmt.Errorf("want 8 groups")
	}
	off := 0
	for i := range fs {
		fs[i].off = uint8(off)
		off += int(fs[i].width)
	}
	return fs, nil
}

// Match reports whether ip matches the mask.
func (m *AddrMask) Match(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	if m.v6 {
		ip16 := netip.AddrFrom16(ip.As16())
		if m.fields == nil {
			return m.prefix.Contains(ip16)
		}
		return matchFields(m.fields, ip16.As16())
	}
	ip = ip.Unmap()
	if !ip.Is4() {
		return false
	}
	if m.fields != nil {
		return matchFields(m.fields, ip.As16())
	}
	b := ip.As4()
	a := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	return a&m.mask == m.base
}

func matchFields(fs []field, a [16]byte) bool {
	for _, f := range fs {
		var v uint16
		i := f.off / 8
		if f.width == 8 {
			v = uint16(a[i])
		} else {
			v = uint16(a[i])<<8 | uint16(a[i+1])
		}
		if v < f.lo || v > f.hi {
			return false
		}
	}
	return true
}
