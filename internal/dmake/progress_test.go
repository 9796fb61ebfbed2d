package dmake_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/marshal"
)

// TestTransferProgress: the test is the master of two worker processes; a
// netsource throttled to 2 MB/s sends 4 MB to a netsink, and poll-task on
// both sides sees the progress move strictly between 0 and the file's size
// while the transfer runs, then the finish counts every byte.
func TestTransferProgress(t *testing.T) {
	const size = 4 << 20
	dir := t.TempDir()
	src := startWorker(t, filepath.Join(dir, "src"), "--fault-throttle-transfer", "2000000")
	dst := startWorker(t, filepath.Join(dir, "dst"))
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	if err := os.WriteFile(filepath.Join(src.dir, "f.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	type side struct {
		c net.Conn
		r *bufio.Reader
	}
	open := func(p *proc) *side {
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(2 * time.Minute))
		s := &side{c: c, r: bufio.NewReader(c)}
		return s
	}
	send := func(s *side, line string) {
		if _, err := io.WriteString(s.c, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	read := func(s *side, prefix string) string {
		for {
			l, err := s.r.ReadString('\n')
			if err != nil {
				t.Fatalf("waiting for %s: %v", prefix, err)
			}
			if strings.HasPrefix(l, prefix) {
				return strings.TrimSuffix(l, "\n")
			}
		}
	}
	sink, source := open(dst), open(src)
	send(sink, "#netsink 1 g.bin -g.bin-77 nocompress")
	var port int
	if _, err := fmt.Sscanf(read(sink, "#slot "), "#slot netsink 1 %d", &port); err != nil {
		t.Fatal(err)
	}
	send(source, fmt.Sprintf("#netsource 1 f.bin 127.0.0.1 %d -g.bin-77 nocompress", port))
	if l := read(source, "#slot "); l != fmt.Sprintf("#slot netsource 1 %d", size) {
		t.Fatalf("slot %q", l)
	}
	progress := func(s *side) int64 {
		send(s, "#poll-task 1")
		l := read(s, "#")
		if strings.HasPrefix(l, "#finish ") {
			return -1
		}
		b64, ok := strings.CutPrefix(l, "#task-info 1 @base64:")
		if !ok {
			t.Fatalf("poll-task answered %q", l)
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		v, err := marshal.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := v.(marshal.Dict).Get("progress")
		n, ok := p.(marshal.Int)
		if !ok {
			t.Fatalf("task-info %v has no integer progress", v)
		}
		return int64(n)
	}
	// Poll both sides until each was seen strictly between 0 and size.
	seen := map[string]int64{}
	deadline := time.Now().Add(time.Minute)
	for len(seen) < 2 && time.Now().Before(deadline) {
		for name, s := range map[string]*side{"netsource": source, "netsink": sink} {
			if _, ok := seen[name]; ok {
				continue
			}
			n := progress(s)
			if n < 0 {
				t.Fatalf("%s finished before a progress between 0 and %d was seen", name, size)
			}
			if n > 0 && n < size {
				seen[name] = n
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(seen) < 2 {
		t.Fatalf("progress strictly between 0 and %d seen only on %v", size, seen)
	}
	t.Logf("progress seen mid-transfer: %v of %d", seen, size)
	if l, want := read(source, "#finish "), fmt.Sprintf("#finish 1 netsource completed %d", size); l != want {
		t.Errorf("netsource: %q, want %q", l, want)
	}
	if l, want := read(sink, "#finish "), fmt.Sprintf("#finish 1 netsink completed %d", size); l != want {
		t.Errorf("netsink: %q, want %q", l, want)
	}
	got, err := os.ReadFile(filepath.Join(dst.dir, "g.bin"))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("the received file differs (%d bytes, %v)", len(got), err)
	}
}
