// Package admincli is the command side of trawl admin: the table of
// subcommands, each a call of the MS-FSCADM client (internal/admin) with
// its arguments, and the printing of their results (statistics tables,
// log level names), and the command itself (Root: the crawler's address,
// the credentials and the mapping of faults to messages), which cmd/trawl
// lists.
package admincli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/stats"
)

// ErrUsage is returned for arguments a subcommand cannot take.
var ErrUsage = errors.New("admincli: usage")

// Usage is the usage text of trawl admin.
const Usage = `usage: trawl admin [-C host:port] [-token T | -user U -password P]
         [--tls-cert FILE --tls-key FILE --tls-ca FILE [--tls-server-name N]] <subcommand> [flags] [args]

Call the MS-FSCADM administration API of a running crawler (POST /RPC2).
-token, -user and -password give the credential a crawler started with
--admin-token or --admin-user/--admin-password requires; the --tls-* flags
call a crawler whose HTTP interface runs mutual TLS (https, this client
certificate, the crawler's checked against --tls-ca; docs/security.md).

subcommands:
  list                                  list the collections
  config COLL                           print a collection's configuration XML
  add [--force] FILE                    add or update collections from an MS-FSCCFG file
  update [--force] FILE                 the same as add
  delete [--force] COLL                 delete a collection
  status COLL                           print crawling, suspended, compacting or zombie
  stats [--json] [--cycle cur|prev|complete] COLL
                                        print a collection's statistics
  global-stats [--json]                 print the global (DNS) statistics
  suspend COLL | resume COLL            suspend or resume crawling
  suspend-feeding [--dest D] COLL       suspend sending content to the indexer
  resume-feeding [--dest D] COLL        resume sending content to the indexer
  refetch [--sub SUBCOLLECTION] COLL    refetch a collection or a subcollection
  refetch-uri [--refeed] [--site] [--now] COLL URI
  reprocess-site [--dest D] COLL SITE   feed a site's documents again
  reprocess-prefix [--dest D] COLL SITE PREFIX
  reprocess-uris [--dest D] COLL URI...
  add-uris [--urgent] COLL URI...       queue URIs
  add-uri-file [--urgent] COLL PATH     queue the URIs of a file on the server
  delete-site COLL SITE                 delete a site from the store and the index
  delete-uris COLL URI...               delete URIs from the store and the index
  delete-uri-file COLL PATH             delete the URIs of a file on the server
  preempt COLL SITE                     stop crawling a site for now
  quarantine [--requeue] COLL SITE SECONDS
                                        suspend a site for a while (then queue it first)
  state COLL STATE                      set a collection's state (active, blocked, compacting, ...)
  reroute NODE                          move a dead node scheduler's sites to the live ones
  refresh-only COLL on|off              only revisit known content, or crawl new content too
  log-level [LEVEL]                     print or set the log level (a number or names: info,debug,...)
  nodes                                 list the node schedulers of a multinode scheduler
  routing COLL SITE                     print the node scheduler a site is routed to
  methods                               list the server's methods
  chain [--json]                        show the feeding chain: master distributor, sessions and
                                        operations in flight per distributor, indexer documents
                                        (GET status.json, not an MS-FSCADM method)

A SITE is host or host:port. Run "trawl admin <subcommand> --help" for its flags.
`

// Command is one subcommand of trawl admin: its arguments, help text and
// a function that registers its flags and returns what runs it.
type Command struct {
	Usage string // args after the subcommand name
	Help  string
	NArgs int // exact positional argument count; -1: at least Min
	Min   int
	Flags func(fs *flag.FlagSet) RunFunc
}

// RunFunc runs a subcommand with its positional arguments, printing on
// stdout.
type RunFunc func(ctx context.Context, stdout io.Writer, c *admin.Client, args []string) error

