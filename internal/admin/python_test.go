package admin_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/admin/admintest"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/testenv"
)

// pythonClient is run by TestPythonClient: Python's own xmlrpc.client as a
// foreign peer. It prints what it saw as JSON.
const pythonClient = `
import json, marshal, sys, xmlrpc.client

url = sys.argv[1]
s = xmlrpc.client.ServerProxy(url)
out = {}
out["list"] = s.CollectionGetList()
out["add"] = s.AddURIs("web", 0, ["http://www.contoso.com/", "http://www.contoso.com/about/"])
out["urgent"] = s.AddURIs("web", True, ["http://www.contoso.com/x"])
out["status"] = s.CollectionGetStatus("web")
out["loglevel"] = s.GetLogLevel()
out["multinode"] = s.IsMultiNodeScheduler()

blob = s.CollectionGetStatistics("web")
assert isinstance(blob, xmlrpc.client.Binary), type(blob)
st = marshal.loads(blob.data)
web_delta, web_cycles = st[b"web"]
complete = web_cycles[b"cOmPIEtE"]
assert complete[b"__schemaname__"] == b"collectionschema"
cont = dict((k.decode(), v) for k, v in complete[b"continuous"])
hist = dict((k.decode(), v) for k, v in complete[b"histogram"])
out["stats"] = {
    "keys": sorted(k.decode() for k in st.keys()),
    "dspec": {k.decode(): {kk.decode(): vv for kk, vv in v.items()} for k, v in st[b"dspec"].items()},
    "cycles": sorted(k for k in web_cycles.keys() if isinstance(k, int)),
    "Downloaded": cont["Downloaded"],
    "DocSize": cont["DocSize"],
    "HTTPResponse": {k.decode(): v for k, v in hist["HTTPResponse"][0].items()},
    "reserved": [hist["HTTPResponse"][1].decode(), hist["HTTPResponse"][2].decode()],
    "delta_schema": web_delta[b"__schemaname__"].decode(),
    "global_dns": dict((k.decode(), v) for k, v in st[b"global"][1][b"cOmPIEtE"][b"continuous"])["DNSRequests"],
}
code, rep = s.CollectionGetStatistics2("web")
out["stats2"] = {"code": code, "keys": sorted(rep.keys()), "Downloaded": rep["cur"]["Downloaded"],
                 "DocSizeMax": rep["complete"]["DocSizeMax"], "Status": rep["cur"]["Status"],
                 "Progress": rep["cur"]["Progress"], "Epoch": rep["cur"]["Epoch"]}
code, g = s.GetGlobalStatistics()
out["global"] = {"code": code, "DNSRequests": g["complete"]["DNSRequests"]}

faults = []
for call in (lambda: s.AddURIs("web", "0", []),
             lambda: s.AddURIs("web", 0),
             lambda: s.CollectionGetStatus("nosuch"),
             lambda: s.NoSuchMethod()):
    try:
        call()
        faults.append(None)
    except xmlrpc.client.Fault as f:
        faults.append([f.faultCode, f.faultString])
out["faults"] = faults
out["methods"] = len(s.system.listMethods())
out["ping"] = s.ping()
print(json.dumps(out, sort_keys=True))
`

func TestPythonClient(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 is not installed")
	}
	e := start(t, admin.Standalone)
	ctx := context.Background()
	must(e.client.CollectionAdd(ctx, webXML, false))(t)
	e.fake.Update(func(g *stats.Series, colls map[string]*admintest.Collection) {
		_ = g.Delta().Add("DNSRequests", 9)
		g.Fold(clock + 60)
		s := colls["web"].Stats
		for _, size := range []float64{1000, 3000, 5000} {
			_ = s.Delta().Add("Downloaded", 1)
			_ = s.Delta().Add("DocSize", size)
			_ = s.Delta().Observe("HTTPResponse", "200", 1)
		}
		_ = s.Delta().Observe("HTTPResponse", "404", 1)
		s.Fold(clock + 120)
	})
	script := filepath.Join(t.TempDir(), "client.py")
	if err := os.WriteFile(script, []byte(pythonClient), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, py, script, e.srv.URL+"/RPC2")
	outb, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("python: %v\n%s", err, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal(outb, &got); err != nil {
		t.Fatalf("%v: %s", err, outb)
	}
	want := map[string]any{
		"list":      []any{"web"},
		"add":       []any{1.0, "Queued collection web with 2 URIs"},
		"urgent":    []any{1.0, "Queued collection web with 1 URIs"},
		"status":    "crawling",
		"loglevel":  float64(0x74),
		"multinode": 0.0,
		"stats": map[string]any{
			"keys":         []any{"dspec", "global", "web"},
			"dspec":        map[string]any{"web": map[string]any{"refresh": 2000.0, "refresh_mode": 4.0}},
			"cycles":       []any{0.0},
			"Downloaded":   []any{3.0, 1.0, 1.0, 3.0},
			"DocSize":      []any{9000.0, 1000.0, 5000.0, 3.0},
			"HTTPResponse": map[string]any{"200": 3.0, "404": 1.0},
			"reserved":     []any{"None", "None"},
			"delta_schema": "collectionschema",
			"global_dns":   []any{9.0, 9.0, 9.0, 1.0},
		},
		"stats2": map[string]any{"code": 1.0, "keys": []any{"complete", "cur"}, "Downloaded": 3.0, "DocSizeMax": 5000.0,
			"Status": "Crawling", "Progress": []any{0.0, "1 days 9h 18m 0s until scratch refresh"}, "Epoch": 0.0},
		"global": map[string]any{"code": 1.0, "DNSRequests": 9.0},
		"faults": []any{
			[]any{1.0, "AddURIs: parameter 2 (Urgent): want int (0 or 1), got string"},
			[]any{1.0, "AddURIs: takes 3 parameters (Collection string, Urgent int (0 or 1), URIs array of strings), got 2"},
			[]any{1.0, `CollectionGetStatus: collection "nosuch": no such collection`},
			[]any{1.0, `unknown method "NoSuchMethod"`},
		},
		"methods": 43.0,
		"ping":    1.0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("python client saw (-want +got):\n%s", diff)
	}
}
