package main

import (
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// profile is a summarised CPU profile of one trawl run.
type profile struct {
	Name      string
	Cmd       string
	Header    string     // pprof's Duration/Total samples line
	Top       string     // pprof -top, first lines
	Cum       string     // pprof -top -cum of trawl's own code, first lines
	ByPackage []pkgShare // flat samples grouped by package
	Total     float64
}

type pkgShare struct {
	Pkg     string
	Seconds float64
}

func (b *bench) summarizeProfile(name, bin, path string, r row) profile {
	p := profile{Name: name, Cmd: "go tool pprof -top " + bin + " " + path}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=100000", bin, path).Output()
	if err != nil {
		p.Top = "pprof failed: " + err.Error()
		return p
	}
	lines := strings.Split(string(out), "\n")
	byPkg := map[string]float64{}
	var top []string
	inTable := false
	for _, l := range lines {
		if strings.HasPrefix(l, "Duration:") {
			p.Header = strings.TrimSpace(l)
		}
		if strings.Contains(l, "flat%") {
			inTable = true
			top = append(top, l)
			continue
		}
		if !inTable {
			continue
		}
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		sec := pprofSeconds(f[0])
		fn := strings.Join(f[5:], " ")
		byPkg[pkgOf(fn)] += sec
		p.Total += sec
		if len(top) <= 25 {
			top = append(top, l)
		}
	}
	p.Top = strings.Join(top, "\n")
	for k, v := range byPkg {
		p.ByPackage = append(p.ByPackage, pkgShare{k, v})
	}
	sort.Slice(p.ByPackage, func(i, j int) bool { return p.ByPackage[i].Seconds > p.ByPackage[j].Seconds })
	if cum, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=30",
		"-focus", "github.com/trawl/trawl", bin, path).Output(); err == nil {
		var keep []string
		in := false
		for _, l := range strings.Split(string(cum), "\n") {
			if strings.Contains(l, "flat%") {
				in = true
			}
			if in && strings.TrimSpace(l) != "" {
				keep = append(keep, l)
			}
		}
		p.Cum = strings.Join(keep, "\n")
	}
	return p
}

// pprofSeconds parses "1.23s", "450ms", "0".
func pprofSeconds(s string) float64 {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "ms"):
		s, mult = strings.TrimSuffix(s, "ms"), 1e-3
	case strings.HasSuffix(s, "us"):
		s, mult = strings.TrimSuffix(s, "us"), 1e-6
	case strings.HasSuffix(s, "s"):
		s = strings.TrimSuffix(s, "s")
	case strings.HasSuffix(s, "min"):
		s, mult = strings.TrimSuffix(s, "min"), 60
	}
	v, _ := strconv.ParseFloat(s, 64)
	return v * mult
}

// pkgOf groups a pprof function name into an area: trawl's packages by
// name, the runtime's GC and scheduler, syscalls, the rest by module.
func pkgOf(fn string) string {
	fn = strings.TrimSuffix(fn, " (inline)")
	switch {
	case strings.HasPrefix(fn, "github.com/trawl/trawl/"):
		rest := strings.TrimPrefix(fn, "github.com/trawl/trawl/")
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			rest = rest[:i]
		}
		return "trawl/" + rest
	case strings.HasPrefix(fn, "runtime.gc") || strings.HasPrefix(fn, "runtime.scan") ||
		strings.HasPrefix(fn, "runtime.mark") || strings.Contains(fn, "wbBuf") || strings.HasPrefix(fn, "runtime.greyobject") ||
		strings.HasPrefix(fn, "runtime.findObject") || strings.HasPrefix(fn, "runtime.(*gcWork)") ||
		strings.HasPrefix(fn, "runtime.(*mspan)") || strings.HasPrefix(fn, "runtime.sweep") ||
		strings.HasPrefix(fn, "runtime.(*sweepLocked)") || strings.HasPrefix(fn, "runtime.bulkBarrier") ||
		strings.HasPrefix(fn, "gcWriteBarrier") || strings.HasPrefix(fn, "runtime.typePointers") ||
		strings.HasPrefix(fn, "runtime.tryDeferToSpanScan") || strings.HasPrefix(fn, "internal/runtime/gc"):
		return "runtime: GC"
	case strings.HasPrefix(fn, "runtime.malloc") || strings.HasPrefix(fn, "runtime.nextFree") ||
		strings.HasPrefix(fn, "runtime.(*mcache)") || strings.HasPrefix(fn, "runtime.(*mcentral)") ||
		strings.HasPrefix(fn, "runtime.(*mheap)") || strings.HasPrefix(fn, "runtime.memclr") ||
		strings.HasPrefix(fn, "runtime.spanClass") || strings.HasPrefix(fn, "runtime.heapArenaOf"):
		return "runtime: allocation"
	case strings.Contains(fn, "syscall") || strings.HasPrefix(fn, "runtime.futex") || strings.HasPrefix(fn, "runtime.epoll") ||
		strings.HasPrefix(fn, "runtime.usleep") || strings.HasPrefix(fn, "runtime.nanotime") || strings.HasPrefix(fn, "runtime.cgocall"):
		return "syscalls (network, disk, futex)"
	case strings.HasPrefix(fn, "runtime.memmove") || strings.HasPrefix(fn, "cmpbody") || strings.HasPrefix(fn, "memeqbody") ||
		strings.HasPrefix(fn, "aeshash") || strings.HasPrefix(fn, "indexbytebody"):
		return "runtime: memmove/compare/hash"
	case strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/runtime/"):
		return "runtime: scheduler, maps, other"
	}
	// module path: up to the package, without the function.
	p := fn
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		if j := strings.IndexByte(p[i:], '.'); j >= 0 {
			p = p[:i+j]
		}
	} else if j := strings.IndexByte(p, '.'); j >= 0 {
		p = p[:j]
	}
	for _, m := range []string{"github.com/cockroachdb/pebble", "github.com/blevesearch", "golang.org/x/net/html"} {
		if strings.HasPrefix(p, m) {
			return m
		}
	}
	if strings.HasPrefix(p, "github.com/golang/snappy") || strings.HasPrefix(p, "compress/") {
		return "compression (snappy, gzip)"
	}
	return p
}

func (p profile) byPackageTable(n int) string {
	var b strings.Builder
	b.WriteString("| area | CPU s | share |\n|---|---|---|\n")
	for i, s := range p.ByPackage {
		if i >= n {
			break
		}
		fmt.Fprintf(&b, "| %s | %.2f | %.1f%% |\n", s.Pkg, s.Seconds, 100*s.Seconds/max(p.Total, 1e-9))
	}
	return b.String()
}
