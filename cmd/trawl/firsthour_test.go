package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestFirstHour runs testdata/firsthour/*.txtar: trawl run --demo, then the
// commands its summary prints, each as printed (nextsteps); --serve
// (servedemo); and the inspecting commands on directories that are not a
// crawl's, which must stay byte-for-byte unchanged (hashtree).
func TestFirstHour(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/firsthour",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"nextsteps": cmdNextSteps,
			"servedemo": cmdServeDemo,
			"hashtree":  cmdHashTree,
		},
	})
}

// printedCommands returns the "    trawl ..." lines of a summary, split
// into words as a POSIX shell would ('...' quoting only).
func printedCommands(out string) [][]string {
	var cmds [][]string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "    trawl ") {
			continue
		}
		var words []string
		var w strings.Builder
		inWord, quoted := false, false
		for _, r := range strings.TrimSpace(line) {
			switch {
			case r == '\'':
				quoted = !quoted
				inWord = true
			case r == ' ' && !quoted:
				if inWord {
					words = append(words, w.String())
					w.Reset()
					inWord = false
				}
			default:
				w.WriteRune(r)
				inWord = true
			}
		}
		if inWord {
			words = append(words, w.String())
		}
		cmds = append(cmds, words)
	}
	return cmds
}

// cmdNextSteps runs every trawl command the last command printed (its
// stdout), each as printed: each must succeed and print something; one
// with --serve must serve the search page at the address it names.
func cmdNextSteps(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: nextsteps")
	}
	cmds := printedCommands(ts.ReadFile("stdout"))
	if len(cmds) < 3 {
		ts.Fatalf("the summary prints %d trawl commands, want at least 3", len(cmds))
	}
	for _, c := range cmds {
		ts.Logf("> %s", strings.Join(c, " "))
		if i := indexOf(c, "--serve"); i >= 0 && i+1 < len(c) {
			p := startTrawl(ts, c[1:])
			waitHTTP(ts, "http://"+c[i+1]+"/search?q=site", "results")
			p.stop(ts)
			continue
		}
		if err := ts.Exec(c[0], c[1:]...); err != nil {
			ts.Fatalf("%s: %v", strings.Join(c, " "), err)
		}
		out := ts.ReadFile("stdout")
		if strings.TrimSpace(out) == "" {
			ts.Fatalf("%s printed nothing", strings.Join(c, " "))
		}
		if c[1] == "search" && !strings.Contains(out, "results 1-") {
			ts.Fatalf("%s found nothing:\n%s", strings.Join(c, " "), out)
		}
	}
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// trawlProcess is a trawl started by a script command, its output read
// line by line.
type trawlProcess struct {
	cmd   *exec.Cmd
	lines chan string
	out   strings.Builder
	errb  strings.Builder // read once the process has ended
}

func startTrawl(ts *testscript.TestScript, args []string) *trawlProcess {
	bin := ""
	for _, d := range filepath.SplitList(ts.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(d, "trawl")); err == nil && !fi.IsDir() {
			bin = filepath.Join(d, "trawl")
			break
		}
	}
	if bin == "" {
		ts.Fatalf("no trawl on the script's PATH")
	}
	p := &trawlProcess{cmd: exec.Command(bin, args...), lines: make(chan string, 1000)}
	p.cmd.Dir = ts.Getenv("WORK")
	p.cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"))
	stdout, err := p.cmd.StdoutPipe()
	ts.Check(err)
	p.cmd.Stderr = &p.errb
	ts.Check(p.cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	ts.Defer(func() { p.cmd.Process.Kill() })
	return p
}

// waitLine reads output lines until one matches re.
func (p *trawlProcess) waitLine(ts *testscript.TestScript, re string) {
	rx := regexp.MustCompile(re)
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				ts.Fatalf("trawl ended without printing %q:\n%s", re, p.out.String())
			}
			p.out.WriteString(l + "\n")
			if rx.MatchString(l) {
				return
			}
		case <-timeout:
			ts.Fatalf("trawl did not print %q in 2 minutes:\n%s", re, p.out.String())
		}
	}
}

// stop sends SIGINT (Ctrl-C) and requires a clean exit.
func (p *trawlProcess) stop(ts *testscript.TestScript) {
	ts.Check(p.cmd.Process.Signal(syscall.SIGINT))
	for l := range p.lines {
		p.out.WriteString(l + "\n")
	}
	err := p.cmd.Wait()
	ts.Logf("[stderr of trawl %s]\n%s", strings.Join(p.cmd.Args[1:], " "), p.errb.String())
	if err != nil {
		ts.Fatalf("trawl %s after SIGINT: %v", strings.Join(p.cmd.Args[1:], " "), err)
	}
}

// waitHTTP gets url until it answers 200 with a body containing want.
func waitHTTP(ts *testscript.TestScript, url, want string) {
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(b), want) {
				return
			}
			last = fmt.Sprintf("HTTP %d: %.300s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("%s did not answer 200 with %q: %s", url, want, last)
}

// cmdServeDemo runs trawl run --serve ARGS: once the crawl's summary says
// the HTTP interface stays up, the search and status pages it prints must
// answer, and trawl store on its --data must say the crawl is running;
// SIGINT must then stop trawl cleanly. The output becomes stdout.
func cmdServeDemo(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: servedemo ARGS...")
	}
	p := startTrawl(ts, append([]string{"run", "--serve"}, args...))
	p.waitLine(ts, `^    status page  http://`)
	urls := regexp.MustCompile(`(?m)^    (search|status) page  (http://\S+)$`).FindAllStringSubmatch(p.out.String(), -1)
	if len(urls) != 2 {
		ts.Fatalf("want the search and status URLs in:\n%s", p.out.String())
	}
	// Well after the crawl: still up.
	time.Sleep(2 * time.Second)
	waitHTTP(ts, urls[0][2]+"?q=site", "results")
	waitHTTP(ts, urls[1][2], "trawl status")
	// Meanwhile the store is the running crawl's: trawl store says so.
	if i := indexOf(args, "--data"); i >= 0 && i+1 < len(args) {
		if err := ts.Exec("trawl", "store", "list", "--data", args[i+1]); err == nil {
			ts.Fatalf("trawl store list on a running crawl's directory succeeded")
		}
		if e := ts.ReadFile("stderr"); !strings.Contains(e, "is locked: a crawl is running on "+args[i+1]) {
			ts.Fatalf("trawl store list on a running crawl: %s", e)
		}
	}
	p.stop(ts)
	fmt.Fprint(ts.Stdout(), p.out.String())
}

// cmdHashTree writes a digest of every path, mode and file content under
// DIR to FILE.
func cmdHashTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hashtree DIR FILE")
	}
	root := ts.MkAbs(args[0])
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		sum := ""
		if d.Type().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		fmt.Fprintf(&b, "%s %v %d %s\n", rel, fi.Mode(), fi.Size(), sum)
		return nil
	})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
}
