package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// farmArgs are the webfarm's flags shared by --expect, --write-config and
// serving, so the expected URL set is the served web's.
func (b *bench) farmArgs() []string {
	return []string{"webfarm", "--hosts", strconv.Itoa(b.hosts), "--pages", strconv.Itoa(b.pages),
		"--port", strconv.Itoa(b.port), "--features", b.features, "--robots-agent", b.robotsAgent}
}

// farm is a running `trawl webfarm` process.
type farm struct {
	cmd  *exec.Cmd
	done chan error
	log  string
}

// startFarm starts a fresh farm logging every request to logPath and waits
// until it accepts connections.
func (b *bench) startFarm(ctx context.Context, logPath string) (*farm, error) {
	_ = os.Remove(logPath)
	args := append(b.farmArgs(), "--log", logPath, "--log-cap", "1")
	cmd := exec.Command(b.trawl, args...)
	out, err := os.Create(logPath + ".out")
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f := &farm{cmd: cmd, done: make(chan error, 1), log: logPath}
	go func() { f.done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(b.farmIPs[0], strconv.Itoa(b.port)), time.Second)
		if err == nil {
			c.Close()
			return f, nil
		}
		select {
		case err := <-f.done:
			return nil, fmt.Errorf("bench: webfarm exited: %v (see %s.out)", err, logPath)
		case <-ctx.Done():
			f.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			f.stop()
			return nil, fmt.Errorf("bench: webfarm not ready after 30s")
		}
	}
}

// stop terminates the farm (which flushes its log) and returns its CPU time.
func (f *farm) stop() time.Duration {
	_ = f.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-f.done:
	case <-time.After(20 * time.Second):
		_ = f.cmd.Process.Kill()
		<-f.done
	}
	if ru, ok := f.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return 0
}

// crawlLog is what the farm's request log says about one crawl.
type crawlLog struct {
	Requests   int       // every request
	Distinct   int       // distinct URLs requested
	Expected   int       // distinct URLs requested that are in the expected set
	Extra      int       // distinct URLs requested that are not
	First      time.Time // first request's arrival
	Last       time.Time // last response's end
	Statuses   map[int]int
	NotOnFarm  int // requests for names that are not the farm's
	ExtraShown []string
}

// Span is the time from the first request to the end of the last response.
func (l crawlLog) Span() time.Duration { return l.Last.Sub(l.First) }

// analyzeLog reads the farm's JSON-lines request log and compares the
// requested URLs with the expected set.
func analyzeLog(path string, expected map[string]bool) (crawlLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return crawlLog{}, err
	}
	defer f.Close()
	type rec struct {
		Time   time.Time `json:"time"`
		Dur    int64     `json:"dur_ns"`
		URL    string    `json:"url"`
		Status int       `json:"status"`
		Host   int       `json:"host_index"`
	}
	out := crawlLog{Statuses: map[int]int{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var r rec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			continue // a line cut by a killed farm
		}
		out.Requests++
		out.Statuses[r.Status]++
		if r.Host < 0 {
			out.NotOnFarm++
		}
		if out.First.IsZero() || r.Time.Before(out.First) {
			out.First = r.Time
		}
		if end := r.Time.Add(time.Duration(r.Dur)); end.After(out.Last) {
			out.Last = end
		}
		if seen[r.URL] {
			continue
		}
		seen[r.URL] = true
		if expected[r.URL] {
			out.Expected++
		} else {
			out.Extra++
			if len(out.ExtraShown) < 5 {
				out.ExtraShown = append(out.ExtraShown, r.URL)
			}
		}
	}
	out.Distinct = len(seen)
	return out, sc.Err()
}

// readHostsFile reads name -> address from an /etc/hosts-format file, in
// file order.
func readHostsFile(path string) (names, addrs []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) >= 2 {
			names, addrs = append(names, f[1]), append(addrs, f[0])
		}
	}
	return names, addrs, nil
}
