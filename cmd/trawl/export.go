package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trawl/trawl/internal/warc"
)

func init() {
	register(&command{name: "export", summary: "write a crawl's stored documents as WARC files, with their CDXJ index", run: runExport})
}

func runExport(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "warc" {
		fs := newFlagSet(env, "export", "export warc --data DIR --out DIR [flags]",
			"Export a crawl:\n  warc  the crawl store's current documents as WARC files (gzipped WARC/1.1), and their CDXJ index")
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		fs.Usage()
		return errUsage
	}
	fs := newFlagSet(env, "export warc", "export warc --data DIR --out DIR [--collection C] [--prefix P] [--max-size MiB]",
		"Write the documents the crawl store holds now as WARC files in --out, one response record each (the stored\n"+
			"HTTP header and body) with a metadata record, for a crawl that ran without --warc; then the CDXJ index of\n"+
			"the files written, as FIRST-FILE.cdxj. The store is only read.")
	data := fs.String("data", "./data", "the crawl's data directory (trawl run --data; the store is DIR/node), or a crawl store")
	out := fs.String("out", "", "directory to write the WARC files and the CDXJ index to (created if needed)")
	coll := fs.String("collection", "", "export only this collection (default: all)")
	prefix := fs.String("prefix", "export", "file name prefix (PREFIX-TIME-SERIAL-NODE.warc.gz)")
	node := fs.String("node", "node1", "node scheduler name in the file names")
	maxSize := fs.Int64("max-size", warc.DefaultMaxSize>>20, "start a new file before one would pass this many MiB")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *out == "" || fs.NArg() != 0 || *maxSize < 1 {
		fmt.Fprintln(env.stderr, "trawl export warc: --out DIR is required (and --max-size must be at least 1)")
		return errUsage
	}
	st, err := openCrawlStore(*data)
	if err != nil {
		return err
	}
	defer st.Close()
	w, err := warc.New(warc.Options{Dir: *out, Prefix: *prefix, Node: *node, MaxSize: *maxSize << 20,
		Software: "trawl/" + version + " (trawl export warc)"})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	var colls []string
	if *coll != "" {
		colls = []string{*coll}
	}
	es, exportErr := warc.Export(ctx, st, w, colls)
	cancel()
	if err := <-done; err != nil {
		return err
	}
	if exportErr != nil {
		return exportErr
	}
	files := w.Files()
	ws := w.Stats()
	if len(files) == 0 {
		fmt.Fprintf(env.stdout, "no documents to export (%d URIs without a stored document)\n", es.Skipped)
		return nil
	}
	idx := strings.TrimSuffix(files[0], ".warc.gz") + ".cdxj"
	f, err := os.Create(idx)
	if err != nil {
		return err
	}
	if err := warc.WriteCDXJ(f, files); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if ws.Errors > 0 {
		return fmt.Errorf("%d documents could not be written (see the log above)", ws.Errors)
	}
	fmt.Fprintf(env.stdout, "exported %d documents (%d responses, %d revisits of identical payloads) to %d WARC files in %s; %d URIs without a stored document\nindex: %s\n",
		es.Documents, ws.Responses, ws.Revisits, len(files), *out, es.Skipped, filepath.Base(idx))
	return nil
}