// Commands returns the subcommands by name.
func Commands() map[string]Command {
	simple := func(usage, help string, n int, f func(ctx context.Context, c *admin.Client, a []string) (string, error)) Command {
		return Command{Usage: usage, Help: help, NArgs: n, Flags: func(fs *flag.FlagSet) RunFunc {
			return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
				s, err := f(ctx, c, a)
				if err == nil && s != "" {
					fmt.Fprintln(stdout, s)
				}
				return err
			}
		}}
	}
	withDest := func(usage, help string, n, min int, f func(ctx context.Context, c *admin.Client, dest string, a []string) (string, error)) Command {
		return Command{Usage: "[--dest D] " + usage, Help: help, NArgs: n, Min: min, Flags: func(fs *flag.FlagSet) RunFunc {
			dest := fs.String("dest", "", `content destination: a name, "default:<collection>", or "" for the default`)
			return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
				s, err := f(ctx, c, *dest, a)
				if err == nil {
					fmt.Fprintln(stdout, s)
				}
				return err
			}
		}}
	}
	withBool := func(name, usage, help, flagName, flagHelp string, n, min int, f func(ctx context.Context, c *admin.Client, b bool, a []string) (string, error)) Command {
		return Command{Usage: "[--" + flagName + "] " + usage, Help: help, NArgs: n, Min: min, Flags: func(fs *flag.FlagSet) RunFunc {
			b := fs.Bool(flagName, false, flagHelp)
			return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
				s, err := f(ctx, c, *b, a)
				if err == nil {
					fmt.Fprintln(stdout, s)
				}
				return err
			}
		}}
	}
	addCmd := withBool("add", "FILE", "Add or update the collections of an MS-FSCCFG file (CollectionAdd).", "force",
		"set Force (needed on a node scheduler of a multinode setup)", 1, 0,
		func(ctx context.Context, c *admin.Client, force bool, a []string) (string, error) {
			data, err := os.ReadFile(a[0])
			if err != nil {
				return "", err
			}
			return c.CollectionAdd(ctx, string(data), force)
		})
	return map[string]Command{
		"list": {Usage: "", Help: "List the collections (CollectionGetList).", NArgs: 0, Flags: func(fs *flag.FlagSet) RunFunc {
			return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
				l, err := c.CollectionGetList(ctx)
				for _, n := range l {
					fmt.Fprintln(stdout, n)
				}
				return err
			}
		}},
		"config": simple("COLL", "Print a collection's configuration XML (CollectionGetConfigurationXML).", 1,
			func(ctx context.Context, c *admin.Client, a []string) (string, error) {
				x, err := c.CollectionGetConfigurationXML(ctx, a[0])
				return strings.TrimRight(x, "\n"), err
			}),
		"add":    addCmd,
		"update": addCmd,
		"delete": withBool("delete", "COLL", "Delete a collection and all its data (CollectionDelete).", "force",
			"set Force (needed on a node scheduler of a multinode setup)", 1, 0,
			func(ctx context.Context, c *admin.Client, force bool, a []string) (string, error) {
				return c.CollectionDelete(ctx, a[0], force)
			}),
		"chain": {Usage: "[--json]", Help: "Show the feeding chain of trawl run: which content distributor is master, the sessions and\n" +
			"operations in flight of each, and each indexer partition with its documents (GET status.json).", NArgs: 0,
			Flags: func(fs *flag.FlagSet) RunFunc {
				asJSON := fs.Bool("json", false, "print JSON")
				return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
					rep, err := c.Status(ctx)
					if err != nil {
						return err
					}
					return WriteChain(stdout, rep.Chain, *asJSON)
				}
			}},
		"status": simple("COLL", "Print a collection's status (CollectionGetStatus).", 1,
			func(ctx context.Context, c *admin.Client, a []string) (string, error) {
				return c.CollectionGetStatus(ctx, a[0])
			}),
		"stats": {Usage: "[--json] [--cycle cur|prev|complete] COLL", Help: "Print a collection's flattened statistics (CollectionGetStatistics2).", NArgs: 1,
			Flags: func(fs *flag.FlagSet) RunFunc {
				asJSON := fs.Bool("json", false, "print every cycle as JSON")
				cycle := fs.String("cycle", "cur", "cycle to print as a table: cur, prev or complete")
				return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
					rep, err := c.CollectionGetStatistics2(ctx, a[0])
					if err != nil {
						return err
					}
					if *asJSON {
						return writeJSON(stdout, map[string]*stats.CollectionFlat{"cur": rep.Cur, "prev": rep.Prev, "complete": rep.Complete})
					}
					var f *stats.CollectionFlat
					switch *cycle {
					case "cur":
						f = rep.Cur
					case "prev":
						f = rep.Prev
					case "complete":
						f = rep.Complete
					default:
						return fmt.Errorf("--cycle %q: want cur, prev or complete", *cycle)
					}
					if f == nil {
						return fmt.Errorf("collection %s has no %s cycle yet", a[0], *cycle)
					}
					printCollectionStats(stdout, a[0], *cycle, f)
					return nil
				}
			}},
		"global-stats": {Usage: "[--json]", Help: "Print the global DNS statistics (GetGlobalStatistics).", NArgs: 0,
			Flags: func(fs *flag.FlagSet) RunFunc {
				asJSON := fs.Bool("json", false, "print as JSON")
				return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
					rep, err := c.GetGlobalStatistics(ctx)
					if err != nil {
						return err
					}
					if *asJSON {
						return writeJSON(stdout, map[string]*stats.GlobalFlat{"delta": rep.Delta, "complete": rep.Complete})
					}
					printGlobalStats(stdout, rep)
					return nil
				}
			}},
		"suspend": simple("COLL", "Suspend crawling (CollectionSuspend).", 1, func(ctx context.Context, c *admin.Client, a []string) (string, error) {
			return c.CollectionSuspend(ctx, a[0])
		}),
		"resume": simple("COLL", "Resume crawling (CollectionResume).", 1, func(ctx context.Context, c *admin.Client, a []string) (string, error) {
			return c.CollectionResume(ctx, a[0])
		}),
		"suspend-feeding": withDest("COLL", "Suspend sending content to the indexer (CollectionSuspendFeeding).", 1, 0,
			func(ctx context.Context, c *admin.Client, dest string, a []string) (string, error) {
				return c.CollectionSuspendFeeding(ctx, a[0], dest)
			}),
		"resume-feeding": withDest("COLL", "Resume sending content to the indexer (CollectionResumeFeeding).", 1, 0,
			func(ctx context.Context, c *admin.Client, dest string, a []string) (string, error) {
				return c.CollectionResumeFeeding(ctx, a[0], dest)
			}),
		"refetch": {Usage: "[--sub SUBCOLLECTION] COLL", Help: "Refetch a collection or one subcollection (CollectionRefetch).", NArgs: 1,
			Flags: func(fs *flag.FlagSet) RunFunc {
				sub := fs.String("sub", "", "refetch only this subcollection")
				return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
					s, err := c.CollectionRefetch(ctx, a[0], *sub)
					if err == nil {
						fmt.Fprintln(stdout, s)
					}
					return err
				}
			}},
		"refetch-uri": {Usage: "[--refeed] [--site] [--now] COLL URI", Help: "Refetch a URI (CollectionRefetchURI).", NArgs: 2,
			Flags: func(fs *flag.FlagSet) RunFunc {
				refeed := fs.Bool("refeed", false, "feed the document even if it did not change")
				site := fs.Bool("site", false, "refetch the URI's whole site")
				now := fs.Bool("now", false, "treat the URI as urgent")
				return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
					s, err := c.CollectionRefetchURI(ctx, a[0], a[1], *refeed, *site, *now)
					if err == nil {
						fmt.Fprintln(stdout, s)
					}
					return err
				}
			}},
		"reprocess-site": withDest("COLL SITE", "Feed a site's documents again (CollectionReprocessSite).", 2, 0,
			func(ctx context.Context, c *admin.Client, dest string, a []string) (string, error) {
				return c.CollectionReprocessSite(ctx, a[0], dest, a[1])
			}),
		"reprocess-prefix": withDest("COLL SITE PREFIX", "Feed a site's documents under a URI prefix again (CollectionReprocessSitePrefix).", 3, 0,
			func(ctx context.Context, c *admin.Client, dest string, a []string) (string, error) {
				return c.CollectionReprocessSitePrefix(ctx, a[0], a[1], a[2], dest)
			}),
		"reprocess-uris": withDest("COLL URI...", "Feed documents again (CollectionReprocessURI).", -1, 2,
			func(ctx context.Context, c *admin.Client, dest string, a []string) (string, error) {
				return c.CollectionReprocessURI(ctx, a[0], dest, a[1:])
			}),
		"add-uris": withBool("add-uris", "COLL URI...", "Queue URIs (AddURIs).", "urgent", "crawl them as soon as possible", -1, 2,
			func(ctx context.Context, c *admin.Client, urgent bool, a []string) (string, error) {
				return c.AddURIs(ctx, a[0], urgent, a[1:])
			}),
		"add-uri-file": withBool("add-uri-file", "COLL PATH", "Queue the URIs of a file on the server, one per line (AddURIFile).", "urgent", "crawl them as soon as possible", 2, 0,
			func(ctx context.Context, c *admin.Client, urgent bool, a []string) (string, error) {
				return c.AddURIFile(ctx, a[0], urgent, a[1])
			}),
		"delete-site": simple("COLL SITE", "Delete a site from the store and the index (CollectionDeleteSite).", 2,
			func(ctx context.Context, c *admin.Client, a []string) (string, error) {
				return c.CollectionDeleteSite(ctx, a[0], a[1])
			}),
		"delete-uris": {Usage: "COLL URI...", Help: "Delete URIs from the store and the index (CollectionDeleteURIs).", NArgs: -1, Min: 2,
			Flags: func(fs *flag.FlagSet) RunFunc {
				return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
					s, err := c.CollectionDeleteURIs(ctx, a[0], a[1:])
					if err == nil {
						fmt.Fprintln(stdout, s)
					}
					return err
				}
			}},
		"delete-uri-file": simple("COLL PATH", "Delete the URIs of a file on the server (CollectionDeleteURIFile).", 2,
			func(ctx context.Context, c *admin.Client, a []string) (string, error) {
				return c.CollectionDeleteURIFile(ctx, a[0], a[1])
			}),
		"preempt": simple("COLL SITE", "Stop crawling a site for now (CollectionPreemptSite).", 2,
			func(ctx context.Context, c *admin.Client, a []string) (string, error) {
				return c.CollectionPreemptSite(ctx, a[0], a[1])
			}),
		"quarantine": withBool("quarantine", "COLL SITE SECONDS", "Suspend crawling a site for SECONDS (CollectionQuarantineSite); with --requeue the site\nis then queued at the front of the crawl queue (CollectionQuarantineSiteRequeue).",
			"requeue", "queue the site at the front of the crawl queue when the quarantine ends", 3, 0,
			func(ctx context.Context, c *admin.Client, requeue bool, a []string) (string, error) {
				n, err := strconv.Atoi(a[2])
				if err != nil || n < 0 {
					return "", fmt.Errorf("SECONDS %q is not a number of seconds", a[2])
				}
				if requeue {
					return c.CollectionQuarantineSiteRequeue(ctx, a[0], a[1], n)
				}
				return c.CollectionQuarantineSite(ctx, a[0], a[1], n)
			}),
		"state": simple("COLL STATE", "Set a collection's state on every node scheduler (CollectionSetState, CMD_UM_CONF_STATE).\nSTATE: "+stateUsage+".", 2,
			func(ctx context.Context, c *admin.Client, a []string) (string, error) {
				st, err := parseState(a[1])
				if err != nil {
					return "", err
				}
				return c.CollectionSetState(ctx, a[0], st)
			}),
		"reroute": simple("NODE", "Move the sites of node scheduler NODE (its --id), which will not come back, to the\nregistered node schedulers (RerouteNodeScheduler; multinode scheduler only).", 1,
			func(ctx context.Context, c *admin.Client, a []string) (string, error) {
				return c.RerouteNodeScheduler(ctx, a[0])
			}),
		"refresh-only": simple("COLL on|off", "Only revisit known content (on), or crawl new content too (off) (CollectionEnableRefreshOnly, CollectionDisableRefreshOnly).", 2,
			func(ctx context.Context, c *admin.Client, a []string) (string, error) {
				switch a[1] {
				case "on":
					return c.CollectionEnableRefreshOnly(ctx, a[0])
				case "off":
					return c.CollectionDisableRefreshOnly(ctx, a[0])
				}
				return "", fmt.Errorf("refresh-only: want on or off, got %q", a[1])
			}),
		"log-level": {Usage: "[LEVEL]", Help: "Print the log level, or set it: a number (0x28) or names joined by commas (debug,error).\nNames: info 4, debug 8, warning 16, error 32, critical 64, verbose 128.", NArgs: -1, Min: 0,
			Flags: func(fs *flag.FlagSet) RunFunc {
				return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
					switch len(a) {
					case 0:
						l, err := c.GetLogLevel(ctx)
						if err != nil {
							return err
						}
						fmt.Fprintf(stdout, "%#x %s\n", l, logLevelNames(l))
						return nil
					case 1:
						l, err := parseLogLevel(a[0])
						if err != nil {
							return err
						}
						if err := c.SetLogLevel(ctx, l); err != nil {
							return err
						}
						fmt.Fprintf(stdout, "log level set to %#x %s\n", l, logLevelNames(l))
						return nil
					}
					return ErrUsage
				}
			}},
		"nodes": {Usage: "", Help: "List the node schedulers of a multinode scheduler (GetNodeSchedulerXmlRpcPorts).", NArgs: 0,
			Flags: func(fs *flag.FlagSet) RunFunc {
				return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
					l, err := c.GetNodeSchedulerXmlRpcPorts(ctx)
					for _, hp := range l {
						fmt.Fprintln(stdout, hp)
					}
					return err
				}
			}},
		"routing": simple("COLL SITE", "Print the node scheduler a site is routed to (CollectionGetSiteRoutingAddress).", 2,
			func(ctx context.Context, c *admin.Client, a []string) (string, error) {
				hp, err := c.CollectionGetSiteRoutingAddress(ctx, a[0], a[1])
				return hp.String(), err
			}),
		"methods": {Usage: "", Help: "List the methods the server offers (system.listMethods).", NArgs: 0,
			Flags: func(fs *flag.FlagSet) RunFunc {
				return func(ctx context.Context, stdout io.Writer, c *admin.Client, a []string) error {
					l, err := c.ListMethods(ctx)
					for _, m := range l {
						fmt.Fprintln(stdout, m)
					}
					return err
				}
			}},
	}
}

