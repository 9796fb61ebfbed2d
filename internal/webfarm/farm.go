package webfarm

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

// Farm is a synthetic web. Its content is a pure function of its Config,
// the URL and the refresh cycle; serving it (Start, Run) only adds the
// request log.
type Farm struct {
	cfg   Config
	seed  uint64
	hosts []hostInfo
	// byName maps a host name to its index.
	byName map[string]int
	// byAddr maps an address to the indexes of its hosts.
	byAddr map[netip.Addr][]int
	// prefix holds "http://name:port" per host once the port is known.
	prefix atomic.Pointer[[]string]
	port   atomic.Int32
	cycle  atomic.Int64
	// filler is the repeated text of the large page.
	filler []byte
	log    *requestLog

	srvMu sync.Mutex
	srv   *server
}

type hostInfo struct {
	name string
	addr netip.Addr
	feat Features
}

// Host describes one site of the farm.
type Host struct {
	Index    int
	Name     string
	Addr     netip.Addr
	Features Features
}

// New builds a farm from cfg. It does not listen yet.
func New(cfg Config) (*Farm, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	f := &Farm{
		cfg:    cfg,
		seed:   mix64(uint64(cfg.Seed)),
		byName: make(map[string]int, cfg.Hosts),
		byAddr: make(map[netip.Addr][]int, cfg.Hosts),
	}
	feats := cfg.hostFeatureList()
	own := cfg.Hosts - cfg.SharedIPHosts
	width := len(strconv.Itoa(cfg.Hosts - 1))
	if width < 4 {
		width = 4
	}
	for i := 0; i < cfg.Hosts; i++ {
		a := i
		if i >= own {
			a = i - own
		}
		addr := netip.AddrFrom4([4]byte{127, 1, byte(a / 254), byte(a%254 + 1)})
		num := strconv.Itoa(i)
		for len(num) < width {
			num = "0" + num
		}
		name := "site" + num + "." + cfg.Domain
		f.hosts = append(f.hosts, hostInfo{name: name, addr: addr, feat: feats[i]})
		f.byName[name] = i
		f.byAddr[addr] = append(f.byAddr[addr], i)
	}
	f.setPort(cfg.Port)
	f.filler = makeFiller(f.seed)
	f.log = newRequestLog(cfg.LogCap, cfg.LogWriter)
	return f, nil
}

func (f *Farm) setPort(p int) {
	f.port.Store(int32(p))
	pre := make([]string, len(f.hosts))
	for i, h := range f.hosts {
		pre[i] = "http://" + h.name
		if p != 80 {
			pre[i] += ":" + strconv.Itoa(p)
		}
	}
	f.prefix.Store(&pre)
}

// Port is the port every host listens on (0 until Start picks one when
// Config.Port is 0).
func (f *Farm) Port() int { return int(f.port.Load()) }

// Config returns the farm's configuration, defaults filled in.
func (f *Farm) Config() Config { return f.cfg }

// Hosts lists the sites of the farm.
func (f *Farm) Hosts() []Host {
	out := make([]Host, len(f.hosts))
	for i, h := range f.hosts {
		out[i] = Host{Index: i, Name: h.name, Addr: h.addr, Features: h.feat}
	}
	return out
}

// Lookup returns the address of a host name of the farm.
func (f *Farm) Lookup(name string) (netip.Addr, bool) {
	i, ok := f.byName[lowerASCII(name)]
	if !ok {
		return netip.Addr{}, false
	}
	return f.hosts[i].addr, true
}

// StartURLs returns the home page of every host, the default start URIs.
func (f *Farm) StartURLs() []string {
	pre := *f.prefix.Load()
	out := make([]string, len(pre))
	for i, p := range pre {
		out[i] = p + "/"
	}
	return out
}

// SetCycle switches the farm to refresh cycle n (n >= 0): pages of hosts
// with FeatChanges change, appear and disappear deterministically per
// cycle. Cycle 0 is the initial content.
func (f *Farm) SetCycle(n int) {
	if n < 0 {
		n = 0
	}
	f.cycle.Store(int64(n))
}

// Cycle returns the current refresh cycle.
func (f *Farm) Cycle() int { return int(f.cycle.Load()) }

// HostsFile returns the farm's host names in /etc/hosts format.
func (f *Farm) HostsFile() []byte {
	b := []byte("# trawl webfarm: " + strconv.Itoa(len(f.hosts)) + " hosts, seed " +
		strconv.FormatInt(f.cfg.Seed, 10) + "\n")
	for _, h := range f.hosts {
		b = append(b, h.addr.String()...)
		b = append(b, '\t')
		b = append(b, h.name...)
		b = append(b, '\n')
	}
	return b
}

// WriteHostsFile writes HostsFile to path.
func (f *Farm) WriteHostsFile(path string) error {
	if err := os.WriteFile(path, f.HostsFile(), 0o644); err != nil {
		return fmt.Errorf("webfarm: %w", err)
	}
	return nil
}

// ReadHostsFile parses an /etc/hosts-format file into a name -> address
// map (names lower-cased; comments and blank lines ignored; the first
// address given for a name wins).
func ReadHostsFile(path string) (map[string]netip.Addr, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("webfarm: %w", err)
	}
	defer fh.Close()
	out := map[string]netip.Addr{}
	sc := bufio.NewScanner(fh)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if i := indexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		fields := splitFields(s)
		if len(fields) == 0 {
			continue
		}
		addr, err := netip.ParseAddr(fields[0])
		if err != nil {
			return nil, fmt.Errorf("webfarm: %s:%d: bad address %q", path, line, fields[0])
		}
		for _, name := range fields[1:] {
			name = lowerASCII(name)
			if _, dup := out[name]; !dup {
				out[name] = addr
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("webfarm: %s: %w", path, err)
	}
	return out, nil
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func splitFields(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\t' || s[i] == '\r' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
