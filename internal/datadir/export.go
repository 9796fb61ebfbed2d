package datadir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/warc"
)

// ExportCommand is trawl export; version is trawl's, for the WARC files'
// software field.
func ExportCommand(version string) cli.Command {
	return cli.Command{Name: "export", Summary: "write a crawl's stored documents as WARC files, with their CDXJ index",
		Run: func(ctx context.Context, env *cli.Env, args []string) error {
			return runExport(ctx, env, args, "trawl/"+version+" (trawl export warc)")
		}}
}

func runExport(ctx context.Context, env *cli.Env, args []string, software string) error {
	if len(args) == 0 || args[0] != "warc" {
		fs := cli.NewFlagSet(env, "export", "export warc --data DIR --out DIR [flags]",
			"Export a crawl:\n  warc  the crawl store's current documents as WARC files (gzipped WARC/1.1), and their CDXJ index")
		if err := cli.ParseFlags(fs, args); err != nil {
			return err
		}
		fs.Usage()
		return cli.ErrUsage
	}
	fs := cli.NewFlagSet(env, "export warc", "export warc --data DIR --out DIR [--collection C] [--prefix P] [--max-size MiB]",
		"Write the documents the crawl store holds now as WARC files in --out, one response record each (the stored\n"+
			"HTTP header and body) with a metadata record, for a crawl that ran without --warc; then the CDXJ index of\n"+
			"the files written, as FIRST-FILE.cdxj. The store is only read.")
	data := fs.String("data", "./data", "the crawl's data directory (trawl run --data; the store is DIR/node), or a crawl store")
	out := fs.String("out", "", "directory to write the WARC files and the CDXJ index to (created if needed)")
	coll := fs.String("collection", "", "export only this collection (default: all)")
	prefix := fs.String("prefix", "export", "file name prefix (PREFIX-TIME-SERIAL-NODE.warc.gz)")
	node := fs.String("node", "node1", "node scheduler name in the file names")
	maxSize := fs.Int64("max-size", warc.DefaultMaxSize>>20, "start a new file before one would pass this many MiB")
	if err := cli.ParseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *out == "" || fs.NArg() != 0 || *maxSize < 1 {
		fmt.Fprintln(env.Stderr, "trawl export warc: --out DIR is required (and --max-size must be at least 1)")
		return cli.ErrUsage
	}
	st, err := OpenStore(*data)
	if err != nil {
		return err
	}
	defer st.Close()
	w, err := warc.New(warc.Options{Dir: *out, Prefix: *prefix, Node: *node, MaxSize: *maxSize << 20,
		Software: software})
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
		fmt.Fprintf(env.Stdout, "no documents to export (%d URIs without a stored document)\n", es.Skipped)
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
	fmt.Fprintf(env.Stdout, "exported %d documents (%d responses, %d revisits of identical payloads) to %d WARC files in %s; %d URIs without a stored document\nindex: %s\n",
		es.Documents, ws.Responses, ws.Revisits, len(files), *out, es.Skipped, filepath.Base(idx))
	return nil
}
