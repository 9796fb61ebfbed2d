package dmake

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestExecutorTransfer runs netsink and netsource jobs over loopback: the
// file arrives whole, plain and compressed, with the byte counts of both
// sides equal; a wrong key makes the netsink report a mismatch (to listen
// again) and the netsource fail; an abort stops a netsource that cannot
// connect.
func TestExecutorTransfer(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := bytes.Repeat([]byte("k0001 12 word\n"), 50000)
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ex := &Executor{ListenHost: "127.0.0.1"}
	ctx := context.Background()
	for _, compress := range []bool{false, true} {
		sink, source := TaskKey{1, "1"}, TaskKey{1, "2"}
		port, err := ex.Do(ctx, JobSinkListen{Key: sink})
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, "dst")
		done := make(chan any, 1)
		go func() {
			r, err := ex.Do(ctx, JobSinkReceive{Key: sink, Path: dst, Transfer: "-dst-1", Compress: compress})
			if err != nil {
				done <- err
				return
			}
			done <- r
		}()
		sent, err := ex.Do(ctx, JobSourceSend{Key: source, Path: src, Addr: "127.0.0.1:" + strconv.Itoa(port.(int)), Transfer: "-dst-1", Compress: compress})
		if err != nil {
			t.Fatal(err)
		}
		r := <-done
		got, _ := os.ReadFile(dst)
		if sd, ok := r.(SinkDone); !ok || sd.Bytes != sent.(int64) || !bytes.Equal(got, data) {
			t.Errorf("compress=%v: sink %v, sent %v, file equal %v", compress, r, sent, bytes.Equal(got, data))
		}
		if compress && sent.(int64) >= int64(len(data)) {
			t.Errorf("compressed transfer sent %v bytes for %d", sent, len(data))
		}
		ex.Do(ctx, JobRelease{Key: sink})
		ex.Do(ctx, JobRelease{Key: source})
	}

	// A wrong key.
	sink, source := TaskKey{2, "1"}, TaskKey{2, "2"}
	port, _ := ex.Do(ctx, JobSinkListen{Key: sink})
	done := make(chan any, 1)
	go func() {
		r, _ := ex.Do(ctx, JobSinkReceive{Key: sink, Path: filepath.Join(dir, "x"), Transfer: "-x-1"})
		done <- r
	}()
	if _, err := ex.Do(ctx, JobSourceSend{Key: source, Path: src, Addr: "127.0.0.1:" + strconv.Itoa(port.(int)), Transfer: "-x-2"}); err == nil {
		t.Error("netsource with a wrong key succeeded")
	}
	if r := <-done; r != (SinkDone{Mismatch: true}) {
		t.Errorf("netsink on a wrong key: %v", r)
	}

	// A netsource retries a port nobody listens on until aborted.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	key := TaskKey{3, "1"}
	errc := make(chan error, 1)
	go func() {
		_, err := ex.Do(ctx, JobSourceSend{Key: key, Path: src, Addr: addr, Transfer: "-k-1"})
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond) // let it retry a few times
	ex.Do(ctx, JobAbort{Key: key})
	select {
	case err := <-errc:
		if !errors.Is(err, errAborted) {
			t.Errorf("aborted netsource: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("abort did not stop the netsource")
	}
}
