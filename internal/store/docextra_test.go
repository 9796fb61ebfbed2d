package store

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocumentCodecPerDocument: documents of one store keep the codec each
// was written with.
func TestDocumentCodecPerDocument(t *testing.T) {
	s := openMem(t, Options{})
	body := bytes.Repeat([]byte("compressible text "), 100)
	b := s.NewBatch()
	for _, c := range []Codec{CodecNone, CodecSnappy, CodecFlate} {
		if err := b.PutDocumentCodec("c", "http://a/"+string('0'+rune(c)), body, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Codec{CodecNone, CodecSnappy, CodecFlate} {
		uri := "http://a/" + string('0'+rune(c))
		got, ok, err := s.DocumentCodec("c", uri)
		if err != nil || !ok || got != c {
			t.Errorf("DocumentCodec(%s) = %d %v %v, want %d", uri, got, ok, err, c)
		}
		doc, ok, err := s.Document("c", uri)
		if err != nil || !ok || !bytes.Equal(doc, body) {
			t.Errorf("Document(%s) = %d bytes %v %v", uri, len(doc), ok, err)
		}
	}
	if err := s.NewBatch().PutDocumentCodec("c", "http://a/x", body, 9); err == nil {
		t.Error("unknown codec accepted")
	}
}

// TestHeaders: a response header is stored and read back, and goes with
// its document.
func TestHeaders(t *testing.T) {
	s := openMem(t, Options{})
	hdr := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")
	b := s.NewBatch()
	for _, u := range []string{"http://a/1", "http://a/2"} {
		if err := b.PutDocument("c", u, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := b.PutHeader("c", u, hdr); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PutHeader("c", "http://a/big", make([]byte, MaxHeaderSize+1)); err == nil {
		t.Error("oversized header accepted")
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Header("c", "http://a/1"); err != nil || !ok || !bytes.Equal(got, hdr) {
		t.Fatalf("Header = %q %v %v", got, ok, err)
	}
	b = s.NewBatch()
	_ = b.DeleteDocument("c", "http://a/1")
	_ = b.DeleteURI("c", "a", "http://a/2")
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://a/1", "http://a/2"} {
		if _, ok, err := s.Header("c", u); err != nil || ok {
			t.Errorf("header of %s survives its document (%v)", u, err)
		}
	}
}

// TestDocumentCount: the count starts from a scan and follows the batches:
// new documents count, overwrites do not, deletes (of the document or the
// whole URI) subtract, several operations on one URI in a batch count once,
// and other collections are apart.
func TestDocumentCount(t *testing.T) {
	s := openMem(t, Options{})
	put := func(coll string, uris ...string) {
		b := s.NewBatch()
		for _, u := range uris {
			if err := b.PutDocument(coll, u, []byte(u)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	put("c", "http://a/1", "http://a/2")
	count := func() int64 {
		n, err := s.DocumentCount("c")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var got []int64
	got = append(got, count()) // 2, scanned
	put("c", "http://a/2", "http://a/3", "http://a/3")
	put("d", "http://a/9")
	got = append(got, count()) // 3
	b := s.NewBatch()
	_ = b.DeleteDocument("c", "http://a/1")
	_ = b.DeleteURI("c", "a", "http://a/2")
	_ = b.DeleteDocument("c", "http://a/missing")
	_ = b.PutDocument("c", "http://a/4", []byte("4"))
	_ = b.DeleteDocument("c", "http://a/4")
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	got = append(got, count()) // 1
	b = s.NewBatch()
	_ = b.PutDocument("c", "http://a/5", []byte("5"))
	b.Discard()
	got = append(got, count()) // 1: discarded
	b = s.NewBatch()
	if err := b.DeletePrefix(SpaceDoc, AppendLP(nil, "c")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	got = append(got, count()) // 0: scanned again
	if d := cmp.Diff([]int64{2, 3, 1, 1, 0}, got); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
	if n, err := s.DocumentCount("d"); err != nil || n != 1 {
		t.Errorf("collection d: %d %v", n, err)
	}
}
