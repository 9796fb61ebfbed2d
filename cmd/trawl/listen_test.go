package main

import (
	"bufio"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// childTrawl starts the test binary as trawl with args (TestRunChild) and
// returns it with a reader of its standard error.
func childTrawl(t *testing.T, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunChild$")
	cmd.Env = append(os.Environ(), "TRAWL_RUN_CHILD_ARGS="+strings.Join(args, "\x1f"))
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewScanner(pipe)
}

// TestExposedListenRefused: every role refuses, at start, an HTTP
// interface on a non-loopback address without authentication, with a
// message naming the flag that allows it, and exits with the usage code.
func TestExposedListenRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		flag string
	}{
		{"run 0.0.0.0", []string{"run", "--listen", "0.0.0.0:0"}, "--listen 0.0.0.0:0"},
		{"run every address", []string{"run", "--listen", ":0"}, "--listen :0"},
		{"run ipv6 any", []string{"run", "--listen", "[::]:0"}, "--listen [::]:0"},
		{"run one address", []string{"run", "--listen", "192.0.2.1:0"}, "--listen 192.0.2.1:0"},
		{"run host name", []string{"run", "--listen", "crawler.example:0"}, "--listen crawler.example:0"},
		{"multinode", []string{"multinode", "--admin-listen", "0.0.0.0:0"}, "--admin-listen 0.0.0.0:0"},
		{"node", []string{"node", "--id", "n1", "--multinode", "127.0.0.1:1", "--listen", "0.0.0.0:0"}, "--listen 0.0.0.0:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--data", t.TempDir())
			cmd, sc := childTrawl(t, args...)
			// One that starts does not stop by itself: stop it and fail.
			timer := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
			defer timer.Stop()
			var out strings.Builder
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Errorf("exit: %v, want status 2", err)
			}
			for _, want := range []string{tc.flag, "without authentication", "--insecure-listen", "--admin-token"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("message lacks %q:\n%s", want, out.String())
				}
			}
			if strings.Contains(out.String(), "HTTP interface on") {
				t.Errorf("it listened:\n%s", out.String())
			}
		})
	}
}

// TestExposedListenAllowed: with a token, or with --insecure-listen, the
// same start goes ahead, and the line it prints names the address it is
// bound to (every address) and the loopback URL, which answers.
func TestExposedListenAllowed(t *testing.T) {
	re := regexp.MustCompile(`HTTP interface on (?:0\.0\.0\.0|\[::\]):([0-9]+), every address \(http://127\.0\.0\.1:([0-9]+)/ from this machine\)`)
	for _, tc := range []struct {
		name  string
		extra []string
		token string
	}{
		{"token", []string{"--admin-token", "s3cret"}, "s3cret"},
		{"insecure-listen", []string{"--insecure-listen"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"multinode", "--admin-listen", "0.0.0.0:0", "--listen", "127.0.0.1:0", "--data", t.TempDir()}, tc.extra...)
			_, sc := childTrawl(t, args...)
			port := make(chan string, 1)
			go func() {
				for sc.Scan() {
					if m := re.FindStringSubmatch(sc.Text()); m != nil && m[1] == m[2] {
						port <- m[1]
						break
					}
				}
				for sc.Scan() {
				}
			}()
			var p string
			select {
			case p = <-port:
			case <-time.After(30 * time.Second):
				t.Fatal("no line with the bound address")
			}
			get := func(token string) int {
				req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+p+"/status.json", nil)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if tc.token != "" {
				if c := get(""); c != http.StatusUnauthorized {
					t.Errorf("without the token: %d, want 401", c)
				}
			}
			if c := get(tc.token); c != http.StatusOK {
				t.Errorf("status page: %d, want 200", c)
			}
		})
	}
}
