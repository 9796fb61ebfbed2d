package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/admin/admincli"
)

func init() {
	register(&command{name: "admin", summary: "administer a running crawler over XML-RPC (MS-FSCADM)", run: runAdmin})
}

func runAdmin(ctx context.Context, env *cmdEnv, args []string) error {
	fs := flag.NewFlagSet("admin", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprint(env.stderr, admincli.Usage) }
	addr := fs.String("C", "127.0.0.1:13000", "crawler admin address host:port (or an http:// URL)")
	var auth admin.Auth
	fs.StringVar(&auth.Token, "token", os.Getenv("TRAWL_ADMIN_TOKEN"), "token the crawler requires (--admin-token); default $TRAWL_ADMIN_TOKEN")
	fs.StringVar(&auth.User, "user", "", "user for basic authentication (--admin-user)")
	fs.StringVar(&auth.Password, "password", os.Getenv("TRAWL_ADMIN_PASSWORD"), "password for --user; default $TRAWL_ADMIN_PASSWORD")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fmt.Fprint(env.stderr, admincli.Usage)
		return errUsage
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	if name == "help" {
		fmt.Fprint(env.stdout, admincli.Usage)
		return nil
	}
	cmds := admincli.Commands()
	sc, ok := cmds[name]
	if !ok {
		fmt.Fprintf(env.stderr, "trawl admin: unknown subcommand %q\n\n%s", name, admincli.Usage)
		return errUsage
	}
	sfs := newFlagSet(env, "admin "+name, "admin [-C host:port] "+name+" "+sc.Usage, sc.Help)
	run := sc.Flags(sfs)
	if err := parseFlags(sfs, rest); err != nil {
		return err
	}
	pos := sfs.Args()
	if (sc.NArgs >= 0 && len(pos) != sc.NArgs) || (sc.NArgs < 0 && len(pos) < sc.Min) {
		sfs.Usage()
		return errUsage
	}
	c := admin.NewClient(*addr, auth.HTTPClient(&http.Client{Timeout: 5 * time.Minute}))
	err := run(ctx, env.stdout, c, pos)
	if errors.Is(err, admincli.ErrUsage) {
		return errUsage
	}
	var ae *admin.Error
	if errors.As(err, &ae) {
		// The server's message is the whole story; drop the package prefix.
		if ae.Fault {
			return errors.New(ae.Msg)
		}
		return fmt.Errorf("%s failed: %s", ae.Method, ae.Msg)
	}
	return err
}
