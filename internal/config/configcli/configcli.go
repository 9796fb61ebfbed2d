// Package configcli is the trawl config command: check, show and write
// crawl configuration files (MS-FSCCFG XML) with internal/config.
package configcli

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/config"
)

// Command is trawl config.
func Command() cli.Command {
	return cli.Command{Name: "config", Summary: "check, show and write crawl configurations (MS-FSCCFG)", Run: run}
}

const usage = `usage: trawl config <subcommand> [flags] [args]

Check, show and write crawl configuration files (MS-FSCCFG XML).

subcommands:
  check FILE...      validate files; print a summary per collection, or every error
  show FILE          print a collection's effective configuration with defaults, as XML
  encrypt            encrypt a password read from stdin, for passwd, ftp_acct or proxy
  doc                print the parameter reference (docs/configuration.md)

Run "trawl config <subcommand> --help" for its flags.
`

func run(ctx context.Context, env *cli.Env, args []string) error {
	return cli.Group(ctx, env, "config", usage, map[string]func(context.Context, *cli.Env, []string) error{
		"check": check, "show": show, "encrypt": encrypt, "doc": doc}, args)
}

func check(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "config check", "config check [flags] FILE...",
		"Validate crawl configuration files. For each valid file print one line per collection;\n"+
			"otherwise print every error as file:line: collection C: parameter P: message and exit 1.\n"+
			"Warnings (parameters the crawl does not honour yet, settings without effect) go to stderr.")
	keyFile := fs.String("key-file", "", "key file to check that encrypted passwords decrypt (default: not checked)")
	verbose := fs.Bool("v", false, "list every parameter that the crawl does not honour yet, not just their number")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return cli.ErrUsage
	}
	opts := &config.Options{}
	if *keyFile != "" {
		k, err := config.LoadKey(*keyFile)
		if err != nil {
			return err
		}
		opts.Key = k
	}
	failed := false
	for _, f := range fs.Args() {
		cfg, err := config.ParseFile(f, opts)
		if err != nil {
			failed = true
			var list config.ErrorList
			if errors.As(err, &list) {
				for _, e := range list {
					fmt.Fprintln(env.Stderr, e)
				}
			} else {
				fmt.Fprintln(env.Stderr, err)
			}
			continue
		}
		cfg.WriteWarnings(env.Stderr, *verbose)
		for _, c := range cfg.Collections {
			fmt.Fprintln(env.Stdout, c.Summary(f))
		}
		if len(cfg.Collections) == 0 {
			fmt.Fprintf(env.Stdout, "%s: no collections\n", f)
		}
	}
	if failed {
		return cli.ExitError{Code: 1}
	}
	return nil
}

func show(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "config show", "config show [flags] FILE",
		"Print the effective configuration of the file's collections as XML, with every default filled in.\n"+
			"With --node or --subcollection, that node's overrides and that subcollection's parameters are merged in.")
	coll := fs.String("collection", "", "show only this collection")
	node := fs.String("node", "", "merge the Node overrides of this node scheduler")
	sub := fs.String("subcollection", "", "merge the parameters of this subcollection")
	if err := cli.ParseFlags(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return cli.ErrUsage
	}
	cfg, err := config.ParseFile(fs.Arg(0), nil)
	if err != nil {
		return err
	}
	var out []*config.Collection
	for _, c := range cfg.Collections {
		if *coll != "" && c.Name != *coll {
			continue
		}
		if *sub != "" && c.SubCollection(*sub) == nil {
			return fmt.Errorf("collection %s has no subcollection %q", c.Name, *sub)
		}
		if *node != "" && c.Node(*node) == nil {
			fmt.Fprintf(env.Stderr, "trawl config show: note: collection %s has no Node %q; showing the collection's configuration\n", c.Name, *node)
		}
		out = append(out, c.Effective(*sub, *node).Materialize())
	}
	if len(out) == 0 {
		var names []string
		for _, c := range cfg.Collections {
			names = append(names, c.Name)
		}
		return fmt.Errorf("no collection %q in %s (collections: %s)", *coll, fs.Arg(0), strings.Join(names, ", "))
	}
	return config.WriteCollections(env.Stdout, out)
}

// reorder moves a leading file argument after the flags, so that
// "show FILE --collection C" works as well as "show --collection C FILE".
func reorder(args []string) []string {
	if len(args) > 1 && !strings.HasPrefix(args[0], "-") {
		return append(append([]string(nil), args[1:]...), args[0])
	}
	return args
}

func encrypt(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "config encrypt", "config encrypt [flags] < password",
		"Encrypt a password for passwd, ftp_acct or proxy. The password is read from stdin (one line;\n"+
			"typed without echo on a terminal) and the value to paste, \"!ENC!...\", is printed.\n"+
			"The key file holds 64 hex digits (AES key material); see docs/decisions.md.")
	def, _ := config.DefaultKeyFile()
	keyFile := fs.String("key-file", def, "key file")
	newKey := fs.Bool("new-key", false, "create the key file (mode 0600) with a new random key; fails if it exists")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return cli.ErrUsage
	}
	if *keyFile == "" {
		return errors.New("no key file: give --key-file")
	}
	var key *config.Key
	var err error
	if *newKey {
		key, err = config.CreateKeyFile(*keyFile, rand.Reader)
		if err == nil {
			fmt.Fprintf(env.Stderr, "created key file %s\n", *keyFile)
		}
	} else {
		key, err = config.LoadKey(*keyFile)
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("key file %s does not exist (create one with --new-key)", *keyFile)
		}
	}
	if err != nil {
		return err
	}
	pw, err := readPassword(env)
	if err != nil {
		return err
	}
	v, err := key.Encrypt(pw, rand.Reader)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, v)
	return nil
}

// readPassword reads one line from stdin, without echo on a terminal.
func readPassword(env *cli.Env) (string, error) {
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(env.Stderr, "password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(env.Stderr)
		if err != nil {
			return "", fmt.Errorf("reading password: %w", err)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(io.LimitReader(env.Stdin, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("reading password: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty password on stdin")
	}
	return line, nil
}

func doc(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "config doc", "config doc",
		"Print the reference of every configuration parameter and section (the content of docs/configuration.md).")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	_, err := env.Stdout.Write(config.Reference())
	return err
}
