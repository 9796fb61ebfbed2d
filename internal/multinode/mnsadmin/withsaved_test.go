package mnsadmin

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/collstore"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/multinode"
)

// TestWithSavedCollections checks how saved collections join the --config
// ones: a saved copy replaces the --config collection of its name, others
// are added, unparsable files are skipped, and delete removes the copy.
func TestWithSavedCollections(t *testing.T) {
	parse := func(name, start string) *config.Collection {
		t.Helper()
		x := `<?xml version="1.0"?><CrawlerConfig><DomainSpecification name="` + name + `">` +
			`<section name="crawlmode"><attrib name="mode" type="string">FULL</attrib></section>` +
			`<attrib name="start_uris" type="list-string"><member>` + start + `</member></attrib>` +
			`</DomainSpecification></CrawlerConfig>`
		cfg, err := config.Parse(name+".xml", []byte(x), nil)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		return cfg.Collections[0]
	}
	spec := func(c *config.Collection) *multinode.CollectionSpec {
		s, err := multinode.NewCollectionSpec(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	store := collstore.Store{Dir: filepath.Join(t.TempDir(), "collections")}
	dir := store.Dir
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := store.Save(parse("a", "http://api.example/")); err != nil {
		t.Fatal(err)
	}
	if err := store.Save(parse("b", "http://b.example/")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.xml"), []byte("<CrawlerConfig"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		config []*multinode.CollectionSpec
		want   map[string]string // collection -> its first start URI
	}{
		{"no config", nil, map[string]string{"a": "http://api.example/", "b": "http://b.example/"}},
		{"saved copy wins", []*multinode.CollectionSpec{spec(parse("a", "http://config.example/"))},
			map[string]string{"a": "http://api.example/", "b": "http://b.example/"}},
		{"config only", []*multinode.CollectionSpec{spec(parse("c", "http://c.example/"))},
			map[string]string{"a": "http://api.example/", "b": "http://b.example/", "c": "http://c.example/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for _, s := range WithSaved(tt.config, store, log) {
				got[s.Config.Name] = s.Config.Top().StartURIs()[0]
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("collections (-want +got):\n%s", d)
			}
		})
	}
	if err := store.Forget("b"); err != nil {
		t.Fatal(err)
	}
	if err := store.Forget("b"); err != nil {
		t.Errorf("forgetting an absent collection: %v", err)
	}
	if got := len(store.Load(log)); got != 1 {
		t.Errorf("after forgetting b, %d saved collections, want 1", got)
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "a\x00b"} {
		if err := store.Forget(bad); err == nil {
			t.Errorf("Forget(%q) accepted", bad)
		}
	}
}