// states are the collection states CollectionSetState takes, by name
// (MS-FSCMT 2.2.3.21; 3, being removed, is CollectionDelete's).
var states = []struct {
	name string
	n    int
}{{"active", 1}, {"blocked", 2}, {"suspended", 4}, {"suspended-disk", 5}, {"compaction-initiated", 6},
	{"compacting", 7}, {"suspended-delay", 8}}

const stateUsage = "active (1), blocked (2), suspended (4), suspended-disk (5), compaction-initiated (6), compacting (7), suspended-delay (8)"

func parseState(s string) (int, error) {
	for _, st := range states {
		if strings.EqualFold(s, st.name) || s == strconv.Itoa(st.n) {
			return st.n, nil
		}
	}
	return 0, fmt.Errorf("unknown collection state %q (want %s)", s, stateUsage)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var logLevelBits = []struct {
	name string
	bit  int
}{{"info", admin.LogInfo}, {"debug", admin.LogDebug}, {"warning", admin.LogWarning}, {"error", admin.LogError},
	{"critical", admin.LogCritical}, {"verbose", admin.LogVerbose}}

func logLevelNames(l int) string {
	var names []string
	for _, b := range logLevelBits {
		if l&b.bit != 0 {
			names = append(names, b.name)
		}
	}
	return "(" + strings.Join(names, ",") + ")"
}

func parseLogLevel(s string) (int, error) {
	if n, err := strconv.ParseInt(s, 0, 32); err == nil {
		return int(n), nil
	}
	l := 0
	for _, name := range strings.Split(s, ",") {
		found := false
		for _, b := range logLevelBits {
			if strings.EqualFold(strings.TrimSpace(name), b.name) {
				l |= b.bit
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown log level %q (want a number or info, debug, warning, error, critical, verbose)", name)
		}
	}
	return l, nil
}

func printCollectionStats(w io.Writer, coll, cycle string, f *stats.CollectionFlat) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	fmt.Fprintf(tw, "collection\t%s (%s cycle)\n", coll, cycle)
	fmt.Fprintf(tw, "status\t%s\n", f.Status)
	if f.CrawlMode != "" {
		fmt.Fprintf(tw, "crawl mode\t%s\n", f.CrawlMode)
	}
	fmt.Fprintf(tw, "progress\t%d%% (%s)\n", f.ProgressPercent, f.ProgressText)
	fmt.Fprintf(tw, "cycle\t%d\n", f.Epoch)
	fmt.Fprintf(tw, "active sites\t%d\n", f.ActiveSites)
	fmt.Fprintf(tw, "feeding\t%s\n", map[bool]string{true: "on", false: "paused"}[f.Feeding == 1])
	rows := []struct {
		name string
		v    float64
	}{
		{"processed", f.Processed}, {"downloaded", f.Downloaded}, {"stored", f.Stored}, {"modified", f.Modified},
		{"unchanged", f.Unchanged}, {"deleted", f.Deleted}, {"documents in store", float64(f.DocumentStore)},
		{"retries", f.Retries}, {"bytes in", f.ReadNet}, {"bytes out", f.WriteNet},
		{"document size avg", f.DocSizeAvg}, {"document size max", f.DocSizeMax},
		{"download time avg (s)", f.DLTimeAvg}, {"download time max (s)", f.DLTimeMax},
		{"documents/s", f.DocRate}, {"bytes in/s", f.DataRateIn}, {"bytes out/s", f.DataRateOut},
		{"links local", f.Local}, {"links to other sites", f.LocalFwd}, {"links forwarded to nodes", f.NodeSchedulerFwd},
		{"fed", f.PPFed}, {"indexed", f.PPSucceeded}, {"feed failures", f.PPFailed}, {"feed deletes", f.PPDeleted},
		{"unique checksums", f.PPChecksums},
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r.name, num(r.v))
	}
	for _, h := range []struct {
		name string
		m    map[string]float64
	}{{"HTTP responses", f.HTTPResponse}, {"MIME types", f.MimeType}, {"URI skips", f.URISkip}, {"document skips", f.DocSkip}} {
		if len(h.m) == 0 {
			continue
		}
		keys := make([]string, 0, len(h.m))
		for k := range h.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + num(h.m[k])
		}
		fmt.Fprintf(tw, "%s\t%s\n", h.name, strings.Join(parts, " "))
	}
	fmt.Fprintf(tw, "statistics age\t%s\n", f.StatUpdated)
	tw.Flush()
}

