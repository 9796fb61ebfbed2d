package store

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/google/go-cmp/cmp"
)

func openMem(t *testing.T, o Options) *Store {
	t.Helper()
	if o.FS == nil {
		o.FS = vfs.NewMem()
	}
	s, err := Open("db", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fullRecord() *URIRecord {
	return &URIRecord{
		URI: "http://www.contoso.com/a?b=1", Site: "www.contoso.com",
		Status: StatusDuplicate, HTTPCode: 200, Checksum: md5.Sum([]byte("x")), HasChecksum: true,
		Owner: "http://www.contoso.com/", Location: "http://elsewhere/", LastModified: "Mon, 15 Jun 2009 11:12:16 GMT",
		ETag: `"abc"`, ContentType: "text/html", Size: 12345, Referrer: "http://www.contoso.com/", Hops: 3,
		FirstSeenCycle: 1, LastFetchedCycle: 7,
		FirstSeen:   time.Unix(1245064336, 5).UTC(),
		LastFetched: time.Unix(1245064400, 0).UTC(), LastChanged: time.Unix(1245064401, 0).UTC(),
		FetchDuration: 1500 * time.Millisecond, ErrorCount: 2, RetryCount: 1, ChangeCount: 4, FetchCount: 9,
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  *URIRecord
	}{
		{"zero", &URIRecord{URI: "http://a/"}},
		{"full", fullRecord()},
		{"negative code", &URIRecord{URI: "u", Site: "s", HTTPCode: -1, Status: StatusError, ErrorCount: 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := MarshalRecord(tc.rec)
			got, err := UnmarshalRecord(tc.rec.URI, b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.rec, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
			// Every truncation is an error, never a panic.
			for i := 0; i < len(b); i++ {
				if _, err := UnmarshalRecord("u", b[:i]); err == nil {
					t.Errorf("truncated to %d bytes: no error", i)
				}
			}
			if _, err := UnmarshalRecord("u", append(b, 0)); err == nil {
				t.Error("trailing byte: no error")
			}
		})
	}
}

func TestRecordDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"version", []byte{9, 0, 0, 0}},
		{"bits", []byte{1, 0x40, 0, 0}},
		{"status", []byte{1, 0, 99, 0}},
		{"huge string", []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := UnmarshalRecord("u", tc.b); err == nil || !errors.Is(err, errCorrupt) {
				t.Errorf("err = %v, want corrupt", err)
			}
		})
	}
}

func FuzzUnmarshalRecord(f *testing.F) {
	f.Add(MarshalRecord(fullRecord()))
	f.Add(MarshalRecord(&URIRecord{}))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := UnmarshalRecord("u", b)
		if err != nil {
			return
		}
		again, err := UnmarshalRecord("u", MarshalRecord(r))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if d := cmp.Diff(r, again); d != "" {
			t.Fatalf("re-encode differs:\n%s", d)
		}
	})
}

