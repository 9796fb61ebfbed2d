package cmt

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/marshal"
)

// decodeBoth decodes body with a Decoder that guesses the command from the
// end of the frame and with one that does not (scan, then fill), and
// fails the test unless both give the same frame or the same error.
func decodeBoth(t testing.TB, body []byte, lim marshal.Limits) (Frame, error) {
	t.Helper()
	fast := NewDecoder(lim)
	careful := NewDecoder(lim)
	careful.noGuess = true
	f1, err1 := fast.Decode(body)
	f2, err2 := careful.Decode(body)
	if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
		t.Fatalf("body %X: guessing decoder: %v; careful decoder: %v", body, err1, err2)
	}
	if err1 != nil {
		return f1, err1
	}
	if f1.Priority != f2.Priority || f1.Message.Code() != f2.Message.Code() {
		t.Fatalf("body %X: guessing decoder: %v %v; careful decoder: %v %v", body,
			f1.Priority, f1.Message.Code(), f2.Priority, f2.Message.Code())
	}
	e1, err := EncodePayload(f1.Message, f1.Priority)
	if err != nil {
		t.Fatalf("body %X: decoded message does not encode: %v", body, err)
	}
	e2, _ := EncodePayload(f2.Message, f2.Priority)
	if !bytes.Equal(e1, e2) {
		t.Fatalf("body %X: the two decoders' messages encode differently:\n%X\n%X", body, e1, e2)
	}
	return f1, nil
}

// dictBody builds a frame body from a message dictionary in the given
// order and a priority.
func dictBody(t testing.TB, d marshal.Dict, prio int64) []byte {
	t.Helper()
	b, err := marshal.AppendValue(marshal.AppendTupleHeader(nil, 2), d)
	if err != nil {
		t.Fatal(err)
	}
	return marshal.AppendInt(b, prio)
}

// fakeCmTail is 12 bytes that look like a last dict entry 'cm': 25.
const fakeCmTail = "s\x02\x00\x00\x00cmi\x19\x00\x00\x00"

