package cmt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Frames of MS-FSCMT section 4, header included, as repaired in the digest
// (digest-MS-FSCMT.md section 6): 4.2 has its three missing 00 bytes back.
const (
	hex41Init = "0000005528020000007B7302000000787028020000007310000000686F73742E636F6E746F736F2E636F6D691027000073020000006D69730B00000037302D38362D31322D32307302000000636D6918000000306901000000"

	hex42AddRoute = "000000E028020000007B7302000000646E73070000006578616D706C65730200000070642805000000730B00000037302D38362D31322D3230730B000000636F6E746F736F2E636F6D730F0000007777772E636F6E746F736F2E636F6D5B02000000280500000069020000006901000000690000000073000000002802000000730E0000003230372E34362E3233322E3138326900000000280500000069020000006901000000690000000073000000002802000000730D0000003230372E34362E3139372E3332690000000069805101007302000000636D6907000000306900000000"

	hex43DNSRequest = "0000004628020000007B7302000000646E73070000006578616D706C657302000000636D690C00000073020000007374730F0000007777772E636F6E746F736F2E636F6D306901000000"

	hex43DNSReply = "000000C328020000007B7302000000646E7300000000730200000070642802000000730F0000007777772E636F6E746F736F2E636F6D28030000005B02000000280500000069020000006901000000690000000073000000002802000000730D0000003230372E34362E3139372E33326900000000280500000069020000006901000000690000000073000000002802000000730E0000003230372E34362E3233322E313832690000000069902C364A69805101007302000000636D690D000000306901000000"

	hex44URI = "0000015028020000007B7302000000646E73070000006578616D706C657302000000706428090000007303000000575145280E0000007317000000687474703A2F2F7777772E636F6E746F736F2E636F6D2F730400000068747470730F0000007777772E636F6E746F736F2E636F6D730F0000007777772E636F6E746F736F2E636F6D695000000073010000002F7300000000730000000073000000007300000000730000000069010000006901000000730F0000007777772E636F6E746F736F2E636F6D280E00000073000000007300000000730000000073000000004E730000000073000000007300000000730000000073000000007300000000690100000069010000007300000000690020000069000000005B00000000690000000069FFFFFFFF7B69100000004E6965000000730B00000037302D38362D31322D3230307302000000636D6919000000306900000000"

	hex45SetConfig = "0000007728020000007B7302000000646E73070000006578616D706C65730200000076636901000000730200000070647B73070000006578616D706C657B7307000000636F6D7061637469000000007306000000666F726D61747308000000676967616261736530307302000000636D6912000000306901000000"

	// 4.5 response as printed: the first header says 76 (the whole rest
	// of the dump) while its message is 36 bytes; a second ACK follows.
	hex45ConfigAckAsPrinted = "0000004C28020000007B7302000000766369010000007302000000636D69130000003069010000000000002428020000007B7302000000766369020000007302000000636D6913000000306901000000"

	hex46Add = "0000008128020000007B730200000063737310000000A9EBCB8FACBDC743775A1D3B522DA8B67302000000646E73070000006578616D706C6573020000006964730B00000037302D38362D31322D32307302000000636D6904000000730200000075727317000000687474703A2F2F7777772E636F6E746F736F2E636F6D2F306900000000"

	hex46AddOK = "0000006528020000007B7302000000646E73070000006578616D706C6573020000006964730B00000037302D38362D31322D32307302000000636D6900000000730200000075727317000000687474703A2F2F7777772E636F6E746F736F2E636F6D2F306900000000"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withCommand returns a copy of frame with the int value of its 'cm' key
// replaced by code: the section 4 PPDUP examples use codes other than the
// normative ones of 2.2.5 (DESIGN.md 4.2).
func withCommand(t testing.TB, frame []byte, code Command) []byte {
	t.Helper()
	key := []byte("s\x02\x00\x00\x00cmi")
	i := bytes.Index(frame, key)
	if i < 0 || bytes.Index(frame[i+1:], key) >= 0 {
		t.Fatalf("frame has no single 'cm' key")
	}
	out := bytes.Clone(frame)
	v := uint32(code)
	j := i + len(key)
	out[j], out[j+1], out[j+2], out[j+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	return out
}

var contosoURI = URIStructure{
	URI: "http://www.contoso.com/", Scheme: "http", Netloc: "www.contoso.com", Host: "www.contoso.com",
	Port: 80, Path: "/", SkipFragments: true, Parsed: true, HostIDNA: "www.contoso.com",
}

var checksum46 = Checksum{0xA9, 0xEB, 0xCB, 0x8F, 0xAC, 0xBD, 0xC7, 0x43, 0x77, 0x5A, 0x1D, 0x3B, 0x52, 0x2D, 0xA8, 0xB6}

func TestSpecExamples(t *testing.T) {
	tests := []struct {
		name string
		hex  string
		// code, when set, replaces the example's cm (section 4 uses
		// non-normative PPDUP codes).
		code Command
		want Frame
	}{
		{"4.1 CMD_UM_INIT", hex41Init, 0, Frame{PriorityHigh, &UMInit{
			NodeID: "70-86-12-20", AdminHost: "host.contoso.com", AdminPort: 10000}}},
		{"4.2 CMD_UM_ADD_ROUTE", hex42AddRoute, 0, Frame{PriorityNormal, &UMAddRoute{
			Collection: "example", NodeID: "70-86-12-20", RouteAttr: "contoso.com", Site: "www.contoso.com",
			Addrs: []AddrInfo{
				{Family: 2, SockType: 1, IP: "207.46.232.182"},
				{Family: 2, SockType: 1, IP: "207.46.197.32"},
			},
			TTL: 86400}}},
		{"4.3 CMD_UM_DNS_REQUEST", hex43DNSRequest, 0, Frame{PriorityHigh, &UMDNSRequest{
			Collection: "example", Site: "www.contoso.com"}}},
		{"4.3 CMD_UM_DNS_REPLY", hex43DNSReply, 0, Frame{PriorityHigh, &UMDNSReply{
			Host: "www.contoso.com",
			Addrs: []AddrInfo{
				{Family: 2, SockType: 1, IP: "207.46.197.32"},
				{Family: 2, SockType: 1, IP: "207.46.232.182"},
			},
			Time: 1245064336, TTL: 86400}}},
		{"4.4 CMD_UM_URI", hex44URI, 0, Frame{PriorityNormal, &UMURI{
			Collection: "example",
			Entry: Entry{
				URI: contosoURI, Referrer: EmptyURIStructure(), Flags: URIFUnscreened, Cycle: -1,
				Extra: []ExtraItem{{IntScalar(16), NoneScalar()}, {IntScalar(101), StrScalar("70-86-12-20")}},
			}}}},
		{"4.5 PPDUP_SET_CONFIG (cm 18 -> 59)", hex45SetConfig, CmdPPDUPSetConfig, Frame{PriorityHigh, &PPDUPSetConfig{
			Collection: "example", VClock: 1,
			Config: CrawlConfig{Collections: []Collection{{Name: "example", Params: Params{Attribs: []Attrib{
				IntAttrib("compact", 0), StrAttrib("format", "gigabase")}}}}}}}},
		{"4.6 PPDUP_ADD (cm 4 -> 52)", hex46Add, CmdPPDUPAdd, Frame{PriorityNormal, &PPDUPAdd{
			Collection: "example", NodeID: "70-86-12-20", URI: "http://www.contoso.com/", Checksum: checksum46}}},
		{"4.6 PPDUP_ADD_OK (cm 0 -> 50)", hex46AddOK, CmdPPDUPAddOK, Frame{PriorityNormal, &PPDUPAddOK{
			Collection: "example", NodeID: "70-86-12-20", URI: "http://www.contoso.com/"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := mustHex(t, tt.hex)
			if tt.code != 0 {
				frame = withCommand(t, frame, tt.code)
			}
			fr := NewFrameReader(bytes.NewReader(frame), 0)
			body, err := fr.ReadFrame()
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeFrame(body)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if _, err := fr.ReadFrame(); err != io.EOF {
				t.Errorf("after the frame: %v, want EOF", err)
			}
			// Every example is in trawl's own encoding: it re-encodes
			// byte for byte.
			enc, err := EncodeFrame(got.Message, got.Priority)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, frame) {
				t.Errorf("re-encoded:\n got %X\nwant %X", enc, frame)
			}
		})
	}
}

// The 4.5 response is printed with a header that counts both ACKs. Read
// as printed, the first frame holds one message and 40 trailing bytes,
// which trawl rejects; with the header repaired to 36 it is two frames,
// the ACKs with vc 1 and 2.
func TestSpecExample45ConfigAck(t *testing.T) {
	printed := withCommand2(t, mustHex(t, hex45ConfigAckAsPrinted), CmdPPDUPConfigAck)
	fr := NewFrameReader(bytes.NewReader(printed), 0)
	body, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeFrame(body); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "40 bytes after") {
		t.Errorf("as printed: err %v, want trailing bytes", err)
	}

	repaired := bytes.Clone(printed)
	repaired[3] = 0x24
	fr = NewFrameReader(bytes.NewReader(repaired), 0)
	var got []Frame
	for {
		body, err := fr.ReadFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		f, err := DecodeFrame(body)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, f)
	}
	want := []Frame{{PriorityHigh, &PPDUPConfigAck{VClock: 1}}, {PriorityHigh, &PPDUPConfigAck{VClock: 2}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var enc []byte
	for _, f := range want {
		if enc, err = AppendFrame(enc, f.Message, f.Priority); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(enc, repaired) {
		t.Errorf("re-encoded:\n got %X\nwant %X", enc, repaired)
	}
}

// withCommand2 replaces the cm value of every 'cm' key in frames.
func withCommand2(t testing.TB, frames []byte, code Command) []byte {
	t.Helper()
	key := []byte("s\x02\x00\x00\x00cmi")
	out := bytes.Clone(frames)
	for off := 0; ; {
		i := bytes.Index(out[off:], key)
		if i < 0 {
			return out
		}
		j := off + i + len(key)
		v := uint32(code)
		out[j], out[j+1], out[j+2], out[j+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		off = j
	}
}

// Decoded with their printed codes, the PPDUP examples are other commands:
// the normative codes win (DESIGN.md 4.2). cm 4 is CMD_ADM_CONF_RESUME,
// whose only key, dn, the PPDUP_ADD example has.
func TestSpecExamplesPrintedCodes(t *testing.T) {
	f, err := DecodeFrame(mustHex(t, hex46Add)[4:])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&AdmConfResume{Collection: "example"}, f.Message); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// cm 18 is CMD_UM_DELETE_SITE, whose PKT_DATA must be a string.
	if _, err := DecodeFrame(mustHex(t, hex45SetConfig)[4:]); !errors.Is(err, ErrMalformed) {
		t.Errorf("4.5 with cm 18: err %v, want ErrMalformed", err)
	}
}
