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
