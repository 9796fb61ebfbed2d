package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// row is one crawler's result.
type row struct {
	Name    string
	Ceiling bool // wrk: no crawler work
	Log     crawlLog
	Use     usage
	FarmCPU time.Duration
	WrkRPS  float64
	Load    string
	Note    string
	Cmd     string
}

// PagesPerSec is distinct expected pages per second of crawl activity.
func (r row) PagesPerSec() float64 {
	if r.Ceiling {
		return r.WrkRPS
	}
	if s := r.Log.Span().Seconds(); s > 0 {
		return float64(r.Log.Expected) / s
	}
	return 0
}

func execCommand(name string, args ...string) *exec.Cmd {
	return exec.Command(name, args...)
}

// crawl runs one crawler against a fresh farm and records its row.
func (b *bench) crawl(ctx context.Context, name string, cmd *exec.Cmd, capDur time.Duration, note string) (row, error) {
	logPath := filepath.Join(b.work, name+".requests.jsonl")
	f, err := b.startFarm(ctx, logPath)
	if err != nil {
		return row{}, err
	}
	r := row{Name: name, Load: loadAvg(), Note: note, Cmd: shellJoin(cmd.Args)}
	r.Use = runMeasured(ctx, cmd, capDur, filepath.Join(b.work, name+".out"))
	r.FarmCPU = f.stop()
	if r.Use.Err != nil {
		r.Note = strings.TrimSpace(r.Note + "; exit: " + r.Use.Err.Error())
	}
	if r.Use.TimedOut {
		r.Note = strings.TrimSpace(fmt.Sprintf("%s; stopped at the %s cap", r.Note, capDur))
	}
	if r.Log, err = analyzeLog(logPath, b.expected); err != nil {
		return r, err
	}
	if os.Getenv("BENCH_KEEP_LOGS") == "" {
		_ = os.Remove(logPath)
	}
	b.rows = append(b.rows, r)
	fmt.Fprintf(os.Stderr, "bench: %s: %d/%d expected URLs, %d requests, %.0f pages/s, cpu %.1fs, maxrss %d MiB%s\n",
		name, r.Log.Expected, b.expectedN, r.Log.Requests, r.PagesPerSec(), r.Use.CPU.Seconds(), r.Use.MaxRSSKB>>10,
		map[bool]string{true: " (" + r.Note + ")", false: ""}[r.Note != ""])
	return r, nil
}

func (b *bench) trawlRun(bin, extra, data string) *exec.Cmd {
	args := []string{"run", "--config", b.config, "--hosts-file", b.hostsFile, "--once", "--data", data,
		"--listen", "off", "--progress", "off", "--workers", strconv.Itoa(b.conc)}
	args = append(args, strings.Fields(extra)...)
	return exec.Command(bin, args...)
}

func (b *bench) runTrawlCrawl(ctx context.Context) error {
	bin := b.trawlCrawl
	if bin == "" {
		bin = b.trawl
	}
	return b.runTrawl(ctx, "trawl", bin, b.trawlCrawlArgs, b.capDur, "crawl alone")
}

func (b *bench) runTrawlFull(ctx context.Context) error {
	if b.trawlFull == "" {
		return nil
	}
	return b.runTrawl(ctx, "trawl-full", b.trawlFull, b.trawlFullArgs, b.fullCap, "full pipeline")
}

func (b *bench) runTrawl(ctx context.Context, name, bin, extra string, capDur time.Duration, label string) error {
	data := filepath.Join(b.work, name+".data")
	_ = os.RemoveAll(data)
	prof := filepath.Join(b.work, name+".cpu.pprof")
	cmd := b.trawlRun(bin, strings.TrimSpace(extra+" --cpuprofile "+prof), data)
	_ = os.Remove(prof)
	r, err := b.crawl(ctx, name, cmd, capDur, label)
	if err != nil {
		return err
	}
	_ = os.RemoveAll(data)
	if st, err := os.Stat(prof); err == nil && st.Size() > 0 {
		b.profiles = append(b.profiles, b.summarizeProfile(name, bin, prof, r))
	}
	return nil
}

func (b *bench) runColly(ctx context.Context) error {
	if b.colly == "" {
		return nil
	}
	cmd := exec.Command(b.colly, "--start", filepath.Join(b.work, "starts.txt"), "--hosts-file", b.hostsFile,
		"--parallel", strconv.Itoa(b.conc), "--per-host", strconv.Itoa(b.perHost),
		"--user-agent", b.robotsAgent+" (colly; trawl bench)")
	_, err := b.crawl(ctx, "colly", cmd, b.capDur, "")
	return err
}

func (b *bench) runWget(ctx context.Context) error {
	dir := filepath.Join(b.work, "wget.out.d")
	_ = os.RemoveAll(dir)
	// wget matches robots.txt groups with the fixed token "wget"; it is
	// sequential (one request at a time), so --concurrency does not apply.
	cmd := exec.Command("wget", "--recursive", "--level=inf", "--span-hosts", "--domains=farm.test",
		"-e", "robots=on", "--quiet", "--directory-prefix", dir, "--user-agent", "wget (trawl bench)",
		"--input-file", filepath.Join(b.work, "starts.txt"))
	_, err := b.crawl(ctx, "wget", cmd, b.capDur, "sequential")
	_ = os.RemoveAll(dir)
	return err
}

