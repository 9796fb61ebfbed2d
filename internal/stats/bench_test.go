package stats

import "testing"

func BenchmarkRecordAdd(b *testing.B) {
	r := NewRecord(CollectionSchema(), "web")
	i := r.Schema().Index("Downloaded")
	b.ReportAllocs()
	for b.Loop() {
		r.AddAt(i, 1)
		_ = r.Add("DocSize", 4096)
		_ = r.Observe("HTTPResponse", "200", 1)
	}
}

func BenchmarkStatisticsMarshal(b *testing.B) {
	st := sampleStatistics()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}
