package table

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServe: a server runs programs in turn, each in its request's
// directory; a failing program is answered with its error and the server
// goes on; a panicking one ends the server after its answer.
func TestServe(t *testing.T) {
	t.Chdir(t.TempDir()) // Serve changes the directory: restore it after
	dirA, dirB := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dirA, "in"), []byte("b 2\na 1\nc 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "in"), []byte("z\ny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry()
	reg.RegisterTask("test.panic", func([]string) error { panic("boom") })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), inR, outW, reg); outW.Close() }()
	enc, dec := json.NewEncoder(inW), json.NewDecoder(bufio.NewReader(outR))
	ask := func(dir string, args ...string) ServeReply {
		t.Helper()
		if err := enc.Encode(ServeRequest{Dir: dir, Args: args}); err != nil {
			t.Fatal(err)
		}
		var rep ServeReply
		if err := dec.Decode(&rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := ask(dirA, "sort", "-k1,1", "in", "-o", "out"); rep.Err != "" || rep.Fatal {
		t.Fatalf("sort: %+v", rep)
	}
	if rep := ask(dirB, "sort", "in", "-o", "out"); rep.Err != "" {
		t.Fatalf("second sort: %+v", rep)
	}
	for dir, want := range map[string]string{dirA: "a 1\nb 2\nc 3\n", dirB: "y\nz\n"} {
		if b, _ := os.ReadFile(filepath.Join(dir, "out")); string(b) != want {
			t.Errorf("%s/out = %q, want %q", dir, b, want)
		}
	}
	if rep := ask(dirA, "sort", "missing", "-o", "out2"); rep.Err == "" || rep.Fatal || !strings.Contains(rep.Err, "missing") {
		t.Errorf("sort of a missing file: %+v", rep)
	}
	if rep := ask(filepath.Join(dirA, "nodir"), "sort", "in", "-o", "x"); rep.Err == "" || rep.Fatal {
		t.Errorf("a missing directory: %+v", rep)
	}
	if rep := ask(dirA, "serve"); rep.Err == "" {
		t.Errorf("serve inside serve: %+v", rep)
	}
	if rep := ask(dirA, "pythontasks", "test.panic"); !rep.Fatal || !strings.Contains(rep.Err, "boom") {
		t.Errorf("panic: %+v", rep)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Serve after a panic returned %v", err)
	}

	// The end of the input ends the server without an error.
	inR, inW = io.Pipe()
	go func() { done <- Serve(context.Background(), inR, io.Discard, reg) }()
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve at the end of its input: %v", err)
	}
}