func (b *bench) runHttrack(ctx context.Context) error {
	dir := filepath.Join(b.work, "httrack.out.d")
	_ = os.RemoveAll(dir)
	args := []string{"--quiet", "--path", dir, "--sockets=" + strconv.Itoa(b.conc),
		"--disable-security-limits", "--connection-per-second=10000", "--robots=2", "--keep-alive",
		"--user-agent", b.robotsAgent + " (httrack; trawl bench)", "--advanced-maxlinks=10000000",
		"--depth=9999", "--ext-depth=0", "--cache=0", "--index=0", "--build-top-index=0", "--max-time=" + strconv.Itoa(int(b.capDur.Seconds())),
		"-*", "+*.farm.test*"}
	args = append(args, b.starts...)
	cmd := exec.Command("httrack", args...)
	_, err := b.crawl(ctx, "httrack", cmd, b.capDur+30*time.Second, "per-host limit: none (httrack has no such setting)")
	_ = os.RemoveAll(dir)
	return err
}

func (b *bench) runScrapy(ctx context.Context) error {
	if b.scrapySpider == "" {
		return nil
	}
	args := []string{"runspider", b.scrapySpider, "-a", "start_file=" + filepath.Join(b.work, "starts.txt"),
		"-s", "ROBOTSTXT_OBEY=True", "-s", "CONCURRENT_REQUESTS=" + strconv.Itoa(b.conc),
		"-s", "CONCURRENT_REQUESTS_PER_DOMAIN=" + strconv.Itoa(b.perHost), "-s", "DOWNLOAD_DELAY=0",
		"-s", "USER_AGENT=" + b.robotsAgent + " (scrapy; trawl bench)", "-s", "LOG_LEVEL=INFO",
		"-s", "TELNETCONSOLE_ENABLED=False", "-s", "CLOSESPIDER_TIMEOUT=" + strconv.Itoa(int(b.capDur.Seconds()))}
	cmd := exec.Command("/usr/bin/scrapy", args...)
	_, err := b.crawl(ctx, "scrapy", cmd, b.capDur+30*time.Second, "")
	return err
}

// runWrk replays the expected URLs: thread i talks to farm host i's own
// address and cycles through that host's expected paths.
func (b *bench) runWrk(ctx context.Context) error {
	byHost := map[string][]string{}
	for u := range b.expected {
		rest := strings.TrimPrefix(u, "http://")
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			continue
		}
		h := rest[:i]
		byHost[h] = append(byHost[h], rest[i:])
	}
	threads := min(b.wrkThreads, len(b.farmNames), b.conc)
	var hostsLua strings.Builder
	for i := 0; i < threads; i++ {
		hp := fmt.Sprintf("%s:%d", b.farmNames[i], b.port)
		pf := filepath.Join(b.work, fmt.Sprintf("wrk.paths.%d", i))
		if err := writeLines(pf, byHost[hp]); err != nil {
			return err
		}
		fmt.Fprintf(&hostsLua, "  {ip=%q, host=%q, paths=%q},\n", b.farmIPs[i], hp, pf)
	}
	script := filepath.Join(b.work, "replay.lua")
	lua := fmt.Sprintf(wrkLua, hostsLua.String(), b.port)
	if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("wrk", "--threads", strconv.Itoa(threads), "--connections", strconv.Itoa(b.conc),
		"--duration", fmt.Sprintf("%ds", int(b.wrkDur.Seconds())), "--script", script,
		fmt.Sprintf("http://%s:%d/", b.farmIPs[0], b.port))
	r, err := b.crawl(ctx, "wrk", cmd, b.wrkDur+30*time.Second, "")
	if err != nil {
		return err
	}
	out, err := os.ReadFile(filepath.Join(b.work, "wrk.out"))
	if err != nil {
		return err
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "Requests/sec:" {
			r.WrkRPS, _ = strconv.ParseFloat(f[1], 64)
		}
	}
	r.Ceiling = true
	r.Note = fmt.Sprintf("%d threads, one farm host each, %d connections in all", threads, b.conc)
	b.rows[len(b.rows)-1] = r
	return nil
}

// wrkLua is the replay script: setup gives each thread one host's address
// and path file; request cycles through the paths with that Host header
// and the Accept-Encoding trawl sends.
const wrkLua = `-- generated by bench: replay the webfarm's expected URLs
local hosts = {
%s}
local n = 0
function setup(thread)
  n = n + 1
  local h = hosts[n]
  thread.addr = wrk.lookup(h.ip, "%d")[1]
  thread:set("hosthdr", h.host)
  thread:set("pathfile", h.paths)
end
function init(args)
  paths = {}
  for line in io.lines(pathfile) do paths[#paths + 1] = line end
  i = 1
  hdrs = {["Host"] = hosthdr, ["Accept-Encoding"] = "gzip, deflate"}
end
function request()
  local p = paths[i]
  i = i %% #paths + 1
  return wrk.format("GET", p, hdrs)
end
`
