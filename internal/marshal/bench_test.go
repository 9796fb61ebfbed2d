package marshal

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// A typical CMD_UM_URI frame payload (MS-FSCMT 2.2.3.3; digest sections
// 1.3, 3.2, 3.6, 4.2): ({'cm': 25, 'dn': collection, 'pd': WQE}, 0), the
// WQE a 9-tuple with a 50-byte URI, an empty referrer and a redirect trail
// of two URIs.

type benchURI struct {
	URI, Scheme, Netloc, Host                  string
	Port                                       int64 // -1 for None
	Path, Query, Params, Frag, Creds, DefSchem string
	SkipFrag, Parsed                           int64
	HostIDNA                                   string
}

type benchRedirect struct {
	URI  string
	Kind int64
}

type benchExtra struct {
	Key   int64
	Value string
	None  bool
}

type benchWQE struct {
	URI, Referrer        benchURI
	URIFlags, FrameFlags int64
	Redirects            []benchRedirect
	QueueFlags, Cycle    int64
	Extra                []benchExtra
}

type benchURIMsg struct {
	Cmd        int64
	Collection string
	Entry      benchWQE
	Priority   int64
}

func benchMessage() benchURIMsg {
	const uri = "http://www.contoso.com/products/catalog/item-0042/" // 50 bytes
	return benchURIMsg{
		Cmd:        25,
		Collection: "webcrawl",
		Entry: benchWQE{
			URI: benchURI{URI: uri, Scheme: "http", Netloc: "www.contoso.com", Host: "www.contoso.com", Port: 80,
				Path: "/products/catalog/item-0042/", SkipFrag: 1, Parsed: 1, HostIDNA: "www.contoso.com"},
			Referrer: benchURI{Port: -1, SkipFrag: 1, Parsed: 1},
			URIFlags: 0x10, FrameFlags: 0,
			Redirects: []benchRedirect{
				{"http://contoso.com/products/catalog/item-0042", 301},
				{"http://www.contoso.com/products/catalog/item-0042", 302},
			},
			QueueFlags: 0, Cycle: -1,
			Extra: []benchExtra{{Key: 16, None: true}, {Key: 101, Value: "70-86-12-20"}},
		},
		Priority: 0,
	}
}

func appendBenchURI(b []byte, u *benchURI) []byte {
	b = AppendTupleHeader(b, 14)
	b = AppendString(b, u.URI)
	b = AppendString(b, u.Scheme)
	b = AppendString(b, u.Netloc)
	b = AppendString(b, u.Host)
	if u.Port < 0 {
		b = AppendNone(b)
	} else {
		b = AppendInt(b, u.Port)
	}
	for _, s := range [...]string{u.Path, u.Query, u.Params, u.Frag, u.Creds, u.DefSchem} {
		b = AppendString(b, s)
	}
	b = AppendInt(b, u.SkipFrag)
	b = AppendInt(b, u.Parsed)
	return AppendString(b, u.HostIDNA)
}

// appendBenchMsg encodes m as cmt will: Append calls, no Values.
func appendBenchMsg(b []byte, m *benchURIMsg) []byte {
	b = AppendTupleHeader(b, 2)
	b = AppendDictStart(b)
	b = AppendString(b, "cm")
	b = AppendInt(b, m.Cmd)
	b = AppendString(b, "dn")
	b = AppendString(b, m.Collection)
	b = AppendString(b, "pd")
	e := &m.Entry
	b = AppendTupleHeader(b, 9)
	b = AppendString(b, "WQE")
	b = appendBenchURI(b, &e.URI)
	b = appendBenchURI(b, &e.Referrer)
	b = AppendInt(b, e.URIFlags)
	b = AppendInt(b, e.FrameFlags)
	b = AppendListHeader(b, len(e.Redirects))
	for _, r := range e.Redirects {
		b = AppendTupleHeader(b, 2)
		b = AppendString(b, r.URI)
		b = AppendInt(b, r.Kind)
	}
	b = AppendInt(b, e.QueueFlags)
	b = AppendInt(b, e.Cycle)
	b = AppendDictStart(b)
	for _, x := range e.Extra {
		b = AppendInt(b, x.Key)
		if x.None {
			b = AppendNone(b)
		} else {
			b = AppendString(b, x.Value)
		}
	}
	b = AppendDictEnd(b)
	b = AppendDictEnd(b)
	return AppendInt(b, m.Priority)
}

var errBench = errors.New("marshal: bad benchmark message")

func readBenchURI(r *Reader, u *benchURI) error {
	if n, err := r.ReadTupleHeader(); err != nil || n != 14 {
		return errors.Join(errBench, err)
	}
	var err error
	for _, p := range [...]*string{&u.URI, &u.Scheme, &u.Netloc, &u.Host} {
		if *p, err = r.ReadString(); err != nil {
			return err
		}
	}
	if c, _ := r.Peek(); c == 'N' {
		u.Port = -1
		err = r.ReadNone()
	} else {
		u.Port, err = r.ReadInt()
	}
	if err != nil {
		return err
	}
	for _, p := range [...]*string{&u.Path, &u.Query, &u.Params, &u.Frag, &u.Creds, &u.DefSchem} {
		if *p, err = r.ReadString(); err != nil {
			return err
		}
	}
	if u.SkipFrag, err = r.ReadInt(); err != nil {
		return err
	}
	if u.Parsed, err = r.ReadInt(); err != nil {
		return err
	}
	u.HostIDNA, err = r.ReadString()
	return err
}

