package crawlpipe

import "testing"

// FuzzDecodeMeta checks that DecodeMeta never panics, keeps its caps, and
// that what it decodes encodes back to the same counts and flags (the
// metaOffLang flag is EncodeMeta's to set: it says whether OffLang
// follows).
func FuzzDecodeMeta(f *testing.F) {
	f.Add([]byte(nil))
	f.Add(EncodeMeta(EntryMeta{}))
	f.Add(EncodeMeta(EntryMeta{Redirects: 3}))
	f.Add(EncodeMeta(EntryMeta{Redirects: 1, Flags: metaFeedItem}))
	f.Add(EncodeMeta(EntryMeta{Flags: metaFeedChannel, OffLang: 2}))
	f.Add([]byte{1, 0, metaOffLang, 0})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		m := DecodeMeta(b)
		if m.Redirects < 0 || m.Redirects >= 1<<20 || m.OffLang < 0 || m.OffLang >= 1<<20 {
			t.Fatalf("DecodeMeta(%x) = %+v: out of its caps", b, m)
		}
		again := DecodeMeta(EncodeMeta(m))
		if again.Redirects != m.Redirects || again.OffLang != m.OffLang || again.Flags&^metaOffLang != m.Flags&^metaOffLang {
			t.Fatalf("DecodeMeta(%x) = %+v, re-encoded it decodes as %+v", b, m, again)
		}
	})
}

func TestEntryMetaRoundTrip(t *testing.T) {
	for _, m := range []EntryMeta{{}, {Redirects: 5}, {Redirects: 2, Flags: metaFeedItem | metaFeedChannel}, {OffLang: 7, Flags: metaOffLang}} {
		if got := DecodeMeta(EncodeMeta(m)); got != m {
			t.Errorf("DecodeMeta(EncodeMeta(%+v)) = %+v", m, got)
		}
	}
}
