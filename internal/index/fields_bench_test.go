package index

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkRankUpdate gives every document of an index of n documents a
// new rank and anchor text, in batches of 500: as partial updates
// (Op.Fields, what the web analyzer feeds now), and as the whole-document
// rewrite the web analyzer did before (Lookup each document, Apply it again
// with the stored fields, the rank and the anchor text).
func BenchmarkRankUpdate(b *testing.B) {
	const n, batch = 5000, 500
	ctx := context.Background()
	for _, mode := range []string{"partial", "rewrite"} {
		b.Run(mode, func(b *testing.B) {
			ix, err := Open(b.TempDir(), Options{Create: true})
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			url := func(i int) string { return fmt.Sprintf("http://site%d.example/page%d", i%50, i) }
			var ops []Op
			for i := range n {
				ops = append(ops, Op{Version: 1, Doc: Doc{URL: url(i), Collection: "web", Title: fmt.Sprintf("page %d", i),
					Body: fmt.Sprintf("words of page %d", i) + filler, MIME: "text/html"}})
			}
			if _, err := ix.Apply(ctx, ops); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for it := range b.N {
				ver := uint64(it + 2)
				for lo := 0; lo < n; lo += batch {
					ops = ops[:0]
					for i := lo; i < lo+batch; i++ {
						d := Doc{URL: url(i), Collection: "web", Rank: float64(it%7) / 3, Anchor: "anchor text of " + url(i)}
						if mode == "partial" {
							ops = append(ops, Op{Fields: true, Version: ver, Doc: d})
							continue
						}
						st, err := ix.Lookup(ctx, "web", d.URL)
						if err != nil {
							b.Fatal(err)
						}
						ops = append(ops, Op{Version: st.Version + 1, Doc: Doc{URL: st.URL, Collection: st.Collection, Title: st.Title,
							Body: st.Body, MIME: st.MIME, Modified: st.Modified, Language: st.Language, Rank: d.Rank, Anchor: d.Anchor}})
					}
					res, err := ix.Apply(ctx, ops)
					if err != nil || res.Applied != batch {
						b.Fatalf("%+v %v", res, err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e3, "µs/doc")
		})
	}
}

// filler makes a document's text about 1 KiB.
var filler = " harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard harbour lantern meadow copper violin orchard" +
	" harbour lantern meadow copper violin orchard"
