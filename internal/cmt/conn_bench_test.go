package cmt

import (
	"context"
	"net"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/marshal"
)

// benchEntry is a crawl queue entry with a 50-byte URI and a redirect
// trail of two hops.
func benchEntry() Entry {
	const uri = "http://www.example.com/section/page-000123456.html" // 50 bytes
	return Entry{
		URI: URIStructure{URI: uri, Scheme: "http", Netloc: "www.example.com", Host: "www.example.com", Port: 80,
			Path: "/section/page-000123456.html", SkipFragments: true, Parsed: true, HostIDNA: "www.example.com"},
		Referrer: URIStructure{URI: "http://www.example.com/section/", Scheme: "http", Netloc: "www.example.com",
			Host: "www.example.com", Port: 80, Path: "/section/", SkipFragments: true, Parsed: true, HostIDNA: "www.example.com"},
		Flags: URIFUnscreened | URIFRedirect301,
		Redirects: []RedirectHop{
			{URI: "http://example.com/section/page-000123456.html", Type: URIFRedirect301},
			{URI: "http://www.example.com/s/page-000123456.html", Type: URIFRedirect302},
		},
		Cycle: 3,
	}
}

func TestBenchEntryURILength(t *testing.T) {
	if n := len(benchEntry().URI.URI); n != 50 {
		t.Fatalf("URI of %d bytes, want 50", n)
	}
}

// BenchmarkConnURI sends CMD_UM_URI messages from one Conn to another over
// loopback TCP and reports messages per second; allocs/op counts both
// ends (encode, queue, write, read, decode, deliver).
func BenchmarkConnURI(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			b.Error(err)
		}
		accepted <- c
	}()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	sender := NewConn(cc, ConnConfig{})
	receiver := NewConn(<-accepted, ConnConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, 2)
	go func() { sender.Run(ctx); done <- struct{}{} }()
	go func() { receiver.Run(ctx); done <- struct{}{} }()

	msg := &UMURI{Collection: "web", Entry: benchEntry()}
	frame, _ := EncodeFrame(msg, PriorityNormal)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for range b.N {
			if err := sender.Send(ctx, msg, PriorityNormal); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	for range b.N {
		f, ok := <-receiver.Incoming()
		if !ok {
			b.Fatal("receiver closed")
		}
		if f.Message.Code() != CmdUMURI {
			b.Fatal("wrong message")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	cancel()
	<-done
	<-done
}

// BenchmarkEncodeURI and BenchmarkDecodeURI measure the codec alone.
func BenchmarkEncodeURI(b *testing.B) {
	msg := &UMURI{Collection: "web", Entry: benchEntry()}
	var buf []byte
	b.ReportAllocs()
	for range b.N {
		var err error
		if buf, err = AppendFrame(buf[:0], msg, PriorityNormal); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeURI(b *testing.B) {
	frame, _ := EncodeFrame(&UMURI{Collection: "web", Entry: benchEntry()}, PriorityNormal)
	body := frame[HeaderLen:]
	dec := NewDecoder(marshal.Limits{})
	b.ReportAllocs()
	for range b.N {
		if _, err := dec.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePPDUPAdd(b *testing.B) {
	frame, _ := EncodeFrame(&PPDUPAdd{Collection: "web", NodeID: "70-86-12-20",
		URI: "http://www.example.com/section/page-000123456.html", Checksum: cs1}, PriorityNormal)
	body := frame[HeaderLen:]
	dec := NewDecoder(marshal.Limits{})
	b.ReportAllocs()
	for range b.N {
		if _, err := dec.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

// TestURIFrameBody checks that the benchmark message decodes to itself
// and, when TRAWL_CMT_BENCH_OUT names a file, writes its frame body there
// for scripts/bench-marshal.sh, which times CPython's marshal on the same
// bytes.
func TestURIFrameBody(t *testing.T) {
	msg := &UMURI{Collection: "web", Entry: benchEntry()}
	body, err := EncodePayload(msg, PriorityNormal)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Message(msg), got); diff != "" {
		t.Fatalf("decoded message differs (-want +got):\n%s", diff)
	}
	if out := os.Getenv("TRAWL_CMT_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkDecodeMessageURI measures DecodeMessage, which makes a new
// Decoder per call, on the CMD_UM_URI frame body.
func BenchmarkDecodeMessageURI(b *testing.B) {
	body, _ := EncodePayload(&UMURI{Collection: "web", Entry: benchEntry()}, PriorityNormal)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for range b.N {
		if _, err := DecodeMessage(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodePayloadURI measures AppendPayload into a reused buffer:
// the frame body alone, as CPython's marshal.dumps writes it.
func BenchmarkEncodePayloadURI(b *testing.B) {
	msg := &UMURI{Collection: "web", Entry: benchEntry()}
	var buf []byte
	b.ReportAllocs()
	for range b.N {
		var err error
		if buf, err = AppendPayload(buf[:0], msg, PriorityNormal); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}
