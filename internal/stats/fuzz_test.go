package stats

import (
	"testing"

	"github.com/trawl/trawl/internal/marshal"
)

// Decoders of statistics received over MS-FSCMT and MS-FSCADM: each reads
// any marshal bytes without panicking, and what it accepts survives a
// round trip.

func FuzzUnmarshalStatistics(f *testing.F) {
	if b, err := sampleStatistics().Marshal(); err == nil {
		f.Add(b)
	}
	empty := &Statistics{}
	if b, err := empty.Marshal(); err == nil {
		f.Add(b)
	}
	f.Add([]byte("{0"))
	f.Add([]byte("N"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := UnmarshalStatistics(b)
		if err != nil {
			return
		}
		again, err := st.Marshal()
		if err != nil {
			return // values a record holds but the encoder refuses (NaN keys and the like)
		}
		if _, err := UnmarshalStatistics(again); err != nil {
			t.Fatalf("re-encoded statistics do not decode: %v", err)
		}
	})
}

// flatSeeds are marshal encodings of flattened structures.
func flatSeeds(f *testing.F, dicts ...marshal.Dict) {
	for _, d := range dicts {
		if b, err := marshal.Encode(d); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("{0"))
}

func FuzzParseCollectionFlat(f *testing.F) {
	st := sampleStatistics()
	cf := FlattenCollection(st.Series[0].Current(), FlattenParams{Now: 1200, Refresh: 2000})
	flatSeeds(f, cf.Dict(), marshal.Dict{{Key: marshal.Str("Processed"), Value: marshal.Float(3)}})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := marshal.Decode(b)
		if err != nil {
			return
		}
		d, ok := v.(marshal.Dict)
		if !ok {
			return
		}
		cf, err := ParseCollectionFlat(d)
		if err != nil {
			return
		}
		if _, err := ParseCollectionFlat(cf.Dict()); err != nil {
			t.Fatalf("re-flattened structure does not parse: %v", err)
		}
	})
}

func FuzzParseGlobalFlat(f *testing.F) {
	r := NewRecord(GlobalSchema(), "global")
	r.Start, r.Stop = 1000, 1010
	_ = r.Add("DNSRequests", 20)
	_ = r.Observe("DNSResponse", "0", 19)
	gf := FlattenGlobal(r)
	flatSeeds(f, gf.Dict(), marshal.Dict{{Key: marshal.Str("DNSRequest"), Value: marshal.Float(3)}})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := marshal.Decode(b)
		if err != nil {
			return
		}
		d, ok := v.(marshal.Dict)
		if !ok {
			return
		}
		gf, err := ParseGlobalFlat(d)
		if err != nil {
			return
		}
		if _, err := ParseGlobalFlat(gf.Dict()); err != nil {
			t.Fatalf("re-flattened structure does not parse: %v", err)
		}
	})
}

func FuzzParseSeries(f *testing.F) {
	st := sampleStatistics()
	for _, s := range append([]*Series{st.Global}, st.Series...) {
		if b, err := marshal.Encode(s.MarshalValue()); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := marshal.Decode(b)
		if err != nil {
			return
		}
		_, _ = ParseSeries(v)
	})
}
