package main

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

	"github.com/trawl/trawl/internal/config"
)

func init() {
	register(&command{name: "config", summary: "check, show and write crawl configurations (MS-FSCCFG)", run: runConfig})
}

const configUsage = `usage: trawl config <subcommand> [flags] [args]

Check, show and write crawl configuration files (MS-FSCCFG XML).

subcommands:
  check FILE...      validate files; print a summary per collection, or every error
  show FILE          print a collection's effective configuration with defaults, as XML
  encrypt            encrypt a password read from stdin, for passwd, ftp_acct or proxy
  doc                print the parameter reference (docs/configuration.md)

Run "trawl config <subcommand> --help" for its flags.
`

func runConfig(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, configUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.stderr, configUsage)
		return exitError{0}
	case "check":
		return runConfigCheck(env, args[1:])
	case "show":
		return runConfigShow(env, args[1:])
	case "encrypt":
		return runConfigEncrypt(env, args[1:])
	case "doc":
		return runConfigDoc(env, args[1:])
	}
	fmt.Fprintf(env.stderr, "trawl config: unknown subcommand %q\n\n%s", args[0], configUsage)
	return errUsage
}

func runConfigCheck(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "config check", "config check [flags] FILE...",
		"Validate crawl configuration files. For each valid file print one line per collection;\n"+
			"otherwise print every error as file:line: collection C: parameter P: message and exit 1.\n"+
			"Warnings (parameters the crawl does not honour yet, settings without effect) go to stderr.")
	keyFile := fs.String("key-file", "", "key file to check that encrypted passwords decrypt (default: not checked)")
	verbose := fs.Bool("v", false, "list every parameter that the crawl does not honour yet, not just their number")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
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
					fmt.Fprintln(env.stderr, e)
				}
			} else {
				fmt.Fprintln(env.stderr, err)
			}
			continue
		}
		cfg.WriteWarnings(env.stderr, *verbose)
		for _, c := range cfg.Collections {
			fmt.Fprintln(env.stdout, c.Summary(f))
		}
		if len(cfg.Collections) == 0 {
			fmt.Fprintf(env.stdout, "%s: no collections\n", f)
		}
	}
	if failed {
		return exitError{1}
	}
	return nil
}

func runConfigShow(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "config show", "config show [flags] FILE",
		"Print the effective configuration of the file's collections as XML, with every default filled in.\n"+
			"With --node or --subcollection, that node's overrides and that subcollection's parameters are merged in.")
	coll := fs.String("collection", "", "show only this collection")
	node := fs.String("node", "", "merge the Node overrides of this node scheduler")
	sub := fs.String("subcollection", "", "merge the parameters of this subcollection")
	if err := parseFlags(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
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
			fmt.Fprintf(env.stderr, "trawl config show: note: collection %s has no Node %q; showing the collection's configuration\n", c.Name, *node)
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
	return config.WriteCollections(env.stdout, out)
}

// reorder moves a leading file argument after the flags, so that
// "show FILE --collection C" works as well as "show --collection C FILE".
func reorder(args []string) []string {
	if len(args) > 1 && !strings.HasPrefix(args[0], "-") {
		return append(append([]string(nil), args[1:]...), args[0])
	}
	return args
}

func runConfigEncrypt(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "config encrypt", "config encrypt [flags] < password",
		"Encrypt a password for passwd, ftp_acct or proxy. The password is read from stdin (one line;\n"+
			"typed without echo on a terminal) and the value to paste, \"!ENC!...\", is printed.\n"+
			"The key file holds 64 hex digits (AES key material); see docs/decisions.md.")
	def, _ := config.DefaultKeyFile()
	keyFile := fs.String("key-file", def, "key file")
	newKey := fs.Bool("new-key", false, "create the key file (mode 0600) with a new random key; fails if it exists")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	if *keyFile == "" {
		return errors.New("no key file: give --key-file")
	}
	var key *config.Key
	var err error
	if *newKey {
		key, err = config.CreateKeyFile(*keyFile, rand.Reader)
		if err == nil {
			fmt.Fprintf(env.stderr, "created key file %s\n", *keyFile)
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
	fmt.Fprintln(env.stdout, v)
	return nil
}

// readPassword reads one line from stdin, without echo on a terminal.
func readPassword(env *cmdEnv) (string, error) {
	if f, ok := env.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(env.stderr, "password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(env.stderr)
		if err != nil {
			return "", fmt.Errorf("reading password: %w", err)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(io.LimitReader(env.stdin, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("reading password: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty password on stdin")
	}
	return line, nil
}

func runConfigDoc(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "config doc", "config doc",
		"Print the reference of every configuration parameter and section (the content of docs/configuration.md).")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := env.stdout.Write(config.Reference())
	return err
}
