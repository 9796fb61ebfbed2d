package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The memory-scale run. A source site (src.mem.test) serves pages
// /p/<i>.html; page i links to source pages 4i+1..4i+4 and to memLinks
// URLs on memHosts other hosts (h00000.mem.test, ...). Those hosts all
// resolve to one "tarpit" address that accepts connections and never
// answers, so the URLs are discovered and queued but never fetched: trawl
// lets at most 10 sites crawl one IP (MS-FSCMT §3.1.5.21) and blocks the
// others for 30 minutes; Colly's requests wait on its LimitRule. The source
// serves pages only up to a budget; at each point the budget is raised to
// point/memLinks pages, and once the crawler has fetched them and gone idle
// its resident memory is read from /proc.

const (
	memSourceAddr = "127.5.0.1"
	memTarpitAddr = "127.5.0.2"
	memPort       = 18091
)

type memRow struct {
	Crawler  string
	Points   []memPoint
	Note     string
	Cmd      string
	Exceeded bool
}

type memPoint struct {
	Discovered int
	RSSKB      int64
	HWMKB      int64
	Elapsed    time.Duration
	Reached    bool
	Note       string
}

// memSource is the source site plus the tarpit.
type memSource struct {
	links, hosts int
	mu           sync.Mutex
	budget       int // pages with index < budget are served
	served       map[int]bool
	closed       bool
	srv          *http.Server
	tarpit       net.Listener
	conns        []net.Conn
}

func newMemSource(links, hosts int) *memSource {
	s := &memSource{links: links, hosts: hosts, served: map[int]bool{}}
	return s
}

func (s *memSource) start() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(memSourceAddr, strconv.Itoa(memPort)))
	if err != nil {
		return err
	}
	tp, err := net.Listen("tcp", net.JoinHostPort(memTarpitAddr, strconv.Itoa(memPort)))
	if err != nil {
		ln.Close()
		return err
	}
	s.tarpit = tp
	go func() {
		for {
			c, err := tp.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			go io.Copy(io.Discard, c) // read requests, never answer
		}
	}()
	s.srv = &http.Server{Handler: s}
	go s.srv.Serve(ln)
	return nil
}

func (s *memSource) close() {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	s.srv.Close()
	s.tarpit.Close()
	for _, c := range conns {
		c.Close()
	}
}

func (s *memSource) setBudget(pages int) {
	s.mu.Lock()
	s.budget = pages
	s.mu.Unlock()
}

// servedBelow counts distinct pages served with index < n.
func (s *memSource) servedBelow(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := 0
	for i := range s.served {
		if i < n {
			c++
		}
	}
	return c
}

