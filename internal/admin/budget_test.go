package admin_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/admin/admintest"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/xmlrpc"
)

// hugeBody is an XML-RPC call whose one string parameter never ends: n
// bytes in all, produced as they are read.
type hugeBody struct {
	head string
	n    int64
	off  int64
}

func newHugeBody(n int64) *hugeBody {
	return &hugeBody{head: `<?xml version="1.0"?><methodCall><methodName>CollectionAdd</methodName><params><param><value><string>`, n: n}
}

func (b *hugeBody) Read(p []byte) (int, error) {
	if b.off >= b.n {
		return 0, io.EOF
	}
	if rem := b.n - b.off; int64(len(p)) > rem {
		p = p[:rem]
	}
	i := 0
	for ; i < len(p) && b.off < int64(len(b.head)); i++ {
		p[i] = b.head[b.off]
		b.off++
	}
	for j := i; j < len(p); j++ {
		p[j] = 'a'
	}
	b.off += int64(len(p) - i)
	return len(p), nil
}

// TestBodyBudgetHelper is the server process of TestBodyBudget: an admin
// server on a real listener, its address on stdout, until stdin closes.
func TestBodyBudgetHelper(t *testing.T) {
	if os.Getenv("TRAWL_ADMIN_BUDGET_HELPER") != "1" {
		t.Skip("helper process of TestBodyBudget")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := admintest.New(admin.Standalone, func() float64 { return clock })
	max, _ := strconv.ParseInt(os.Getenv("TRAWL_ADMIN_BUDGET_MAX"), 10, 64)
	budget, _ := strconv.ParseInt(os.Getenv("TRAWL_ADMIN_BUDGET_BYTES"), 10, 64)
	srv := &http.Server{Handler: admin.NewServer(fake, admin.ServerOptions{MaxRequest: max, BodyBudget: budget})}
	go srv.Serve(ln)
	fmt.Printf("ADDR %s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
}

// vmHWM reads the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// TestBodyBudget sends many huge XML-RPC requests at once (half with a
// Content-Length, half chunked) to a server in its own process and checks
// that the process's peak memory stays bounded: the bodies being decoded
// share one budget, so a request over it waits briefly and is refused
// with 503 rather than decoded alongside the others. The server answers
// normal calls afterwards.
func TestBodyBudget(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		testenv.Missing(t, "needs /proc to read the process's peak memory")
	}
	n, size, max, budget, limit := 24, int64(200<<20), int64(0), int64(0), int64(500<<20)
	if raceEnabled {
		// The race detector multiplies memory and time: smaller bodies and
		// cap, and a bound that allows for the detector's shadow memory.
		n, size, max, budget, limit = 12, 40<<20, 4<<20, 6<<20, 300<<20
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBodyBudgetHelper$")
	cmd.Env = append(os.Environ(), "TRAWL_ADMIN_BUDGET_HELPER=1", fmt.Sprintf("TRAWL_ADMIN_BUDGET_MAX=%d", max),
		fmt.Sprintf("TRAWL_ADMIN_BUDGET_BYTES=%d", budget))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	var addr string
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("the helper printed no address")
	}
	go io.Copy(io.Discard, stdout)
	base := vmHWM(t, cmd.Process.Pid)

	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Minute}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[string]int{}
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var body io.Reader = newHugeBody(size)
			if i%2 == 1 {
				body = io.MultiReader(body) // no length known: chunked
			}
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+admin.Path, body)
			if i%2 == 0 {
				req.ContentLength = size
			}
			req.Header.Set("Content-Type", "text/xml")
			key := "transport error"
			resp, err := hc.Do(req)
			if err == nil {
				_, derr := xmlrpc.DecodeResponse(resp.Body, xmlrpc.Limits{})
				resp.Body.Close()
				key = resp.Status
				var f *xmlrpc.Fault
				if errors.As(derr, &f) {
					key += ": " + f.String
				}
			}
			mu.Lock()
			statuses[key]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	peak := vmHWM(t, cmd.Process.Pid)
	for k, c := range statuses {
		t.Logf("%d x %s", c, k)
	}
	t.Logf("server process: VmHWM %d MiB before, %d MiB after %d concurrent %d MiB requests", base>>20, peak>>20, n, size>>20)
	if peak > limit {
		t.Errorf("server peak RSS %d MiB, want under %d MiB", peak>>20, limit>>20)
	}
	c := admin.NewClient(addr, nil)
	if _, err := c.CollectionGetList(context.Background()); err != nil {
		t.Errorf("a normal call after the flood: %v", err)
	}
}
