package datadir

import (
	"context"

	"github.com/trawl/trawl/internal/cli"
)

// StoreCommand is trawl store.
func StoreCommand() cli.Command {
	return cli.Command{Name: "store", Summary: "inspect a node scheduler's crawl store (list, get)", Run: runStore}
}

func runStore(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "get") {
		fs := cli.NewFlagSet(env, "store", "store list|get [flags]", "Inspect a crawl store:\n  list  one line per URI: status, HTTP code, checksum, last fetch time, URI\n  get   a URI's record, then its stored document")
		if err := cli.ParseFlags(fs, args); err != nil {
			return err
		}
		fs.Usage()
		return cli.ErrUsage
	}
	sub := args[0]
	usage := "store list --data DIR [--collection C] [--site S]"
	summary := "List the URIs of a crawl store, one line each: status, HTTP code, checksum (hex), last fetch time (RFC 3339), URI."
	if sub == "get" {
		usage, summary = "store get --data DIR [--collection C] URI", "Print a URI's stored record, a blank line, then its stored document body."
	}
	fs := cli.NewFlagSet(env, "store "+sub, usage, summary)
	data := fs.String("data", "./data", "the crawl's data directory (trawl run --data; the store is DIR/node), or a crawl store")
	coll := fs.String("collection", "", "collection (default: the only one in the store)")
	site := fs.String("site", "", "list only this crawl site (host[:port])")
	if err := cli.ParseFlags(fs, args[1:]); err != nil {
		return err
	}
	if sub == "get" && fs.NArg() != 1 || sub == "list" && fs.NArg() != 0 {
		fs.Usage()
		return cli.ErrUsage
	}
	st, err := OpenStore(*data)
	if err != nil {
		return err
	}
	defer st.Close()
	c := *coll
	if c == "" {
		if c, err = st.OnlyCollection(); err != nil {
			return err
		}
	}
	if sub == "list" {
		return st.WriteList(env.Stdout, c, *site)
	}
	return st.WriteRecord(env.Stdout, c, fs.Arg(0))
}
