package dmake

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Build is a parsed build file: the task graph a master runs.
type Build struct {
	// Dir is the working directory of the build on every worker, relative
	// to the worker's directory ("." if not given).
	Dir string
	// Env is sent with setenv after LANG=C and LC_ALL=C.
	Env [][2]string
	// DiskLimitMB, when > 0, is sent with disk_limit.
	DiskLimitMB int64
	// Files are the inputs present before the build: name -> workers.
	Files map[string][]int
	// Targets in file order.
	Targets []*Target
	// Keep lists the files wanted at the end, each on one worker; a kept
	// file is never removed.
	Keep map[string]int
}

// Target is one task of the build: a shell command reading In and writing
// Out in the build directory.
type Target struct {
	Name string
	In   []string
	Out  []string
	// Run is the command after "cmd /C": the command name and its
	// arguments, sent as they are.
	Run []string
}

// MaxBuildFile bounds a build file.
const MaxBuildFile = 16 << 20

// ParseBuild reads a build file (format in the package comment). workers
// is the number of workers, to check the indexes.
func ParseBuild(r io.Reader, workers int) (*Build, error) {
	b := &Build{Dir: ".", Files: map[string][]int{}, Keep: map[string]int{}}
	sc := bufio.NewScanner(io.LimitReader(r, MaxBuildFile))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur *Target
	producer := map[string]string{}
	lineNo := 0
	bad := func(format string, a ...any) error {
		return fmt.Errorf("dmake: build file line %d: %s", lineNo, fmt.Sprintf(format, a...))
	}
	worker := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n >= workers {
			return 0, bad("worker %q is not an index 0..%d of the --worker list", s, workers-1)
		}
		return n, nil
	}
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if i := strings.Index(line, "#"); i >= 0 && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		if indented {
			if cur == nil {
				return nil, bad("indented line outside a target")
			}
			switch f[0] {
			case "in":
				cur.In = append(cur.In, f[1:]...)
			case "out":
				for _, o := range f[1:] {
					if p, dup := producer[o]; dup {
						return nil, bad("%s is produced by %s already", o, p)
					}
					producer[o] = cur.Name
				}
				cur.Out = append(cur.Out, f[1:]...)
			case "run":
				if cur.Run != nil {
					return nil, bad("target %s has two run lines", cur.Name)
				}
				if len(f) < 2 {
					return nil, bad("run needs a command")
				}
				cur.Run = f[1:]
			default:
				return nil, bad("unknown target line %q (in, out, run)", f[0])
			}
			continue
		}
		cur = nil
		switch f[0] {
		case "dir":
			if len(f) != 2 {
				return nil, bad("dir takes one directory")
			}
			b.Dir = f[1]
		case "setenv":
			if len(f) != 3 {
				return nil, bad("setenv takes a name and a value")
			}
			b.Env = append(b.Env, [2]string{f[1], f[2]})
		case "disk_limit":
			n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
			if len(f) != 2 || err != nil || n <= 0 {
				return nil, bad("disk_limit takes a number of megabytes")
			}
			b.DiskLimitMB = n
		case "file":
			if len(f) < 3 {
				return nil, bad("file takes a name and the workers holding it")
			}
			for _, s := range f[2:] {
				w, err := worker(s)
				if err != nil {
					return nil, err
				}
				b.Files[f[1]] = append(b.Files[f[1]], w)
			}
		case "keep":
			if len(f) != 3 {
				return nil, bad("keep takes a file and a worker")
			}
			w, err := worker(f[2])
			if err != nil {
				return nil, err
			}
			b.Keep[f[1]] = w
		case "target":
			if len(f) != 2 {
				return nil, bad("target takes a name")
			}
			for _, t := range b.Targets {
				if t.Name == f[1] {
					return nil, bad("target %s defined twice", f[1])
				}
			}
			cur = &Target{Name: f[1]}
			b.Targets = append(b.Targets, cur)
		default:
			return nil, bad("unknown directive %q", f[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dmake: build file: %w", err)
	}
	return b, b.check(producer)
}

func (b *Build) check(producer map[string]string) error {
	for _, t := range b.Targets {
		if t.Run == nil || len(t.Out) == 0 {
			return fmt.Errorf("dmake: target %s needs out and run lines", t.Name)
		}
		for _, in := range t.In {
			if _, ok := producer[in]; !ok {
				if _, ok := b.Files[in]; !ok {
					return fmt.Errorf("dmake: target %s reads %s, which no target produces and no file line places", t.Name, in)
				}
			}
		}
	}
	for f := range b.Keep {
		if _, ok := producer[f]; !ok {
			if _, ok := b.Files[f]; !ok {
				return fmt.Errorf("dmake: keep %s: no such file in the build", f)
			}
		}
	}
	for f := range producer {
		if _, ok := b.Files[f]; ok {
			return fmt.Errorf("dmake: %s is both an initial file and a target's output", f)
		}
	}
	// Cycles: a target may run only after the producers of its inputs.
	state := map[string]int{}
	byName := map[string]*Target{}
	for _, t := range b.Targets {
		byName[t.Name] = t
	}
	var visit func(t *Target) error
	visit = func(t *Target) error {
		switch state[t.Name] {
		case 1:
			return fmt.Errorf("dmake: target %s depends on itself", t.Name)
		case 2:
			return nil
		}
		state[t.Name] = 1
		for _, in := range t.In {
			if p, ok := producer[in]; ok {
				if err := visit(byName[p]); err != nil {
					return err
				}
			}
		}
		state[t.Name] = 2
		return nil
	}
	for _, t := range b.Targets {
		if err := visit(t); err != nil {
			return err
		}
	}
	return nil
}
