package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// ServeRequest is one table program for Serve: its arguments (Main's) and
// the directory it runs in.
type ServeRequest struct {
	Dir  string
	Args []string
}

// ServeReply is Serve's answer to a request: the program's error ("" when
// it succeeded); Fatal says the server ends after it (the program
// panicked).
type ServeReply struct {
	Err   string
	Fatal bool
}

// Serve is "trawl table serve": it runs table programs one at a time, each
// a JSON ServeRequest line read from in and answered by a ServeReply line
// on out, until in ends. A dmake worker keeps such servers instead of
// starting a process per table program: the trawl binary takes 15-20 ms
// of CPU to start (its packages' initialization), as much as a small
// table program's work. The programs read no environment and write
// nothing on stdout, so one process can run them in turn; each runs in its
// request's directory (the server changes into it), and the memory a
// program held beyond 16 MiB is returned to the system before the next
// one.
func Serve(ctx context.Context, in io.Reader, out io.Writer, reg *Registry) error {
	dec, enc := json.NewDecoder(in), json.NewEncoder(out)
	for {
		var req ServeRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("table: serve: %w", err)
		}
		rep := serveOne(ctx, req, reg)
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("table: serve: %w", err)
		}
		if rep.Fatal {
			return errors.New(rep.Err)
		}
		releaseMemory()
	}
}

// releaseKeep is the heap a server keeps between programs (what a merge
// or a reduce needs); beyond it (after a large sort) the memory goes back
// to the system at once.
const releaseKeep = 16 << 20

// releaseMemory returns the heap beyond releaseKeep to the system. Below
// it the runtime's own scavenger does, in the background: freeing after
// every program made the next one fault its pages in again (about a fifth
// of the CPU of an incremental web analyzer run's small programs).
func releaseMemory() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapSys-ms.HeapReleased > releaseKeep {
		debug.FreeOSMemory()
	}
}

func serveOne(ctx context.Context, req ServeRequest, reg *Registry) (rep ServeReply) {
	defer func() {
		if r := recover(); r != nil {
			rep = ServeReply{Err: fmt.Sprintf("table: %v: panic: %v\n%s", req.Args, r, debug.Stack()), Fatal: true}
		}
	}()
	if len(req.Args) > 0 && req.Args[0] == "serve" {
		return ServeReply{Err: "table: serve: a server does not serve itself"}
	}
	if err := os.Chdir(req.Dir); err != nil {
		return ServeReply{Err: fmt.Sprintf("table: %v", err)}
	}
	if err := Main(ctx, req.Args, reg); err != nil {
		return ServeReply{Err: err.Error()}
	}
	return ServeReply{}
}
