package table

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Main runs one table program with its command-line arguments, in the
// spec's syntax (see the package comment): args[0] is sort, split, merge,
// reduce or pythontasks; or serve (Serve, on stdin and stdout).
func Main(ctx context.Context, args []string, reg *Registry) error {
	if len(args) == 0 {
		return fmt.Errorf("table: usage: table sort|split|merge|reduce|pythontasks ARGS")
	}
	rest := args[1:]
	switch args[0] {
	case "sort":
		return mainSort(ctx, rest)
	case "split":
		return mainSplit(ctx, rest)
	case "merge":
		return mainMerge(ctx, rest, reg)
	case "reduce":
		return mainReduce(ctx, rest, reg)
	case "serve":
		return Serve(ctx, os.Stdin, os.Stdout, reg)
	case "pythontasks":
		if len(rest) == 0 {
			return fmt.Errorf("table: pythontasks needs a function name")
		}
		f, err := reg.Task(rest[0])
		if err != nil {
			return err
		}
		return f(rest[1:])
	}
	return fmt.Errorf("table: unknown program %q (sort, split, merge, reduce, pythontasks)", args[0])
}

// value returns the argument after flag i.
func value(args []string, i int) (string, error) {
	if i+1 >= len(args) {
		return "", fmt.Errorf("table: %s needs a value", args[i])
	}
	return args[i+1], nil
}

// mainSort: -S <size>M -T <dir> [-m] [-u] [-kS[,E][n][r]]... inputs... -o output
func mainSort(ctx context.Context, args []string) error {
	opt := SortOptions{Mem: DefaultSortMem}
	var inputs []string
	output := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-S":
			v, err := value(args, i)
			if err != nil {
				return err
			}
			if opt.Mem, err = ParseSize(v); err != nil {
				return err
			}
			i++
		case a == "-T":
			if _, err := value(args, i); err != nil {
				return err
			}
			i++ // must be "." and is ignored (2.2.21.2.2)
		case a == "-o":
			v, err := value(args, i)
			if err != nil {
				return err
			}
			output = v
			i++
		case a == "-m":
			opt.Merge = true
		case a == "-u":
			opt.Unique = true
		case strings.HasPrefix(a, "-k"):
			k, err := ParseSortKey(a)
			if err != nil {
				return err
			}
			opt.Keys = append(opt.Keys, k)
		case strings.HasPrefix(a, "-") && a != "-":
			return fmt.Errorf("table: sort: unknown option %q", a)
		default:
			inputs = append(inputs, a)
		}
	}
	if output == "" || len(inputs) == 0 {
		return fmt.Errorf("table: sort needs input files and -o output")
	}
	return Sort(ctx, inputs, output, opt)
}

// mainSplit: inputfile (-o outputspec)... [--splitfunction[2] name]
func mainSplit(ctx context.Context, args []string) error {
	var input string
	var outs []OutputSpec
	long := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o":
			v, err := value(args, i)
			if err != nil {
				return err
			}
			o, err := ParseOutputSpec(v)
			if err != nil {
				return err
			}
			outs = append(outs, o)
			i++
		case a == "--splitfunction" || a == "--splitfunction2":
			v, err := value(args, i)
			if err != nil {
				return err
			}
			if v != "wamakefileutils.long_split" && v != "spmakefileutils.long_split" {
				return fmt.Errorf("table: unknown split function %q", v)
			}
			long = true
			i++
		case input == "" && !strings.HasPrefix(a, "-"):
			input = a
		default:
			return fmt.Errorf("table: split: unexpected argument %q", a)
		}
	}
	if input == "" || len(outs) == 0 {
		return fmt.Errorf("table: split needs an input file and -o outputspec")
	}
	return Split(ctx, input, outs, long)
}

// flagIs accepts the spec's garbled spellings: "-l" or "-1", "-o" or "o".
func flagIs(a string, names ...string) bool {
	for _, n := range names {
		if a == n {
			return true
		}
	}
	return false
}

type tableArgs struct {
	inputs   []InputSpec
	output   *OutputSpec
	function string
	reduce   bool
	funcvars string
}

func parseTableArgs(args []string) (tableArgs, error) {
	var t tableArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case flagIs(a, "-i", "-"):
			v, err := value(args, i)
			if err != nil {
				return t, err
			}
			in, err := ParseInputSpec(v)
			if err != nil {
				return t, err
			}
			t.inputs = append(t.inputs, in)
			i++
		case flagIs(a, "-o", "o"):
			v, err := value(args, i)
			if err != nil {
				return t, err
			}
			o, err := ParseOutputSpec(v)
			if err != nil {
				return t, err
			}
			t.output = &o
			i++
		case flagIs(a, "-l", "-1"):
			v, err := value(args, i)
			if err != nil {
				return t, err
			}
			t.function = v
			i++
		case a == "-r":
			t.reduce = true
		case strings.HasPrefix(a, "--funcvars="):
			t.funcvars = strings.TrimPrefix(a, "--funcvars=")
		default:
			return t, fmt.Errorf("table: unexpected argument %q", a)
		}
	}
	if len(t.inputs) == 0 || t.output == nil {
		return t, fmt.Errorf("table: needs -i inputspec and -o outputspec")
	}
	return t, nil
}

// mainMerge: (-i inputspec){2,3} -o outputspec -l function [-r]
func mainMerge(ctx context.Context, args []string, reg *Registry) error {
	t, err := parseTableArgs(args)
	if err != nil {
		return err
	}
	if t.function == "" {
		return fmt.Errorf("table: merge needs -l function")
	}
	fn, err := reg.Merge(t.function, nil)
	if err != nil {
		return err
	}
	return Merge(ctx, t.inputs, *t.output, fn, t.reduce)
}

// DefaultReduce is the function reduce.pyc applies when none is named
// (3.6.5.3 requires a default and names none).
const DefaultReduce = "table.first"

// mainReduce: -i inputspec -o outputspec [-l function] [--funcvars=...]
func mainReduce(ctx context.Context, args []string, reg *Registry) error {
	t, err := parseTableArgs(args)
	if err != nil {
		return err
	}
	if len(t.inputs) != 1 {
		return fmt.Errorf("table: reduce takes one input table")
	}
	var vars Vars
	if t.funcvars != "" {
		if vars, err = DecodeFuncvars(t.funcvars); err != nil {
			return err
		}
	}
	if t.function == "" {
		t.function = DefaultReduce
	}
	fn, err := reg.Reduce(t.function, vars)
	if err != nil {
		return err
	}
	return Reduce(ctx, t.inputs[0], *t.output, fn)
}
