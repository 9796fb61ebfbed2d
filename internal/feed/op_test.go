package feed

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func fullOp() Operation {
	return Operation{
		Seq: 42, Kind: Update, Priority: High, Destination: "Global_News", Collection: "collection_A",
		URI: "http://www.contoso.com/news/1.html", MIME: "text/html; charset=utf-8", Title: "News ☃",
		Content: []byte("<html><title>News</title>hello</html>"), Text: "hello",
		Anchors:    []string{"latest news", "news"},
		Links:      []string{"http://www.contoso.com/", "http://www.contoso.com/news/2.html"},
		Duplicates: []string{"http://www.contoso.com/news/1-copy.html"},
		Redirects:  []string{"http://www.contoso.com/old/1.html", "http://contoso.com/news/1.html"},
		Mirrors:    []string{"http://mirror.contoso.com/news/1.html"},
		Meta: Metadata{
			Headers:      []Header{{"Content-Type", "text/html"}, {"ETag", `"x"`}},
			LastModified: time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC),
			Checksum:     []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
			Language:     "en", Description: "d", Extraction: "html",
		},
	}
}

func TestOperationRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		op   Operation
	}{
		{"full", fullOp()},
		{"minimal remove", Operation{Seq: 1, Kind: Remove, Destination: "default:c", URI: "http://a/"}},
		{"add without content", Operation{Seq: 1 << 60, Kind: Add, Destination: "d", URI: "ftp://x/y"}},
		{"update fields", Operation{Seq: 7, Kind: UpdateFields, Destination: "default:c", Collection: "c", URI: "http://a/",
			Rank: 1.25, Anchors: []string{"zeppelin airship"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.op.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var got Operation
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.op, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// encodeV2 encodes op as version 2 wrote it (op has no reported URIs).
func encodeV2(t testing.TB, op Operation) []byte {
	t.Helper()
	b, err := op.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{'F', 2}, b[2:len(b)-3-8]...) // without the three uvarint(0) lists and the rank
}

// TestOperationDecodeVersion3 reads an operation as version 3 wrote it
// (no rank); version 3 cannot carry an update-fields operation.
func TestOperationDecodeVersion3(t *testing.T) {
	op := fullOp()
	b, err := op.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	v3 := append([]byte{'F', 3}, b[2:len(b)-8]...)
	var got Operation
	if err := got.UnmarshalBinary(v3); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(op, got); diff != "" {
		t.Errorf("version 3 (-want +got):\n%s", diff)
	}
	v3[2] = byte(UpdateFields)
	if err := got.UnmarshalBinary(v3); !errors.Is(err, ErrCorrupt) {
		t.Errorf("update-fields in version 3: %v, want ErrCorrupt", err)
	}
}

// TestOperationDecodeVersion2 reads an operation as version 2 wrote it
// (links, no reported URIs): outboxes written before ds_meta_info keep
// their operations.
func TestOperationDecodeVersion2(t *testing.T) {
	op := fullOp()
	op.Duplicates, op.Redirects, op.Mirrors = nil, nil, nil
	v2 := encodeV2(t, op)
	var got Operation
	if err := got.UnmarshalBinary(v2); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(op, got); diff != "" {
		t.Errorf("version 2 (-want +got):\n%s", diff)
	}
	if err := got.UnmarshalBinary(append(v2, 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 2 with a duplicates count: %v, want ErrCorrupt", err)
	}
}

// TestOperationDecodeVersion1 reads an operation as version 1 wrote it
// (no links after the extraction): outboxes written before links keep
// their operations.
func TestOperationDecodeVersion1(t *testing.T) {
	op := fullOp()
	op.Links, op.Duplicates, op.Redirects, op.Mirrors = nil, nil, nil, nil
	b := encodeV2(t, op)
	v1 := append([]byte{'F', 1}, b[2:len(b)-1]...) // without uvarint(0 links)
	var got Operation
	if err := got.UnmarshalBinary(v1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(op, got); diff != "" {
		t.Errorf("version 1 (-want +got):\n%s", diff)
	}
	if err := got.UnmarshalBinary(append(v1, 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 1 with a links count: %v, want ErrCorrupt", err)
	}
}

func TestOperationDecodeErrors(t *testing.T) {
	fo := fullOp()
	good, err := fo.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	fo2 := fo
	fo2.Duplicates, fo2.Redirects, fo2.Mirrors = nil, nil, nil
	good2 := encodeV2(t, fo2)
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"bad magic", append([]byte{'X'}, good[1:]...)},
		{"bad version", append([]byte{'F', 9}, good[2:]...)},
		{"bad kind", append([]byte{'F', 1, 0}, good[3:]...)},
		{"bad priority", append([]byte{'F', 1, 2, 7}, good[4:]...)},
		{"truncated", good[:len(good)-3]},
		{"trailing", append(append([]byte(nil), good...), 0)},
		{"huge length", []byte{'F', 1, 1, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"huge link count", append(append([]byte(nil), good2[:len(good2)-len(fo.Links[0])-len(fo.Links[1])-3]...), 0xff, 0xff, 0x03)},
		{"huge mirror count", append(append([]byte(nil), good[:len(good)-len(fo.Mirrors[0])-2]...), 0xff, 0xff, 0x03)},
		{"duplicates in version 2", append(append([]byte(nil), good2...), 1, 1, 'x', 0, 0)},
		{"NaN rank", append(append([]byte(nil), good[:len(good)-8]...), 0x7f, 0xf8, 0, 0, 0, 0, 0, 1)},
		{"bad kind 5", append([]byte{'F', 4, 5}, good[3:]...)},
		{"huge anchor count", append([]byte{'F', 1, 1, 0, 1, 1, 'd', 0, 1, 'u', 0, 0, 0, 0, 0xff, 0xff, 0x03}, make([]byte, 20)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var op Operation
			if err := op.UnmarshalBinary(tt.in); !errors.Is(err, ErrCorrupt) {
				t.Errorf("UnmarshalBinary = %v, want ErrCorrupt", err)
			}
		})
	}
}

func FuzzOperationDecode(f *testing.F) {
	for _, op := range []Operation{fullOp(), {Seq: 1, Kind: Remove, Destination: "d", URI: "u"},
		{Seq: 2, Kind: UpdateFields, Destination: "d", URI: "u", Rank: 0.5, Anchors: []string{"a b"}}} {
		b, err := op.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{'F', 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		var op Operation
		if err := op.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := op.MarshalBinary()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var again Operation
		if err := again.UnmarshalBinary(b); err != nil {
			t.Fatalf("decode of re-encoding: %v", err)
		}
		if diff := cmp.Diff(op, again); diff != "" {
			t.Fatalf("not stable (-first +second):\n%s", diff)
		}
	})
}

func TestPriorityOf(t *testing.T) {
	if PriorityOf(0x00200000|0x1) != High || PriorityOf(0x00400000) != Normal {
		t.Error("URIF_FEED_HIGHPRI not mapped")
	}
}

// TestIndexOpReportedURIs checks that the URI lists of an operation reach
// the index document.
func TestIndexOpReportedURIs(t *testing.T) {
	op := fullOp()
	got, err := IndexOp(op)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{op.Links, op.Duplicates, op.Redirects, op.Mirrors}
	if diff := cmp.Diff(want, [][]string{got.Doc.Links, got.Doc.Duplicates, got.Doc.Redirects, got.Doc.Mirrors}); diff != "" {
		t.Errorf("IndexOp lists (-want +got):\n%s", diff)
	}
}