func printGlobalStats(w io.Writer, rep *admin.GlobalReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	fmt.Fprintf(tw, "\trecent\tcomplete\n")
	get := func(f *stats.GlobalFlat, pick func(*stats.GlobalFlat) float64) string {
		if f == nil {
			return "-"
		}
		return num(pick(f))
	}
	for _, r := range []struct {
		name string
		pick func(*stats.GlobalFlat) float64
	}{
		{"DNS requests", func(f *stats.GlobalFlat) float64 { return f.DNSRequests }},
		{"DNS responses", func(f *stats.GlobalFlat) float64 { return f.DNSResponses }},
		{"DNS retries", func(f *stats.GlobalFlat) float64 { return f.DNSRetries }},
		{"DNS timeouts", func(f *stats.GlobalFlat) float64 { return f.DNSTimeout }},
		{"DNS bytes in", func(f *stats.GlobalFlat) float64 { return f.DNSRead }},
		{"DNS bytes out", func(f *stats.GlobalFlat) float64 { return f.DNSWrite }},
		{"DNS requests/s", func(f *stats.GlobalFlat) float64 { return f.DNSRate }},
		{"DNS rate limit", func(f *stats.GlobalFlat) float64 { return f.DNSRateLimit }},
	} {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.name, get(rep.Delta, r.pick), get(rep.Complete, r.pick))
	}
	tw.Flush()
}

