package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/admin/admintest"
)

// TestMain lets testscript run the trawl binary in scripts: the test
// binary itself plays "trawl".
func TestMain(m *testing.M) {
	os.Exit(testscript.RunMain(m, map[string]func() int{
		"trawl": func() int {
			// As main: SIGINT/SIGTERM stop the command cleanly.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
			return runMain(ctx, env, os.Args[1:])
		},
	}))
}

// TestAdminScripts runs testdata/script/*.txtar: every trawl admin
// subcommand against MS-FSCADM servers the setup starts (an in-memory
// backend, the same behind a token, a server that answers HTTP 500) and a
// port nothing listens on.
func TestAdminScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			fake := admintest.New(admin.Standalone, func() float64 { return 1234195119 })
			open := httptest.NewServer(admin.NewServer(fake, admin.ServerOptions{}))
			tokenFake := admintest.New(admin.MultinodeScheduler, func() float64 { return 1234195119 })
			tokenFake.SetNodeSchedulers(admin.HostPort{Host: "node1.example", Port: 13000})
			locked := httptest.NewServer(admin.Auth{Token: "s3cret"}.Wrap(admin.NewServer(tokenFake, admin.ServerOptions{})))
			broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "backend exploded", http.StatusInternalServerError)
			}))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			wrong := ln.Addr().String()
			ln.Close() // nothing listens there now
			e.Defer(open.Close)
			e.Defer(locked.Close)
			e.Defer(broken.Close)
			e.Setenv("ADMIN", strings.TrimPrefix(open.URL, "http://"))
			e.Setenv("LOCKED", strings.TrimPrefix(locked.URL, "http://"))
			e.Setenv("BROKEN", strings.TrimPrefix(broken.URL, "http://"))
			e.Setenv("WRONG", wrong)
			return nil
		},
	})
}
