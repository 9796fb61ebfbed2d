package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/index"
)

// waitLine reads sc until re matches and returns the first group.
func waitLine(t *testing.T, sc *bufio.Scanner, re *regexp.Regexp) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				got <- m[1]
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(60 * time.Second):
		t.Fatalf("no line matching %s", re)
		return ""
	}
}

// searchStatus GETs path on addr with token ("" for none).
func searchStatus(t *testing.T, addr, path, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
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

// checkSearchAuth: the page and API answer 401 without the token and 200
// with it when protected, 200 without it when not.
func checkSearchAuth(t *testing.T, addr string, protected bool) {
	t.Helper()
	for _, path := range []string{"/search?q=a", "/api/search?q=a"} {
		if protected {
			if c := searchStatus(t, addr, path, ""); c != http.StatusUnauthorized {
				t.Errorf("%s without the token: %d, want 401", path, c)
			}
			if c := searchStatus(t, addr, path, "s3cret"); c != http.StatusOK {
				t.Errorf("%s with the token: %d, want 200", path, c)
			}
		} else if c := searchStatus(t, addr, path, ""); c != http.StatusOK {
			t.Errorf("%s: %d, want 200", path, c)
		}
	}
}

// TestSearchAuthRun: trawl run --search-auth puts the search page and its
// JSON API behind the admin token; without it they stay open while the
// admin API is protected; --search-auth alone is refused.
func TestSearchAuthRun(t *testing.T) {
	re := regexp.MustCompile(`HTTP interface on http://([0-9.:]+)/`)
	for _, protected := range []bool{true, false} {
		args := []string{"run", "--demo", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--admin-token", "s3cret", "--progress", "off"}
		if protected {
			args = append(args, "--search-auth")
		}
		_, sc := childTrawl(t, args...)
		addr := waitLine(t, sc, re)
		checkSearchAuth(t, addr, protected)
		if c := searchStatus(t, addr, "/status.json", ""); c != http.StatusUnauthorized {
			t.Errorf("status page without the token: %d", c)
		}
	}
	cmd, sc := childTrawl(t, "run", "--demo", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--search-auth")
	var out strings.Builder
	for sc.Scan() {
		out.WriteString(sc.Text())
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(out.String(), "--search-auth needs --admin-token") {
		t.Errorf("--search-auth without a credential: %v %s", err, out.String())
	}
}

// TestSearchAuthServe: trawl search --serve with --admin-token protects
// the page and API; without it they are open.
func TestSearchAuthServe(t *testing.T) {
	re := regexp.MustCompile(`serving search on http://([0-9.:]+)/search`)
	for _, protected := range []bool{true, false} {
		data := t.TempDir()
		idx, err := index.Open(filepath.Join(data, "index"), index.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		idx.Close()
		args := []string{"search", "--serve", "127.0.0.1:0", "--data", data}
		if protected {
			args = append(args, "--admin-token", "s3cret")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestRunChild$")
		cmd.Env = append(os.Environ(), "TRAWL_RUN_CHILD_ARGS="+strings.Join(args, "\x1f"))
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addr := waitLine(t, bufio.NewScanner(pipe), re)
		checkSearchAuth(t, addr, protected)
	}
}
