package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestArchitecture lints the module: no violation outside Exceptions.
func TestArchitecture(t *testing.T) {
	vs, err := Check(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("%v", v)
	}
}

// TestExceptionsStillHold fails when a listed exception no longer
// happens, so that the list shrinks as the issues are done.
func TestExceptionsStillHold(t *testing.T) {
	module, err := modulePath(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for key := range Exceptions {
		file, rule, _ := strings.Cut(key, ": ")
		vs, err := checkFile(filepath.Join("..", "..", filepath.FromSlash(file)), file, module)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, v := range vs {
			found = found || v.Rule == rule
		}
		if !found {
			t.Errorf("exception %q no longer happens: remove it from Exceptions", key)
		}
	}
}

// TestPlantedViolations lints a module with a violation of each rule
// planted, and with what the rules allow, and checks that exactly the
// violations are reported.
func TestPlantedViolations(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		// A role's machine breaking every machine rule.
		"internal/multinode/machine.go": `package multinode

import (
	"net"
	"os"
	clock "time"
)

func (m *M) step() {
	_ = clock.Now()
	go m.loop()
	_, _ = net.Dial, os.Exit
	clock.Sleep(1)
}
`,
		// A machine file may keep time as a value.
		"internal/dupserver/machine.go": "package dupserver\n\nimport \"time\"\n\nfunc f(now time.Time) time.Duration { return now.Sub(now) }\n",
		// Outside a machine file, goroutines and the clock are fine.
		"internal/multinode/server.go": "package multinode\n\nimport (\n\t\"net\"\n\t\"time\"\n)\n\nfunc g() { go net.Dial(\"tcp\", \"\"); _ = time.Now() }\n",
		// A non-cmd package importing a role.
		"internal/feed/feed.go": "package feed\n\nimport _ \"example.com/m/internal/nodesched\"\n",
		// A role importing another role.
		"internal/nodesched/peer.go": "package nodesched\n\nimport _ \"example.com/m/internal/dupserver\"\n",
		// The pipeline importing its role, and a machine file using the
		// pipeline's I/O side (its types are fine).
		"internal/nodesched/crawlpipe/pipe.go": "package crawlpipe\n\nimport _ \"example.com/m/internal/nodesched\"\n",
		"internal/nodesched/machine.go":        "package nodesched\n\nimport cp \"example.com/m/internal/nodesched/crawlpipe\"\n\nvar p = cp.NewPipeline\nvar o *cp.Outcome\n",
		// The configuration importing a wire package.
		"internal/config/cmt.go": "package config\n\nimport _ \"example.com/m/internal/cmt\"\n",
		// Allowed: cmd/, a role's own subpackage, a test file.
		"cmd/m/main.go":                         "package main\n\nimport _ \"example.com/m/internal/nodesched\"\n",
		"internal/nodesched/nsadmin/nsadmin.go": "package nsadmin\n\nimport _ \"example.com/m/internal/nodesched\"\n",
		"internal/feed/feed_test.go":            "package feed\n\nimport _ \"example.com/m/internal/multinode\"\n",
		// Ignored: testdata and nested modules.
		"internal/feed/testdata/x.go": "package x\n\nimport _ \"example.com/m/internal/multinode\"\n",
		"bench/go.mod":                "module example.com/bench\n",
		"bench/b.go":                  "package bench\n\nimport _ \"example.com/m/internal/multinode\"\n",
	}
	plant(t, root, files)
	vs, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	want := []string{
		"internal/config/cmt.go:3: internal/config imports wire package internal/cmt",
		"internal/feed/feed.go:3: imports role package internal/nodesched (only cmd/ may)",
		"internal/multinode/machine.go:4: machine file imports net",
		"internal/multinode/machine.go:5: machine file imports os",
		"internal/multinode/machine.go:10: machine file reads the wall clock (time.Now)",
		"internal/multinode/machine.go:11: machine file starts a goroutine",
		"internal/multinode/machine.go:13: machine file reads the wall clock (time.Sleep)",
		"internal/nodesched/crawlpipe/pipe.go:3: pipeline package imports role package internal/nodesched",
		"internal/nodesched/machine.go:5: machine file uses the pipeline's I/O side (cp.NewPipeline)",
		"internal/nodesched/peer.go:3: imports role package internal/dupserver (only cmd/ may)",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("violations (-want +got):\n%s", d)
	}
}

// plant writes files (path relative to root: contents) under root.
func plant(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
