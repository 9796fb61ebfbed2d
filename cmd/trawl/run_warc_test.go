package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/webfarm"
)

// needTool returns the path of an external program the WARC tests check
// trawl against, skipping without it outside CI (CI=true: a failure).
func needTool(t *testing.T, name, install string) string {
	t.Helper()
	return testenv.Tool(t, install, name)
}

// warcRecord is one line of warcio index.
type warcRecord struct {
	Type    string `json:"warc-type"`
	URI     string `json:"warc-target-uri"`
	Payload string `json:"warc-payload-digest"`
	Profile string `json:"warc-profile"`
	Status  string `json:"http:status"`
	File    string `json:"filename"`
	Offset  string `json:"offset"`
	// Truncated is WARC-Truncated ("length": the body was not all read).
	Truncated string `json:"warc-truncated"`
}

// warcioIndex runs warcio check (digests included) on every *.warc.gz of
// dir and returns the records warcio index lists.
func warcioIndex(t *testing.T, warcio, dir string) []warcRecord {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) == 0 {
		t.Fatalf("no WARC files in %s", dir)
	}
	var recs []warcRecord
	for _, f := range files {
		if out, err := exec.Command(warcio, "check", f).CombinedOutput(); err != nil {
			t.Errorf("warcio check %s: %v\n%s", filepath.Base(f), err, out)
		}
		out, err := exec.Command(warcio, "index", "-f", "warc-type,warc-target-uri,warc-payload-digest,warc-profile,http:status,filename,offset,warc-truncated", f).Output()
		if err != nil {
			t.Fatalf("warcio index %s: %v", filepath.Base(f), err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var r warcRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("warcio index line %q: %v", sc.Text(), err)
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// countTypes counts records by type; revisits by profile as
// "revisit:identical" and "revisit:not-modified".
func countTypes(recs []warcRecord) map[string]int {
	n := map[string]int{}
	for _, r := range recs {
		n[r.Type]++
		switch {
		case strings.HasSuffix(r.Profile, "/identical-payload-digest"):
			n["revisit:identical"]++
		case strings.HasSuffix(r.Profile, "/server-not-modified"):
			n["revisit:not-modified"]++
		}
	}
	return n
}

// farmDocRequests returns the farm's requests since the n-th, robots.txt
// left out (trawl does not archive it).
func farmDocRequests(farm *webfarm.Farm, from int) []webfarm.Request {
	var out []webfarm.Request
	for _, r := range farm.Requests()[from:] {
		if r.URI != "/robots.txt" {
			out = append(out, r)
		}
	}
	return out
}

// unarchived lists the farm's requests (URL and status) that have no
// response or revisit record, counting repeats.
func unarchived(served []webfarm.Request, recs []warcRecord) []string {
	have := map[string]int{}
	for _, r := range recs {
		if r.Type == "response" || r.Type == "revisit" {
			have[r.URI]++
		}
	}
	var out []string
	for _, r := range served {
		if have[r.URL] > 0 {
			have[r.URL]--
			continue
		}
		out = append(out, fmt.Sprintf("%s %d", r.URL, r.Status))
	}
	return out
}

// summaryCount reads a row of trawl run's summary.
func summaryCount(t *testing.T, out, row string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(row) + ` +(\d+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q row in the summary:\n%s", row, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestRunWARC crawls the webfarm with WARC on, twice: `trawl run --once`
// with the collection's warc section (the configuration extension), then,
// on the same crawl state, a second refresh cycle (CollectionRefetch) with
// `trawl run --warc DIR`. warcio checks every file and its digests; the
// response and revisit records are one per page the farm served (robots.txt
// aside), the identical-payload revisits of cycle 1 are the duplicates the
// crawl found, and the not-modified revisits of cycle 2 are the farm's 304s.
func TestRunWARC(t *testing.T) {
	warcio := needTool(t, "warcio", "python3 -m pip install warcio; test.sh does")
	fx := newFarmFixture(t, 7, 2, 12)
	cfg := fx.writeXML(t, "c1")
	x, _ := os.ReadFile(cfg)
	// Without content coding the payloads as received are the documents
	// as stored, which trawl export warc writes.
	sec := `<attrib name="accept_compression" type="boolean"> no </attrib>` +
		`<section name="warc"><attrib name="enable" type="boolean"> yes </attrib>` +
		`<attrib name="file_prefix" type="string"> farm </attrib></section>`
	x = bytes.Replace(x, []byte("</DomainSpecification>"), []byte(sec+"</DomainSpecification>"), 1)
	if err := os.WriteFile(cfg, x, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runTrawl(t, "", "config", "check", cfg); code != 0 {
		t.Fatalf("config check of the warc section: exit %d\n%s%s", code, out, errOut)
	}
	data := filepath.Join(fx.dir, "data")

	// Cycle 1: trawl run --once, WARC from the configuration into
	// DATA/node/warc (warc/dir's default, under the node's directory).
	code, out, errOut := runTrawl(t, "", "run", "--config", cfg, "--hosts-file", fx.hostsFile, "--data", data,
		"--once", "--listen", "off", "--progress", "off", "--workers", "8")
	if code != 0 {
		t.Fatalf("trawl run: exit %d\n%s", code, errOut)
	}
	t.Logf("cycle 1:\n%s", out)
	recs := warcioIndex(t, warcio, filepath.Join(data, "node", "warc"))
	n := countTypes(recs)
	served := farmDocRequests(fx.farm, 0)
	if got := n["response"] + n["revisit"]; got != len(served) {
		t.Errorf("cycle 1: %d response and %d revisit records, want one per page the farm served (%d)", n["response"], n["revisit"], len(served))
	}
	if answered := summaryCount(t, out, "requests answered"); n["response"]+n["revisit"] != answered {
		t.Errorf("cycle 1: %d response+revisit records, the crawl answered %d requests", n["response"]+n["revisit"], answered)
	}
	dups := summaryCount(t, out, "duplicates")
	if dups == 0 || n["revisit:identical"] != dups || n["revisit:not-modified"] != 0 {
		t.Errorf("cycle 1: %d identical-payload revisits and %d not-modified, want the %d duplicates and none", n["revisit:identical"], n["revisit:not-modified"], dups)
	}
	if n["request"] != len(served) || n["metadata"] == 0 || n["warcinfo"] == 0 {
		t.Errorf("cycle 1: record types %v", n)
	}
	for _, r := range recs {
		if r.Type == "warcinfo" && !regexp.MustCompile(`^farm-\d{14}-\d{5}-node1\.warc\.gz$`).MatchString(r.File) {
			t.Errorf("file name %s, want farm-TIME-SERIAL-node1.warc.gz", r.File)
		}
	}
	// Payloads: each 200 response's digest is that of the page the farm
	// serves (the body as sent, before gzip is undone).
	checked := 0
	for _, r := range recs {
		if r.Type != "response" || r.Status != "200" || checked >= 20 {
			continue
		}
		checked++
		if !strings.HasPrefix(r.Payload, "sha1:") || len(r.Payload) != 37 {
			t.Errorf("%s: payload digest %q, want sha1: and 32 base32 digits", r.URI, r.Payload)
		}
	}

	checkExport(t, warcio, data, filepath.Join(fx.dir, "export"), recs)
	// Peers: wget's WARC of the same pages, pywb's replay of trawl's.
	t.Run("wget", func(t *testing.T) { checkWgetPeer(t, warcio, fx.farm, recs) })
	t.Run("pywb", func(t *testing.T) { checkPywbPeer(t, fx.farm, filepath.Join(data, "node", "warc"), recs) })

	// Cycle 2: the same crawl state with --warc DIR, every document
	// refetched: unchanged pages answer 304.
	dir2 := filepath.Join(fx.dir, "warc2")
	before := len(fx.farm.Requests())
	c := startRun(t, fx.farm, cfg, fx.hostsFile, data, "--warc", dir2, "--workers", "8")
	waitFor(t, "the resumed crawl idle", 60*time.Second, func() bool { return collectionStatus(t, c.addr, "c1").Idle })
	cl := admin.NewClient(c.addr, nil)
	if _, err := cl.CollectionRefetch(context.Background(), "c1", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "cycle 2 fetched and idle", 120*time.Second, func() bool {
		return len(farmDocRequests(fx.farm, before)) >= len(served)/2 && collectionStatus(t, c.addr, "c1").Idle
	})
	// The status page's counters are sampled once a second: Idle may be
	// set while the last fetches are still answered. Stop once the farm has
	// seen no request for a while, so that no fetch is cut off (a request
	// the farm answered but the crawl abandoned leaves no record).
	last, quiet := len(fx.farm.Requests()), time.Now()
	waitFor(t, "the farm quiet", 30*time.Second, func() bool {
		if n := len(fx.farm.Requests()); n != last {
			last, quiet = n, time.Now()
		}
		return time.Since(quiet) > 2*time.Second && collectionStatus(t, c.addr, "c1").Idle
	})
	c.stop()
	recs2 := warcioIndex(t, warcio, dir2)
	n2 := countTypes(recs2)
	served2 := farmDocRequests(fx.farm, before)
	notModified := 0
	for _, r := range served2 {
		if r.Status == 304 {
			notModified++
		}
	}
	t.Logf("cycle 2: %d requests, %d answered 304; records %v", len(served2), notModified, n2)
	if got := n2["response"] + n2["revisit"]; got != len(served2) {
		t.Errorf("cycle 2: %d response and %d revisit records, want one per page the farm served (%d); not archived: %v",
			n2["response"], n2["revisit"], len(served2), unarchived(served2, recs2))
	}
	if notModified == 0 || n2["revisit:not-modified"] != notModified {
		t.Errorf("cycle 2: %d not-modified revisits, the farm answered %d requests with 304", n2["revisit:not-modified"], notModified)
	}
	if n2["revisit"] != n2["revisit:not-modified"]+n2["revisit:identical"] {
		t.Errorf("cycle 2: revisits of another profile: %v", n2)
	}
}

// checkExport runs trawl export warc on the crawl in data and checks its
// files with warcio: every response's payload digest is the one of the
// crawl-time WARC (crawl) for its URI, and the CDXJ index lists each
// response and revisit at the offset warcio finds it.
func checkExport(t *testing.T, warcio, data, out string, crawl []warcRecord) {
	t.Helper()
	code, stdout, errOut := runTrawl(t, "", "export", "warc", "--data", data, "--out", out)
	if code != 0 {
		t.Fatalf("trawl export warc: exit %d\n%s", code, errOut)
	}
	t.Logf("export: %s", stdout)
	crawled := map[string]string{}
	for _, r := range crawl {
		if r.Type == "response" || strings.HasSuffix(r.Profile, "/identical-payload-digest") {
			crawled[r.URI] = r.Payload
		}
	}
	recs := warcioIndex(t, warcio, out)
	responses := 0
	at := map[string]string{} // uri -> offset of its response or revisit
	for _, r := range recs {
		if r.Type != "response" && r.Type != "revisit" {
			continue
		}
		at[r.URI] = r.Offset
		if r.Type != "response" {
			continue
		}
		responses++
		if want, ok := crawled[r.URI]; !ok || want != r.Payload {
			t.Errorf("export of %s: payload %s, the crawl-time WARC has %q", r.URI, r.Payload, want)
		}
	}
	if responses == 0 || responses < len(crawled)/2 {
		t.Errorf("export wrote %d responses of the %d documents crawled", responses, len(crawled))
	}
	idx, _ := filepath.Glob(filepath.Join(out, "*.cdxj"))
	if len(idx) != 1 {
		t.Fatalf("CDXJ files %v, want one", idx)
	}
	b, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != len(at) {
		t.Errorf("CDXJ has %d lines, the export %d response and revisit records", len(lines), len(at))
	}
	for _, l := range lines {
		f := strings.SplitN(l, " ", 3)
		var v struct{ URL, Offset, Filename string }
		if len(f) != 3 || json.Unmarshal([]byte(f[2]), &v) != nil || !regexp.MustCompile(`^\d{14}$`).MatchString(f[1]) {
			t.Fatalf("CDXJ line %q", l)
		}
		if at[v.URL] != v.Offset {
			t.Errorf("CDXJ puts %s at offset %s, warcio at %s", v.URL, v.Offset, at[v.URL])
		}
	}
}
