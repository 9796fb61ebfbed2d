// Package lint checks the module's architecture rules (DESIGN.md sections
// 3 and 6) by reading its source with go/parser; TestArchitecture runs
// them on the module. The rules:
//
//   - Only cmd/ may import a protocol role package (internal/multinode,
//     internal/nodesched, internal/dupserver, internal/distrib,
//     internal/dmake). A package inside a role's own directory (the
//     role's admin backend, internal/multinode/mnsadmin) may import that
//     role, and no other. SharedWire packages (internal/distrib/wire, the
//     name server's wire format) are not roles: anyone may import them. Test files are exempt: a test may wire roles
//     together to run a crawl in one process.
//   - A role's pipeline package (Pipelines: internal/nodesched/crawlpipe,
//     the node scheduler's per-URI fetch-and-process pipeline) imports no
//     package of a role directory outside itself, its own role included:
//     the role uses the pipeline through its interface (Compile, Process,
//     Screen), never the reverse.
//   - internal/config imports no wire package (internal/cmt,
//     internal/marshal, internal/xmlrpc): the configuration model knows
//     no protocol; internal/cmt/cmtconfig converts.
//   - A machine file (machine*.go in a role package) is a pure state
//     machine: it imports no net, os or syscall package and no storage
//     (pebble, internal/store), reads no wall clock (time.Now, Since,
//     Until, Sleep, After, Tick, NewTimer, NewTicker, AfterFunc) and
//     starts no goroutine. It may use a pipeline package's types (Job,
//     Outcome, Settings) but not its I/O side (PipelineIO: the Pipeline
//     that fetches). Exceptions are listed in Exceptions, each with
//     the issue that removes it.
//   - Sizes (size.go; TestSizes): a command under cmd/ has fewer than
//     MaxCmdLines non-test lines, a file in internal/ at most MaxFileLines,
//     a function at most MaxFuncLines unless it is one of Tables. Known
//     oversize places are listed in SizeExceptions, each with the issue
//     that removes it; TestSizeExceptionsStillHold fails once one no
//     longer applies.
package lint

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Roles are the protocol role packages, relative to the module.
var Roles = []string{"internal/multinode", "internal/nodesched", "internal/dupserver", "internal/distrib", "internal/dmake"}

// SharedWire are packages inside a role's directory that are not the role:
// the wire format and client of MS-FSCDFT's name server and distributors
// (internal/distrib/wire), which every role that registers in the name
// server (dmake workers too) speaks.
var SharedWire = []string{"internal/distrib/wire"}

// Pipelines are packages inside a role's directory that hold the role's
// per-URI work; they may not import the role (or any other).
var Pipelines = []string{"internal/nodesched/crawlpipe"}

// PipelineIO are the names of a pipeline package that do I/O, which a
// machine file may not use.
var PipelineIO = []string{"Pipeline", "NewPipeline"}

// WirePackages are the packages internal/config may not import.
var WirePackages = []string{"internal/cmt", "internal/marshal", "internal/xmlrpc"}

// machineImports are the imports a machine file may not have; a path
// relative to the module starts with "internal/".
var machineImports = []string{"net", "net/http", "os", "os/exec", "syscall", "github.com/cockroachdb/pebble", "internal/store"}

// wallClock are the functions of package time that read or wait on the
// wall clock.
var wallClock = map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"Tick": true, "NewTimer": true, "NewTicker": true, "AfterFunc": true}

// Exceptions are known violations, by "file: rule text", each waiting
// for the issue named in its value.
var Exceptions = map[string]string{}

// Violation is one broken rule.
type Violation struct {
	File string // relative to the module root, slash-separated
	Line int
	Rule string
}

func (v Violation) String() string { return fmt.Sprintf("%s:%d: %s", v.File, v.Line, v.Rule) }

// key is the Exceptions key of v.
func (v Violation) key() string { return v.File + ": " + v.Rule }

// Check lints the Go files of the module rooted at root (skipping
// testdata, hidden directories and nested modules) and returns the
// violations not in Exceptions, sorted.
func Check(root string) ([]Violation, error) {
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	var out []Violation
	err = goFiles(root, func(path, rel string) error {
		vs, err := checkFile(path, rel, module)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if _, ok := Exceptions[v.key()]; !ok {
				out = append(out, v)
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, err
}

// goFiles calls fn with the path of every Go file of the module rooted at
// root and its slash-separated path relative to root, skipping testdata,
// hidden directories, nested modules and test files.
func goFiles(root string, fn func(path, rel string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module (bench/)
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return fn(path, filepath.ToSlash(rel))
	})
}

// modulePath reads the module line of go.mod.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("lint: no module line in %s", gomod)
}

// under reports whether pkg (relative to the module) is dir or inside it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// pipelineOf returns the pipeline package that holds pkg.
func pipelineOf(pkg string) (string, bool) {
	for _, p := range Pipelines {
		if under(pkg, p) {
			return p, true
		}
	}
	return "", false
}

// roleOf returns the role whose directory holds pkg.
func roleOf(pkg string) (string, bool) {
	for _, w := range SharedWire {
		if under(pkg, w) {
			return "", false
		}
	}
	for _, r := range Roles {
		if under(pkg, r) {
			return r, true
		}
	}
	return "", false
}

func checkFile(path, rel, module string) ([]Violation, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("lint: %w", err)
	}
	pkg := filepath.ToSlash(filepath.Dir(rel))
	myRole, inRole := roleOf(pkg)
	machine := inRole && strings.HasPrefix(filepath.Base(rel), "machine")
	var out []Violation
	add := func(pos token.Pos, format string, args ...any) {
		out = append(out, Violation{File: rel, Line: fset.Position(pos).Line, Rule: fmt.Sprintf(format, args...)})
	}
	timeName := ""
	pipeNames := map[string]bool{} // the machine file's names of pipeline packages
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		local := p // relative to the module for its own packages
		if m, ok := strings.CutPrefix(p, module+"/"); ok {
			local = m
		}
		if r, ok := roleOf(local); ok && !under(pkg, "cmd") && r != myRole {
			add(im.Pos(), "imports role package %s (only cmd/ may)", local)
		} else if ok && r == myRole {
			if pp, in := pipelineOf(pkg); in && !under(local, pp) {
				add(im.Pos(), "pipeline package imports role package %s", local)
			}
		}
		if _, ok := pipelineOf(local); ok && machine {
			name := local[strings.LastIndex(local, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			pipeNames[name] = true
		}
		if under(pkg, "internal/config") {
			for _, w := range WirePackages {
				if under(local, w) {
					add(im.Pos(), "internal/config imports wire package %s", local)
				}
			}
		}
		if machine {
			for _, bad := range machineImports {
				if local == bad || strings.HasPrefix(local, bad+"/") && strings.HasPrefix(bad, "github.com/") {
					add(im.Pos(), "machine file imports %s", local)
				}
			}
		}
		if p == "time" {
			timeName = "time"
			if im.Name != nil {
				timeName = im.Name.Name
			}
		}
	}
	if !machine {
		return out, nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.GoStmt:
			add(x.Pos(), "machine file starts a goroutine")
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && wallClock[x.Sel.Name] {
				add(x.Pos(), "machine file reads the wall clock (time.%s)", x.Sel.Name)
			}
			if id, ok := x.X.(*ast.Ident); ok && pipeNames[id.Name] && slices.Contains(PipelineIO, x.Sel.Name) {
				add(x.Pos(), "machine file uses the pipeline's I/O side (%s.%s)", id.Name, x.Sel.Name)
			}
		}
		return true
	})
	return out, nil
}