func TestDecodeGuessAndCareful(t *testing.T) {
	entry, err := marshal.Decode(AppendEntry(nil, &Entry{URI: contosoURI, Referrer: EmptyURIStructure(), Cycle: -1}))
	if err != nil {
		t.Fatal(err)
	}
	cm := func(c Command) marshal.Pair { return marshal.Pair{Key: marshal.Str(KeyCmd), Value: marshal.Int(c)} }
	dn := marshal.Pair{Key: marshal.Str(KeyDSpecName), Value: marshal.Str("web")}
	pd := marshal.Pair{Key: marshal.Str(KeyData), Value: entry}
	tests := []struct {
		name  string
		body  []byte
		want  Command // 0: an error
		isErr error
	}{
		{"cm last", dictBody(t, marshal.Dict{dn, pd, cm(CmdUMURI)}, 0), CmdUMURI, nil},
		{"cm first", dictBody(t, marshal.Dict{cm(CmdUMURIUrg), dn, pd}, 1), CmdUMURIUrg, nil},
		{"cm twice, the last wins", dictBody(t, marshal.Dict{cm(CmdUMURI), dn, pd, cm(CmdUMURIUrg)}, 0), CmdUMURIUrg, nil},
		{"cm twice, the last is not at the end", dictBody(t, marshal.Dict{cm(CmdUMURI), dn, pd, cm(CmdUMURIUrg),
			{Key: marshal.Str("zz"), Value: marshal.Int(1)}}, 0), CmdUMURIUrg, nil},
		// The end of the frame looks like 'cm': 25 but is the end of a
		// string under an unknown key; the command is 26.
		{"fake cm at the end", dictBody(t, marshal.Dict{cm(CmdUMURIUrg), dn, pd,
			{Key: marshal.Str("zz"), Value: marshal.Str("x" + fakeCmTail)}}, 0), CmdUMURIUrg, nil},
		{"guess right, key missing", dictBody(t, marshal.Dict{dn, cm(CmdUMURI)}, 0), 0, ErrMalformed},
		{"guess right, bad priority", dictBody(t, marshal.Dict{dn, pd, cm(CmdUMURI)}, 2), 0, ErrMalformed},
		{"guess right, bad entry", dictBody(t, marshal.Dict{dn, {Key: marshal.Str(KeyData), Value: marshal.Int(1)}, cm(CmdUMURI)}, 0), 0, ErrMalformed},
		{"guess of an unknown command", dictBody(t, marshal.Dict{dn, cm(999)}, 0), 0, ErrUnknownCommand},
		{"shape-dependent command", dictBody(t, marshal.Dict{dn, cm(CmdUMConfState)}, 1), CmdUMConfState, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := decodeBoth(t, tt.body, marshal.Limits{})
			if tt.want == 0 {
				if !errors.Is(err, tt.isErr) {
					t.Fatalf("error %v, want %v", err, tt.isErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Message.Code() != tt.want {
				t.Fatalf("command %v, want %v", f.Message.Code(), tt.want)
			}
		})
	}
	// CMD_UM_CONF_STATE without PKT_DATA is the request.
	f, _ := DecodeFrame(tests[len(tests)-1].body)
	if _, ok := f.Message.(*UMConfStateRequest); !ok {
		t.Errorf("CMD_UM_CONF_STATE without pd decoded as %T", f.Message)
	}
}

// CPython 2 interns identifier-like strings: 'cm' may be a 't' at the end
// and the strings before it 'R' references. The guess and the careful
// reading (which reads the dictionary twice) agree.
func TestDecodeGuessInternedKeys(t *testing.T) {
	// ({t'dn': t'web', t'pd': <entry>, t'cm': 25}, 0) with the entry's
	// host interned and referred to.
	var b []byte
	b = marshal.AppendTupleHeader(b, 2)
	b = marshal.AppendDictStart(b)
	tstr := func(s string) {
		b = append(b, 't', byte(len(s)), 0, 0, 0)
		b = append(b, s...)
	}
	ref := func(i byte) { b = append(b, 'R', i, 0, 0, 0) }
	tstr("dn")
	tstr("web")
	tstr("pd")
	b = marshal.AppendTupleHeader(b, 9)
	tstr("WQE")
	b = marshal.AppendTupleHeader(b, 14)
	b = marshal.AppendString(b, "http://www.contoso.com/")
	tstr("http")
	tstr("www.contoso.com") // interned string 5
	ref(5)
	b = marshal.AppendInt(b, 80)
	b = marshal.AppendString(b, "/")
	for range 5 {
		b = marshal.AppendString(b, "")
	}
	b = marshal.AppendInt(b, 1)
	b = marshal.AppendInt(b, 1)
	ref(5)
	b = AppendURIStructure(b, &URIStructure{Port: NoPort})
	for _, v := range []int64{0, 0} {
		b = marshal.AppendInt(b, v)
	}
	b = marshal.AppendListHeader(b, 0)
	b = marshal.AppendInt(b, 0)
	b = marshal.AppendInt(b, -1)
	b = marshal.AppendDictEnd(marshal.AppendDictStart(b))
	tstr("cm")
	b = marshal.AppendInt(b, int64(CmdUMURI))
	b = marshal.AppendDictEnd(b)
	b = marshal.AppendInt(b, 0)
	if _, ok := tailCommand(b); !ok {
		t.Fatalf("tailCommand does not see 'cm' in %X", b)
	}
	f, err := decodeBoth(t, b, marshal.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := &UMURI{Collection: "web", Entry: Entry{
		URI: URIStructure{URI: "http://www.contoso.com/", Scheme: "http", Netloc: "www.contoso.com",
			Host: "www.contoso.com", Port: 80, Path: "/", SkipFragments: true, Parsed: true, HostIDNA: "www.contoso.com"},
		Referrer: URIStructure{Port: NoPort},
		Cycle:    -1,
	}}
	if diff := cmp.Diff(Message(want), f.Message); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeEveryMessageBothWays(t *testing.T) {
	for _, tt := range allMessages() {
		for _, p := range []Priority{PriorityNormal, PriorityHigh} {
			body, err := EncodePayload(tt.msg, p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := decodeBoth(t, body, marshal.Limits{}); err != nil {
				t.Errorf("%v: %v", tt.msg.Code(), err)
			}
		}
	}
}

// FuzzDecodeBody: the guessing and the careful decoder agree on every
// frame body, and never panic.
func FuzzDecodeBody(f *testing.F) {
	for _, tt := range allMessages() {
		body, err := EncodePayload(tt.msg, PriorityNormal)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	body, _ := EncodePayload(&UMURI{Collection: "web", Entry: benchEntry()}, PriorityHigh)
	f.Add(body)
	f.Add(append(append(body[:len(body)-18:len(body)-18], fakeCmTail...), '0', 'i', 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _ = decodeBoth(t, body, marshal.Limits{MaxDepth: 100})
	})
}