// readBenchMsg decodes a CMD_UM_URI message straight into m, as cmt does:
// dict keys in any order, no Values.
func readBenchMsg(r *Reader, m *benchURIMsg) error {
	if n, err := r.ReadTupleHeader(); err != nil || n != 2 {
		return errors.Join(errBench, err)
	}
	if err := r.ReadDictStart(); err != nil {
		return err
	}
	for {
		more, err := r.DictNext()
		if err != nil {
			return err
		}
		if !more {
			break
		}
		key, err := r.ReadBytes()
		if err != nil {
			return err
		}
		switch string(key) {
		case "cm":
			m.Cmd, err = r.ReadInt()
		case "dn":
			m.Collection, err = r.ReadString()
		case "pd":
			err = readBenchWQE(r, &m.Entry)
		default:
			err = r.Skip()
		}
		if err != nil {
			return err
		}
	}
	var err error
	m.Priority, err = r.ReadInt()
	return err
}

func readBenchWQE(r *Reader, e *benchWQE) error {
	if n, err := r.ReadTupleHeader(); err != nil || n != 9 {
		return errors.Join(errBench, err)
	}
	if id, err := r.ReadBytes(); err != nil || string(id) != "WQE" {
		return errors.Join(errBench, err)
	}
	if err := readBenchURI(r, &e.URI); err != nil {
		return err
	}
	if err := readBenchURI(r, &e.Referrer); err != nil {
		return err
	}
	var err error
	if e.URIFlags, err = r.ReadInt(); err != nil {
		return err
	}
	if e.FrameFlags, err = r.ReadInt(); err != nil {
		return err
	}
	n, err := r.ReadListHeader()
	if err != nil {
		return err
	}
	e.Redirects = e.Redirects[:0]
	for range n {
		if k, err := r.ReadTupleHeader(); err != nil || k != 2 {
			return errors.Join(errBench, err)
		}
		var rd benchRedirect
		if rd.URI, err = r.ReadString(); err != nil {
			return err
		}
		if rd.Kind, err = r.ReadInt(); err != nil {
			return err
		}
		e.Redirects = append(e.Redirects, rd)
	}
	if e.QueueFlags, err = r.ReadInt(); err != nil {
		return err
	}
	if e.Cycle, err = r.ReadInt(); err != nil {
		return err
	}
	if err := r.ReadDictStart(); err != nil {
		return err
	}
	e.Extra = e.Extra[:0]
	for {
		more, err := r.DictNext()
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		var x benchExtra
		if x.Key, err = r.ReadInt(); err != nil {
			return err
		}
		if c, _ := r.Peek(); c == 'N' {
			x.None, err = true, r.ReadNone()
		} else {
			x.Value, err = r.ReadString()
		}
		if err != nil {
			return err
		}
		e.Extra = append(e.Extra, x)
	}
}

// TestURIMessage checks the benchmark message: its Value form, its
// Reader form, and, when TRAWL_MARSHAL_BENCH_OUT names a file, writes its
// bytes there for scripts/bench-marshal.sh.
func TestURIMessage(t *testing.T) {
	m := benchMessage()
	data := appendBenchMsg(nil, &m)
	v, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := "({b'cm': 25, b'dn': b'webcrawl', b'pd': (b'WQE', (b'http://www.contoso.com/products/catalog/item-0042/', b'http', b'www.contoso.com', b'www.contoso.com', 80, b'/products/catalog/item-0042/', b'', b'', b'', b'', b'', 1, 1, b'www.contoso.com'), (b'', b'', b'', b'', None, b'', b'', b'', b'', b'', b'', 1, 1, b''), 16, 0, [(b'http://contoso.com/products/catalog/item-0042', 301), (b'http://www.contoso.com/products/catalog/item-0042', 302)], 0, -1, {16: None, 101: b'70-86-12-20'})}, 0)"
	if got := FormatPython(v); got != want {
		t.Errorf("message is\n%s\nwant\n%s", got, want)
	}
	enc, err := Encode(v)
	if err != nil || !bytes.Equal(enc, data) {
		t.Errorf("Encode of the Value differs from the Append form: %v", err)
	}
	var got benchURIMsg
	if err := readBenchMsg(NewReader(data, Limits{}), &got); err != nil {
		t.Fatalf("readBenchMsg: %v", err)
	}
	if again := appendBenchMsg(nil, &got); !bytes.Equal(again, data) {
		t.Errorf("struct round trip differs")
	}
	if out := os.Getenv("TRAWL_MARSHAL_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("CMD_UM_URI message: %d bytes", len(data))
}

func BenchmarkDecodeURIMessage(b *testing.B) {
	m := benchMessage()
	data := appendBenchMsg(nil, &m)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for range b.N {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeURIMessageReader(b *testing.B) {
	m := benchMessage()
	data := appendBenchMsg(nil, &m)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	r := NewReader(nil, Limits{})
	var got benchURIMsg
	for range b.N {
		r.Reset(data)
		if err := readBenchMsg(r, &got); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeURIMessage(b *testing.B) {
	m := benchMessage()
	buf := appendBenchMsg(nil, &m)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		buf = appendBenchMsg(buf[:0], &m)
	}
}

func BenchmarkEncodeURIMessageValue(b *testing.B) {
	m := benchMessage()
	v, err := Decode(appendBenchMsg(nil, &m))
	if err != nil {
		b.Fatal(err)
	}
	buf, _ := AppendValue(nil, v)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		buf, _ = AppendValue(buf[:0], v)
	}
}
