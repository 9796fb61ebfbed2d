package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func runTrawl(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}
	code = runMain(context.Background(), env, args)
	return code, out.String(), errb.String()
}

const examples = "../../internal/config/testdata/examples/"

func TestNodeUsage(t *testing.T) {
	if code, _, errOut := runTrawl(t, "", "node", "--help"); code != 0 || !strings.Contains(errOut, "usage: trawl node") {
		t.Errorf("node --help: %d %q", code, errOut)
	}
	if code, _, _ := runTrawl(t, "", "node", "--id", "x"); code != 2 {
		t.Errorf("node without --multinode: exit %d", code)
	}
}
