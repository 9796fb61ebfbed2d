package wire

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seeds are frames of the protocol as the roles send them.
func seeds() []*Frame {
	aor := AOR{Name: NameDispatcher, ObjectID: "cd1", Host: "127.0.0.1", Port: 13390, Type: IfaceSessionFactory, Version: "5.1"}
	return []*Frame{
		Call(1, IfaceNameServer, "bind", aor.Value()),
		Call(2, IfaceNameServer, "resolve", Str(NameDispatcher), Str(IfaceSessionFactory), Str("5.1")),
		ReplyTo(Call(2, IfaceNameServer, "resolve"), aor.Value()),
		Raise(Call(3, IfaceNameServer, "resolve"), ExcResolve, "no binding"),
		Call(4, IfaceMasterDispatcher, "register_dispatcher", I64(1)),
		Call(5, IfaceSessionFactory, MethodPing),
		Call(6, IfaceDispatcherNode, "create", I64(7), Str("web"), GuaranteeSet(0), I64(0), Bln(true)),
		Raise(Call(7, IfaceDispatcherNode, "create"), ExcUnknownCollection, "collection nope is unknown"),
		Call(8, IfaceSession, "process", I64(7), Lst(Byt([]byte("F\x03op")), Byt(nil))),
		{Kind: Oneway, ID: 9, Object: IfaceSession, Method: "callback", Args: []Value{Lst(Lst(I64(1), Str("")))}},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, f := range seeds() {
		b, err := AppendFrame(nil, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeFrame(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if diff := cmp.Diff(f, got, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
			t.Errorf("%s: round trip (-want +got):\n%s", f, diff)
		}
		g2, err := ReadFrame(bufio.NewReader(bytes.NewReader(b)))
		if err != nil || g2.String() != f.String() {
			t.Errorf("ReadFrame: %v %v", g2, err)
		}
	}
}

func TestLayout(t *testing.T) {
	b, err := AppendFrame(nil, Call(5, IfaceSessionFactory, MethodPing))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte{'D', 'F', 1, 1, 0, 0, 0, byte(1 + 1 + len(IfaceSessionFactory) + 1 + 6 + 1), 5, byte(len(IfaceSessionFactory))}, IfaceSessionFactory...)
	want = append(want, 6)
	want = append(want, "__ping"...)
	want = append(want, 0)
	if !bytes.Equal(b, want) {
		t.Errorf("got % x\nwant % x", b, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	good, _ := AppendFrame(nil, Call(6, IfaceDispatcherNode, "create", I64(7), Str("web"), GuaranteeSet(0), I64(0), Bln(true)))
	deep := Value{Tag: List}
	for i := 0; i < MaxDepth; i++ {
		deep = Lst(deep)
	}
	tooDeep := []byte{'D', 'F', 1, 1, 0, 0, 0, 0, 1, 0, 0, 1}
	for i := 0; i < MaxDepth+1; i++ {
		tooDeep = append(tooDeep, 'l', 1)
	}
	tooDeep = append(tooDeep, 'i', 0)
	tooDeep[7] = byte(len(tooDeep) - 8)
	cases := map[string]struct {
		b    []byte
		want string
	}{
		"magic":     {append([]byte("XX"), good[2:]...), "bad magic"},
		"version":   {append([]byte{'D', 'F', 2}, good[3:]...), "version"},
		"kind":      {append([]byte{'D', 'F', 1, 9}, good[4:]...), "kind"},
		"huge":      {[]byte{'D', 'F', 1, 1, 0xff, 0, 0, 0}, "more than"},
		"short":     {good[:len(good)-1], "declares"},
		"truncated": {append(append([]byte{}, good[:7]...), good[7]-1), "declares"},
		"deep":      {tooDeep, "nested"},
		"bool":      {[]byte{'D', 'F', 1, 1, 0, 0, 0, 6, 1, 0, 0, 1, 'b', 7}, "boolean"},
		"tag":       {[]byte{'D', 'F', 1, 1, 0, 0, 0, 5, 1, 0, 0, 1, 'z'}, "unknown value tag"},
		"list":      {[]byte{'D', 'F', 1, 1, 0, 0, 0, 7, 1, 0, 0, 1, 'l', 0xff, 0x7f}, "list length"},
		"string":    {[]byte{'D', 'F', 1, 1, 0, 0, 0, 6, 1, 0, 0, 1, 's', 9}, "string"},
		"trailing":  {[]byte{'D', 'F', 1, 1, 0, 0, 0, 5, 1, 0, 0, 0, 0}, "after the arguments"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeFrame(c.b)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
	if _, err := AppendFrame(nil, Call(1, "x", "y", deep)); err == nil {
		t.Error("encoding a value nested too deep should fail")
	}
}

func TestGuarantees(t *testing.T) {
	if err := CheckGuarantees(GuaranteeSet(0), I64(0)); err != nil {
		t.Error(err)
	}
	if err := CheckGuarantees(GuaranteeSet(-1), I64(0)); err != nil {
		t.Error(err)
	}
	for _, c := range []struct{ set, prio Value }{
		{GuaranteeSet(1), I64(0)},
		{GuaranteeSet(0), I64(2)},
		{Ent(TypeGuaranteeSet, Checksum+1, Lst()), I64(0)},
		{Ent(TypeGuaranteeSet, Checksum, Lst(Ent(TypeGuarantee, Checksum))), I64(0)},
		{Str("x"), I64(0)},
	} {
		if err := CheckGuarantees(c.set, c.prio); err == nil {
			t.Errorf("%s %s: accepted", c.set, c.prio)
		}
	}
}

func FuzzDecodeFrame(f *testing.F) {
	for _, fr := range seeds() {
		b, err := AppendFrame(nil, fr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := DecodeFrame(b)
		if err != nil {
			return
		}
		again, err := AppendFrame(nil, fr)
		if err != nil {
			t.Fatalf("decoded frame does not encode: %v", err)
		}
		fr2, err := DecodeFrame(again)
		if err != nil || fr2.String() != fr.String() {
			t.Fatalf("re-decode: %v %v", fr2, err)
		}
		if _, err := ReadFrame(bufio.NewReader(bytes.NewReader(b))); err != nil {
			t.Fatalf("ReadFrame rejects what DecodeFrame accepts: %v", err)
		}
	})
}