// WriteChain prints a feeding chain as trawl admin chain does: a line for
// the name server and master, one per distributor and one per indexer;
// with asJSON the chain as JSON.
func WriteChain(w io.Writer, c *admin.ChainStatus, asJSON bool) error {
	if c == nil {
		return errors.New("the server feeds no chain (not trawl run, or --index=false)")
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	master := "none"
	if c.MasterID >= 0 {
		master = fmt.Sprintf("distributor %d at %s", c.MasterID, c.Master)
	}
	where := ""
	if c.InProcess {
		where = " (in process)"
	}
	fmt.Fprintf(w, "nameserver %s%s master %s\n", c.NameServer, where, master)
	if c.Error != "" {
		fmt.Fprintf(w, "error %s\n", c.Error)
	}
	for _, d := range c.Distributors {
		role := "backup"
		if d.Master {
			role = "master"
		}
		if d.Error != "" {
			fmt.Fprintf(w, "distributor %d %s %s: %s\n", d.NodeID, d.Addr, role, d.Error)
			continue
		}
		fmt.Fprintf(w, "distributor %d %s %s sessions %d operations-in-flight %d\n", d.NodeID, d.Addr, role, d.Sessions, d.Operations)
	}
	for _, ix := range c.Indexers {
		if ix.Error != "" {
			fmt.Fprintf(w, "indexer %s %s: %s\n", ix.Partition, ix.Addr, ix.Error)
			continue
		}
		fmt.Fprintf(w, "indexer %s %s documents %d\n", ix.Partition, ix.Addr, ix.Documents)
	}
	return nil
}
