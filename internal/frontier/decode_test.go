package frontier

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEntryRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		e     Entry
		class uint8
	}{
		{"minimal", Entry{URI: "http://a/", Site: "a"}, 1},
		{"full", Entry{URI: "http://www.contoso.com/", Site: "www.contoso.com", Referrer: "http://r/", Hops: 7, Level: 3,
			URIFlags: URIFStartURI | URIFCleanSite, QueueFlags: QFPrepend | QFUrgent, Extra: []byte{1, 2, 3}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeEntry(&tc.e, tc.class)
			got, class, err := decodeEntry(b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.e, got); d != "" || class != tc.class {
				t.Errorf("round trip (-want +got):\n%s class %d", d, class)
			}
			for i := 0; i < len(b); i++ {
				if _, _, err := decodeEntry(b[:i]); err == nil {
					t.Errorf("truncated to %d: no error", i)
				}
			}
		})
	}
}

// The frontier's tests check every site's running total of queued
// entries against its classes' counts (site.queued).
func init() { checkQueued = true }

func TestSiteMetaRoundTrip(t *testing.T) {
	st := newSite("a", 4)
	st.stopped, st.front, st.docsCycle, st.cycle, st.backoff = true, true, 9, 3, 2
	st.lastStart, st.blockedUntil, st.crawlDelay = t0, t0.Add(time.Hour), 5*time.Second
	st.q[1] = levelQ{count: 5, headSeq: seqMid - 2, tailSeq: seqMid + 3, from: seqMid - 2}
	got, err := decodeSiteMeta("a", encodeSiteMeta(st), 4)
	if err != nil {
		t.Fatal(err)
	}
	if q := got.q[1]; q.count != 5 || q.headSeq != seqMid-2 || q.tailSeq != seqMid+3 || q.from != seqMid-2 || got.docsCycle != 9 || !got.blockedUntil.Equal(st.blockedUntil) || !got.stopped || !got.front ||
		got.crawlDelay != st.crawlDelay || got.cycle != 3 || got.queued() != 5 {
		t.Errorf("round trip: %+v", got)
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry(&Entry{URI: "http://www.contoso.com/", Site: "www.contoso.com", Extra: []byte("x")}, 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, c, err := decodeEntry(b)
		if err != nil {
			return
		}
		e2, c2, err := decodeEntry(encodeEntry(&e, c))
		if err != nil || c2 != c || !cmp.Equal(e, e2) {
			t.Fatalf("re-encode: %v %+v %+v", err, e, e2)
		}
	})
}

func FuzzDecodeSiteMeta(f *testing.F) {
	st := newSite("a", 3)
	st.q[2].count = 4
	f.Add(encodeSiteMeta(st))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeSiteMeta("a", b, 3)
		_, _ = decodeKnown("a", "u", b)
	})
}