func TestURIRecordsAndIteration(t *testing.T) {
	s := openMem(t, Options{})
	b := s.NewBatch()
	want := map[string][]string{}
	for i := 0; i < 30; i++ {
		site := fmt.Sprintf("site%d.example", i%3)
		uri := fmt.Sprintf("http://%s/p%02d", site, i)
		want[site] = append(want[site], uri)
		if err := b.PutURI("c1", &URIRecord{URI: uri, Site: site, Status: StatusFetched, Hops: i}); err != nil {
			t.Fatal(err)
		}
	}
	// Another collection with the same URIs must not leak into c1.
	if err := b.PutURI("c2", &URIRecord{URI: "http://site0.example/p00", Site: "site0.example"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}

	n, err := s.CountURIs("c1")
	if err != nil || n != 30 {
		t.Fatalf("CountURIs = %d, %v; want 30", n, err)
	}
	got := map[string][]string{}
	err = s.Sites("c1", func(site string, count int) error {
		return s.SiteURIs("c1", site, func(uri string) error {
			got[site] = append(got[site], uri)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("site index (-want +got):\n%s", d)
	}
	var prefixed []string
	if err := s.URIs("c1", "http://site1.example/p1", func(r *URIRecord) error {
		prefixed = append(prefixed, r.URI)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"http://site1.example/p10", "http://site1.example/p13", "http://site1.example/p16", "http://site1.example/p19"}, prefixed); d != "" {
		t.Errorf("prefix listing (-want +got):\n%s", d)
	}
	// Early stop.
	seen := 0
	if err := s.URIs("c1", "", func(*URIRecord) error { seen++; return ErrStop }); err != nil || seen != 1 {
		t.Errorf("ErrStop: seen %d, err %v", seen, err)
	}

	r, ok, err := s.URI("c1", "http://site2.example/p05")
	if err != nil || !ok || r.Hops != 5 {
		t.Fatalf("URI = %+v %v %v", r, ok, err)
	}
	b = s.NewBatch()
	if err := b.DeleteURI("c1", "site2.example", "http://site2.example/p05"); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.URI("c1", "http://site2.example/p05"); ok {
		t.Error("deleted record still there")
	}
	if n, _ := s.CountSite("c1", "site2.example"); n != 9 {
		t.Errorf("CountSite after delete = %d, want 9", n)
	}
}

func TestDocuments(t *testing.T) {
	body := bytes.Repeat([]byte("<html>hello trawl</html>\n"), 1000)
	for _, tc := range []struct {
		name  string
		codec Codec
	}{{"none", CodecNone}, {"snappy", CodecSnappy}, {"flate", CodecFlate}} {
		t.Run(tc.name, func(t *testing.T) {
			s := openMem(t, Options{Codec: tc.codec, SetCodec: true, MaxDocSize: 1 << 20})
			b := s.NewBatch()
			for _, doc := range [][]byte{body, {}, []byte("x")} {
				if err := b.PutDocument("c", fmt.Sprintf("u%d", len(doc)), doc); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.PutDocument("c", "big", make([]byte, 2<<20)); err == nil {
				t.Error("oversized document accepted")
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			got, ok, err := s.Document("c", fmt.Sprintf("u%d", len(body)))
			if err != nil || !ok || !bytes.Equal(got, body) {
				t.Fatalf("Document: ok=%v err=%v equal=%v", ok, err, bytes.Equal(got, body))
			}
			got, ok, err = s.Document("c", "u0")
			if err != nil || !ok || len(got) != 0 {
				t.Fatalf("empty Document: %q %v %v", got, ok, err)
			}
			if n, _ := s.CountDocuments("c"); n != 3 {
				t.Errorf("CountDocuments = %d", n)
			}
		})
	}
}

func TestDecodeDocCorrupt(t *testing.T) {
	good, _ := encodeDoc(CodecFlate, []byte(strings.Repeat("abc", 100)))
	snap, _ := encodeDoc(CodecSnappy, []byte(strings.Repeat("abc", 100)))
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short", []byte{1}},
		{"codec", []byte{9, 0}},
		{"too large", []byte{0, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"none length", []byte{0, 5, 'a'}},
		{"flate truncated", good[:len(good)/2]},
		{"snappy truncated", snap[:len(snap)-3]},
		{"flate length lies", append([]byte{2, 3}, good[3:]...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeDoc(tc.b, 1<<20); err == nil {
				t.Error("no error")
			}
		})
	}
}

func FuzzDecodeDoc(f *testing.F) {
	for _, c := range []Codec{CodecNone, CodecSnappy, CodecFlate} {
		b, _ := encodeDoc(c, []byte("hello hello hello"))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeDoc(b, 1<<16)
	})
}

func TestAuxiliaryDatabases(t *testing.T) {
	s := openMem(t, Options{})
	now := time.Unix(1245064336, 0)
	cs := md5.Sum([]byte("content"))
	b := s.NewBatch()
	steps := []error{
		b.PutDNS(&DNSRecord{Host: "www.contoso.com", Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("::1")}, Expires: now.Add(time.Hour)}),
		b.PutDNS(&DNSRecord{Host: "bad.example", Failed: true, Expires: now.Add(time.Minute)}),
		b.PutRoute("c", "www.contoso.com", 3),
		b.PutRoute("c", "www.fabrikam.com", -1),
		b.PutChecksumOwner("c", cs, "http://www.contoso.com/"),
		b.AddChecksumURI("c", cs, "http://www.contoso.com/"),
		b.AddChecksumURI("c", cs, "http://www.contoso.com/index.html"),
		b.PutMeta("version", []byte{1}),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	rec, ok, err := s.DNS("www.contoso.com", now)
	if err != nil || !ok {
		t.Fatalf("DNS: %v %v", ok, err)
	}
	if d := cmp.Diff([]netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("::1")}, rec.Addrs, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); d != "" {
		t.Error(d)
	}
	if _, ok, _ := s.DNS("www.contoso.com", now.Add(2*time.Hour)); ok {
		t.Error("expired DNS record returned as valid")
	}
	if rec, ok, _ := s.DNS("bad.example", now); !ok || !rec.Failed {
		t.Error("negative DNS entry lost")
	}
	if n, ok, _ := s.Route("c", "www.contoso.com"); !ok || n != 3 {
		t.Errorf("Route = %d %v", n, ok)
	}
	if _, ok, _ := s.Route("other", "www.contoso.com"); ok {
		t.Error("route leaked across collections")
	}
	var routes []string
	if err := s.Routes("c", func(site string, n int64) error {
		routes = append(routes, fmt.Sprintf("%s=%d", site, n))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"www.contoso.com=3", "www.fabrikam.com=-1"}, routes); d != "" {
		t.Error(d)
	}
	if o, ok, _ := s.ChecksumOwner("c", cs); !ok || o != "http://www.contoso.com/" {
		t.Errorf("owner = %q", o)
	}
	var uris []string
	if err := s.ChecksumURIs("c", cs, func(u string) error { uris = append(uris, u); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(uris) != 2 {
		t.Errorf("ChecksumURIs = %v", uris)
	}
	if v, ok, _ := s.Meta("version"); !ok || !bytes.Equal(v, []byte{1}) {
		t.Error("meta lost")
	}
}

func FuzzUnmarshalDNS(f *testing.F) {
	f.Add(marshalDNS(&DNSRecord{Addrs: []netip.Addr{netip.MustParseAddr("10.1.2.3")}, Expires: time.Unix(5, 0)}))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = unmarshalDNS("h", b) })
}

func TestRawSpaces(t *testing.T) {
	s := openMem(t, Options{})
	b := s.NewBatch()
	for i := 0; i < 10; i++ {
		if err := b.SetRaw(SpaceQueue, []byte(fmt.Sprintf("a/%d", i)), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if err := b.SetRaw(SpaceSeen, []byte(fmt.Sprintf("a/%d", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	it, err := s.NewRawIter(SpaceQueue, []byte("a/"))
	if err != nil {
		t.Fatal(err)
	}
	if !it.SeekGE(SpaceQueue, []byte("a/5")) || string(it.Key()) != "a/5" || it.Value()[0] != 5 {
		t.Errorf("SeekGE landed on %q", it.Key())
	}
	it.Close()
	b = s.NewBatch()
	if err := b.DeletePrefix(SpaceQueue, []byte("a/")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	n := 0
	s.IterRaw(SpaceQueue, nil, func(k, v []byte) error { n++; return nil })
	m := 0
	s.IterRaw(SpaceSeen, nil, func(k, v []byte) error { m++; return nil })
	if n != 0 || m != 10 {
		t.Errorf("after DeletePrefix: queue %d keys, seen %d keys", n, m)
	}
}

func TestClosed(t *testing.T) {
	s, err := Open("db", Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.URI("c", "u"); !errors.Is(err, ErrClosed) {
		t.Errorf("URI after Close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}
