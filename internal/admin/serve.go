package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Serve serves h on ln until ctx ends, then shuts the server down (giving
// requests in flight five seconds). It returns nil after a shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ListenMessage is the line a process prints once its HTTP interface
// listens.
func ListenMessage(cmd, addr string) string {
	return fmt.Sprintf("trawl %s: HTTP interface on %s (admin API /RPC2, status /status, metrics /metrics)\n", cmd, ListenURL(addr))
}

// ListenAddr is the HTTP interface's address from --admin-listen (or
// --listen) and the base port: 127.0.0.1:<base> by default, "" for off.
func ListenAddr(flagValue string, basePort int) string {
	switch flagValue {
	case "off":
		return ""
	case "":
		return fmt.Sprintf("127.0.0.1:%d", basePort)
	}
	return flagValue
}
