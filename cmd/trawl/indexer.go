package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/tlsconf"
)

func init() {
	register(&command{name: "indexer", summary: "run an indexing node: one partition of the index behind the content distributors", run: runIndexer})
}

func runIndexer(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "indexer", "indexer (--nameserver HOST:PORT | --registry etcd://HOST:PORT,...) [--partition I --partitions N] [--base-port N] [--data DIR] [--host HOST]",
		"Run an indexing node: it holds partition I of N of the index (documents placed by the hash of their URI)\n"+
			"in DIR/indexer/index, binds itself in the name server, and applies the operations the content\n"+
			"distributors send it; trawl search --nameserver queries every partition.")
	ns := fs.String("nameserver", "", "HOST:PORT of the name server (its base+4)")
	registry := fs.String("registry", "", "etcd://HOST:PORT[,HOST:PORT...]: etcd as the registry instead of the name server")
	partition := fs.Int("partition", 0, "this indexer's partition, 0 <= I < N")
	partitions := fs.Int("partitions", 1, "number of partitions N (the same on every indexer)")
	basePort := fs.Int("base-port", 13000, fmt.Sprintf("base port; the indexer listens on base+%d (0: a port the system chooses, found through the name server)", indexer.PortOffset))
	host := fs.String("host", "", "host name put in this indexer's object reference (default: the host name)")
	listen := fs.String("listen", "", "address to listen on (default: every interface)")
	data := fs.String("data", "./data", "data directory (the index is in DIR/indexer/index)")
	rebind := fs.Duration("rebind", 5*time.Second, "how often the indexer binds itself again in the registry")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	tlsf := tlsconf.Register(fs)
	df := diskspace.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tc, err := loadTLS(env, "indexer", tlsf)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 || *partitions < 1 || *partition < 0 || *partition >= *partitions {
		fmt.Fprintf(env.stderr, "trawl indexer: want 0 <= --partition < --partitions\n")
		return errUsage
	}
	if *basePort < 0 || *basePort+indexer.PortOffset > 65535 {
		fmt.Fprintf(env.stderr, "trawl indexer: bad --base-port %d\n", *basePort)
		return errUsage
	}
	log, err := roleLogger(env, "indexer", *logLevel)
	if err != nil {
		return err
	}
	reg, closeReg, err := openRegistryTLS(env, "indexer", *ns, *registry, tc)
	if err != nil {
		return err
	}
	defer closeReg()
	if *host == "" {
		if *host, err = os.Hostname(); err != nil {
			return err
		}
	}
	disk, err := df.Guard(*data, "indexer", log)
	if err != nil {
		return err
	}
	s, err := indexer.NewServer(indexer.ServerConfig{Listen: *listen, AnyPort: *basePort == 0, Host: *host, BasePort: *basePort, Dir: filepath.Join(*data, "indexer"),
		Partition: *partition, Partitions: *partitions, Registry: reg, RebindInterval: *rebind, Logger: log, TLS: tc, Disk: disk})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "indexer partition %d of %d listening on %s\n", *partition, *partitions, s.Addr())
	return s.Run(ctx)
}
