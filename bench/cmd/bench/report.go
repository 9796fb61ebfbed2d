package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

const (
	sectionBegin = "<!-- bench:crawler-comparison begin (written by bench/run.sh; rerunning replaces only this section) -->"
	sectionEnd   = "<!-- bench:crawler-comparison end -->"
)

// machine describes the host: nproc, CPU model, memory.
func machine() string {
	model, mem := "?", "?"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "MemTotal:") {
				var kb int64
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(sc.Text(), "MemTotal:"), "kB")), &kb)
				mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%d CPUs (nproc), %s, %s RAM", runtime.NumCPU(), model, mem)
}

func (b *bench) report(command string) string {
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format, a...) }
	p("%s\n\n## Crawler comparison\n\n", sectionBegin)
	p("Date: %s. Machine: 2-core sandbox: %s; shared with other helpers' builds and tests, so every row\n", b.started.UTC().Format("2006-01-02 15:04 MST"), machine())
	p("records the load average when it started. Total run time: %s.\n\n", time.Since(b.started).Round(time.Second))
	p("Command: `%s` (it installs the peers with apt-get, builds trawl and the Colly crawler, maps the farm's\n", command)
	p("names in /etc/hosts for the peers that use the system resolver, restores /etc/hosts, and rewrites this section).\n")
	if b.trawlNote != "" {
		p("trawl binaries: %s\n", b.trawlNote)
	}
	p("\nWorkload: one `trawl webfarm` process per crawler (a fresh farm each time, its request log is the measurement):\n\n")
	p("    %s\n\n", b.cmds[0])
	p("%d sites, %d ordinary pages, features `%s`; robots.txt on every site (the farm's robots.txt files address\n", b.hosts, b.pages, b.features)
	p("the product token `%s`, the one token wget can match, and every crawler's User-Agent starts with it, so all\n", b.robotsAgent)
	p("crawlers obey the same groups). %d expected URLs (`trawl webfarm ... --expect`: the pages robots.txt allows,\n", b.expectedN)
	p("plus the robots.txt files). Same start URLs for everyone (the %d home pages), crawls kept to `*.farm.test`,\n", len(b.starts))
	p("per-site delay 0, total concurrency %d, per-host concurrency %d (trawl: `--workers %d`, max_pending 2 by default;\n", b.conc, b.perHost, b.conc)
	p("Colly: LimitRule Parallelism %d, Transport MaxConnsPerHost %d; Scrapy: CONCURRENT_REQUESTS %d, _PER_DOMAIN %d;\n", b.conc, b.perHost, b.conc, b.perHost)
	p("httrack: --sockets=%d, no per-host setting; wget: one request at a time; wrk: %d connections).\n", b.conc, b.conc)
	p("Time cap per crawl %s (trawl full pipeline %s).\n\n", b.capDur, b.fullCap)
	p("Columns: **pages/s** = distinct expected URLs fetched / (last response end - first request), from the farm's log;\n")
	p("**complete** = distinct expected URLs fetched / expected; **extra** = distinct URLs fetched that are not expected\n")
	p("(robots.txt disobeyed, URLs outside the contract); **dup req** = requests for a URL already fetched;\n")
	p("**CPU ms/page** = crawler process user+system CPU (getrusage of the child) per expected page fetched;\n")
	p("**CPU ms/page to last fetch** = the same, counting only the CPU spent until the crawl's last response ended\n")
	p("(sampled from /proc every 250 ms; it differs when a crawler keeps working after its last request);\n")
	p("**max RSS** = the child's peak resident set; **farm CPU** = the webfarm process's CPU per 1,000 requests.\n\n")
	p("| crawler | pages/s | complete | extra | dup req | CPU ms/page | CPU ms/page to last fetch | max RSS MiB | wall s | farm CPU s/1k req | load at start | note |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var best float64
	var bestName string
	var wrkRPS float64
	for _, r := range b.rows {
		if r.Log.Requests == 0 && !r.Ceiling {
			p("| %s | - | - | - | - | - | - | - | - | - | %s | %s |\n", r.Name, r.Load, r.Note)
			continue
		}
		farmPer := 0.0
		if r.Log.Requests > 0 {
			farmPer = r.FarmCPU.Seconds() / float64(r.Log.Requests) * 1000
		}
		if r.Ceiling {
			wrkRPS = r.WrkRPS
			p("| **wrk (ceiling)** | **%.0f** | n/a | n/a | n/a | %.3f | n/a | %d | %.0f | %.2f | %s | %s |\n",
				r.WrkRPS, r.Use.CPU.Seconds()*1000/float64(max(r.Log.Requests, 1)), r.Use.MaxRSSKB>>10, r.Use.Wall.Seconds(), farmPer, r.Load, r.Note)
			continue
		}
		pps := r.PagesPerSec()
		if !strings.HasPrefix(r.Name, "trawl") && pps > best && r.Log.Expected > 0 {
			best, bestName = pps, r.Name
		}
		p("| %s | %.0f | %.1f%% | %d | %d | %.3f | %.3f | %d | %.0f | %.2f | %s | %s |\n", r.Name, pps,
			100*float64(r.Log.Expected)/float64(max(b.expectedN, 1)), r.Log.Extra, r.Log.Requests-r.Log.Distinct,
			r.Use.CPU.Seconds()*1000/float64(max(r.Log.Expected, 1)),
			r.Use.CPUAt(r.Log.Last.Add(250*time.Millisecond)).Seconds()*1000/float64(max(r.Log.Expected, 1)), r.Use.MaxRSSKB>>10, r.Use.Wall.Seconds(), farmPer, r.Load, r.Note)
	}
	p("\n")
	for _, r := range b.rows {
		if r.Name == "trawl" && r.Log.Expected > 0 {
			pps := r.PagesPerSec()
			p("Against the goals: trawl's crawl alone ran at %.0f pages/s", pps)
			if best > 0 {
				p(", %.2fx the fastest peer (%s, %.0f pages/s; goal 2x)", pps/best, bestName, best)
			}
			if wrkRPS > 0 {
				p(", %.0f%% of the wrk ceiling (goal 30%%)", 100*pps/wrkRPS)
			}
			p(", completeness %.1f%%.\n", 100*float64(r.Log.Expected)/float64(max(b.expectedN, 1)))
			for _, o := range b.rows {
				if o.Name == "wget" && o.Log.Expected > 0 {
					at := func(x row) float64 {
						return x.Use.CPUAt(x.Log.Last.Add(250*time.Millisecond)).Seconds() * 1000 / float64(x.Log.Expected)
					}
					p("CPU per page until the last fetch: trawl %.3f ms, wget %.3f ms (goal: below wget's; whole process: %.3f and %.3f ms).\n",
						at(r), at(o), r.Use.CPU.Seconds()*1000/float64(r.Log.Expected), o.Use.CPU.Seconds()*1000/float64(o.Log.Expected))
				}
			}
			p("\n")
		}
	}
	for _, r := range b.rows {
		if len(r.Log.ExtraShown) > 0 && r.Log.Extra > 0 && !r.Ceiling {
			p("- %s's extra URLs include: `%s`\n", r.Name, strings.Join(r.Log.ExtraShown, "`, `"))
		}
	}
	p("\nExact commands (START = the %d start URLs, `starts.txt`; the farm's configuration and hosts file come from\n", len(b.starts))
	p("`trawl webfarm ... --write-config farm.xml --hosts-file farmhosts`):\n\n")
	for _, r := range b.rows {
		if r.Cmd == "" {
			continue
		}
		c := r.Cmd
		if len(c) > 1200 {
			c = c[:1200] + " ... (the start URLs)"
		}
		p("- %s: `%s`\n", r.Name, c)
	}
	if len(b.profiles) > 0 {
		p("\n### Where trawl's CPU goes\n\n")
		p("Each trawl row runs with `trawl run --cpuprofile FILE`, a CPU profile of the whole run; the timed runs above\n")
		p("are those profiled runs (pprof's sampling costs about 1%%).\n\n")
		for _, pr := range b.profiles {
			p("#### %s\n\n%s\n\n", pr.Name, pr.Header)
			p("By area (flat CPU grouped by package):\n\n%s\n", pr.byPackageTable(14))
			p("`%s` (top):\n\n", pr.Cmd)
			for _, l := range strings.Split(pr.Top, "\n") {
				p("    %s\n", l)
			}
			if pr.Cum != "" {
				p("\ntrawl's own functions by cumulative CPU (`-top -cum -focus github.com/trawl/trawl`):\n\n")
				for i, l := range strings.Split(pr.Cum, "\n") {
					if i > 22 {
						break
					}
					p("    %s\n", l)
				}
			}
			p("\n")
		}
	}
	if len(b.memRows) > 0 {
		p("### Memory against discovered URLs\n\n")
		p("A source site in the bench process serves pages that each link to %d never-served URLs spread over %d hosts;\n", b.memLinks, b.memHosts)
		p("those hosts resolve to a tarpit address that accepts connections and never answers, so the URLs are discovered\n")
		p("and queued but not fetched (trawl lets 10 sites crawl one IP and blocks the rest; Colly's requests wait in\n")
		p("its LimitRule). robots.txt is off in this run (a robots.txt request to the tarpit would hang Colly's link\n")
		p("callback). The source serves pages up to a budget; at each point the crawler has fetched the budget and been\n")
		p("idle for 2 s when its VmRSS (and VmHWM, the peak) is read from /proc. Crawlers are stopped above %d MiB.\n\n", b.memCapMiB)
		p("| crawler |")
		for _, pt := range b.memPoints {
			p(" %d URLs |", pt)
		}
		p(" note |\n|---|")
		for range b.memPoints {
			p("---|")
		}
		p("---|\n")
		for _, mr := range b.memRows {
			p("| %s |", mr.Crawler)
			var notes []string
			for i := range b.memPoints {
				if i >= len(mr.Points) {
					p(" - |")
					continue
				}
				pt := mr.Points[i]
				p(" %d MiB (peak %d) |", pt.RSSKB>>10, pt.HWMKB>>10)
				if pt.Note != "" {
					notes = append(notes, pt.Note)
				}
			}
			if mr.Note != "" {
				notes = append(notes, mr.Note)
			}
			p(" %s |\n", strings.Join(notes, "; "))
		}
		p("\n")
		for _, mr := range b.memRows {
			p("- %s: `%s`\n", mr.Crawler, mr.Cmd)
		}
		p("\n")
	}
	p("%s\n", sectionEnd)
	return w.String()
}

// writeSection replaces the section between the markers in path, or
// appends it.
func writeSection(path, section string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	s := string(old)
	if i := strings.Index(s, sectionBegin); i >= 0 {
		if j := strings.Index(s[i:], sectionEnd); j >= 0 {
			rest := s[i+j+len(sectionEnd):]
			rest = strings.TrimPrefix(rest, "\n")
			return os.WriteFile(path, []byte(s[:i]+section+rest), 0o644)
		}
	}
	// No section yet: append, so lines other writers append meanwhile stay.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	sep := "\n"
	if s == "" || strings.HasSuffix(s, "\n\n") {
		sep = ""
	} else if !strings.HasSuffix(s, "\n") {
		sep = "\n\n"
	}
	if _, err := f.WriteString(sep + section); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
