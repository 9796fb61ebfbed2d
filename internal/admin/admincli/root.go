package admincli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/tlsconf"
)

// Root is trawl admin: its flags choose the crawler and the credentials,
// its first argument one of Commands.
func Root() cli.Command {
	return cli.Command{Name: "admin", Summary: "administer a running crawler over XML-RPC (MS-FSCADM)", Run: run}
}

func run(ctx context.Context, env *cli.Env, args []string) error {
	fs := flag.NewFlagSet("admin", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, Usage) }
	addr := fs.String("C", "127.0.0.1:13000", "crawler admin address host:port (or an http:// URL)")
	var auth admin.Auth
	fs.StringVar(&auth.Token, "token", os.Getenv("TRAWL_ADMIN_TOKEN"), "token the crawler requires (--admin-token); default $TRAWL_ADMIN_TOKEN")
	fs.StringVar(&auth.User, "user", "", "user for basic authentication (--admin-user)")
	fs.StringVar(&auth.Password, "password", os.Getenv("TRAWL_ADMIN_PASSWORD"), "password for --user; default $TRAWL_ADMIN_PASSWORD")
	tlsf := tlsconf.Register(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	tc, err := tlsf.Load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "trawl admin: %v\n", err)
		return cli.ErrUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprint(env.Stderr, Usage)
		return cli.ErrUsage
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	if name == "help" {
		fmt.Fprint(env.Stdout, Usage)
		return nil
	}
	cmds := Commands()
	sc, ok := cmds[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "trawl admin: unknown subcommand %q\n\n%s", name, Usage)
		return cli.ErrUsage
	}
	sfs := cli.NewFlagSet(env, "admin "+name, "admin [-C host:port] "+name+" "+sc.Usage, sc.Help)
	run := sc.Flags(sfs)
	if err := cli.ParseFlags(sfs, rest); err != nil {
		return err
	}
	pos := sfs.Args()
	if (sc.NArgs >= 0 && len(pos) != sc.NArgs) || (sc.NArgs < 0 && len(pos) < sc.Min) {
		sfs.Usage()
		return cli.ErrUsage
	}
	url := *addr
	if tc != nil && !strings.Contains(url, "://") {
		url = "https://" + url + admin.Path
	}
	c := admin.NewClient(url, auth.HTTPClient(tc.HTTPClient(*addr, 5*time.Minute)))
	err = run(ctx, env.Stdout, c, pos)
	if errors.Is(err, ErrUsage) {
		return cli.ErrUsage
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