func (s *memSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if !strings.HasPrefix(p, "/p/") || !strings.HasSuffix(p, ".html") {
		http.NotFound(w, r)
		return
	}
	i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, "/p/"), ".html"))
	if err != nil || i < 0 {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	if i >= s.budget || s.closed {
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	s.served[i] = true
	budget := s.budget
	s.mu.Unlock()
	var b strings.Builder
	b.Grow(64 * s.links)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><title>source %d</title></head><body>\n<p>", i)
	for c := 4*i + 1; c <= 4*i+4 && c < budget; c++ {
		fmt.Fprintf(&b, "<a href=\"/p/%d.html\">next %d</a> ", c, c)
	}
	b.WriteString("</p>\n<ul>\n")
	for k := 0; k < s.links; k++ {
		j := i*s.links + k
		fmt.Fprintf(&b, "<li><a href=\"http://h%05d.mem.test:%d/u/%d.html\">u%d</a></li>\n", j%s.hosts, memPort, j, j)
	}
	b.WriteString("</ul></body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, b.String())
}

const memTrawlXML = `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
    <DomainSpecification name="memscale">
        <attrib name="start_uris" type="list-string">
            <member> http://src.mem.test:%d/p/0.html </member>
        </attrib>
        <attrib name="delay" type="real"> 0 </attrib>
        <attrib name="fetch_timeout" type="integer"> 3600 </attrib>
        <attrib name="robots" type="boolean"> no </attrib>
        <attrib name="max_doc" type="integer"> 100000000 </attrib>
        <attrib name="headers" type="list-string">
            <member> User-Agent: wget (trawl bench memory scale) </member>
        </attrib>
        <section name="crawlmode">
            <attrib name="mode" type="string"> FULL </attrib>
            <attrib name="fwdlinks" type="boolean"> yes </attrib>
            <attrib name="fwdredirects" type="boolean"> no </attrib>
            <attrib name="reset_level" type="boolean"> yes </attrib>
        </section>
        <section name="include_domains">
            <attrib name="suffix" type="list-string">
                <member> .mem.test </member>
            </attrib>
        </section>
    </DomainSpecification>
</CrawlerConfig>
`

func (b *bench) runMemScale(ctx context.Context) error {
	cfg := filepath.Join(b.work, "mem.xml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(memTrawlXML, memPort)), 0o644); err != nil {
		return err
	}
	hostsAll := []string{memSourceAddr + "\tsrc.mem.test"}
	for h := 0; h < b.memHosts; h++ {
		hostsAll = append(hostsAll, fmt.Sprintf("%s\th%05d.mem.test", memTarpitAddr, h))
	}
	hf := filepath.Join(b.work, "memhosts")
	if err := writeLines(hf, hostsAll); err != nil {
		return err
	}
	hfSrc := filepath.Join(b.work, "memhosts.src")
	if err := writeLines(hfSrc, hostsAll[:1]); err != nil {
		return err
	}
	srcStart := filepath.Join(b.work, "memstart.txt")
	if err := writeLines(srcStart, []string{fmt.Sprintf("http://src.mem.test:%d/p/0.html", memPort)}); err != nil {
		return err
	}
	bin := b.trawlCrawl
	if bin == "" {
		bin = b.trawl
	}
	data := filepath.Join(b.work, "mem.data")
	b.memRows = append(b.memRows, b.memRun(ctx, "trawl", func() *exec.Cmd {
		_ = os.RemoveAll(data)
		return exec.Command(bin, append([]string{"run", "--config", cfg, "--hosts-file", hf, "--data", data,
			"--listen", "off", "--progress", "off", "--workers", strconv.Itoa(b.conc)}, strings.Fields(b.trawlCrawlArgs)...)...)
	}))
	_ = os.RemoveAll(data)
	if b.colly != "" {
		b.memRows = append(b.memRows, b.memRun(ctx, "colly", func() *exec.Cmd {
			return exec.Command(b.colly, "--start", srcStart, "--hosts-file", hfSrc, "--allow-all-hosts",
				"--robots=false", "--resolve-suffix", ".mem.test", "--resolve-addr", memTarpitAddr,
				"--priority-host", "src.mem.test*", "--parallel", strconv.Itoa(b.conc), "--per-host", strconv.Itoa(b.perHost),
				"--timeout", "1h")
		}))
	}
	return nil
}

// memRun measures one crawler at every point, a fresh process and source
// for each.
func (b *bench) memRun(ctx context.Context, name string, newCmd func() *exec.Cmd) memRow {
	mr := memRow{Crawler: name}
	for _, pt := range b.memPoints {
		cmd := newCmd()
		mr.Cmd = shellJoin(cmd.Args)
		p := b.memPoint(ctx, name, pt, cmd)
		mr.Points = append(mr.Points, p)
		fmt.Fprintf(os.Stderr, "bench: mem %s: %d discovered in %.0fs: rss %d MiB (peak %d MiB) %s\n",
			name, p.Discovered, p.Elapsed.Seconds(), p.RSSKB>>10, p.HWMKB>>10, p.Note)
		if !p.Reached {
			mr.Exceeded = true
			break
		}
	}
	return mr
}

// memPoint runs cmd against a source of point/memLinks pages until it has
// fetched them all and gone idle, and reads its memory.
func (b *bench) memPoint(ctx context.Context, name string, pt int, cmd *exec.Cmd) memPoint {
	pages := (pt + b.memLinks - 1) / b.memLinks
	p := memPoint{Discovered: pages*b.memLinks + pages}
	src := newMemSource(b.memLinks, b.memHosts)
	src.setBudget(pages)
	if err := src.start(); err != nil {
		p.Note = "source: " + err.Error()
		return p
	}
	defer src.close()
	lf, err := os.Create(filepath.Join(b.work, fmt.Sprintf("mem.%s.%d.out", name, pt)))
	if err != nil {
		p.Note = err.Error()
		return p
	}
	defer lf.Close()
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		p.Note = err.Error()
		return p
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		select {
		case err := <-done:
			done <- err
		default:
			_ = stopProcess(cmd, done)
		}
	}()
	pid := cmd.Process.Pid
	deadline := start.Add(b.memTimeout)
	var lastCPU time.Duration
	idle := 0
	for {
		select {
		case <-ctx.Done():
			p.Note = "interrupted"
			return p
		case err := <-done:
			p.Note = fmt.Sprintf("exited early: %v", err)
			done <- err
			return p
		case <-time.After(500 * time.Millisecond):
		}
		rss, hwm, _ := procStatus(pid)
		p.RSSKB, p.HWMKB = rss, hwm
		p.Elapsed = time.Since(start)
		if rss > b.memCapMiB<<10 {
			p.Note = fmt.Sprintf("passed the %d MiB cap after %.0f s with %d of %d source pages fetched",
				b.memCapMiB, p.Elapsed.Seconds(), src.servedBelow(pages), pages)
			return p
		}
		cpu, _ := procCPU(pid)
		if src.servedBelow(pages) >= pages && cpu-lastCPU < 25*time.Millisecond {
			idle++
		} else {
			idle = 0
		}
		lastCPU = cpu
		if idle >= 4 { // 2 s without work after the last page
			p.Reached = true
			return p
		}
		if time.Now().After(deadline) {
			p.Note = fmt.Sprintf("not done after %s (%d of %d source pages fetched)", b.memTimeout, src.servedBelow(pages), pages)
			return p
		}
	}
}
