package lint

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"sort"
	"strings"
)

// The size limits of DESIGN.md section 6 and issue #17, on the module's
// non-test Go files: a command's directory under cmd/ stays thin, a file in
// internal/ is a room one reads in a sitting, a function a step one holds
// in mind. A table (of methods, of subcommands) may be as long as its rows.
const (
	MaxCmdLines  = 2000 // non-test lines of one command (cmd/NAME)
	MaxFileLines = 900  // lines of one file in internal/
	MaxFuncLines = 150  // lines of one function, from func to its closing brace
)

// Tables are the functions, by Oversize key, that are tables and may pass
// MaxFuncLines.
var Tables = map[string]string{
	"internal/admin/methods.go: func methodTable":        "the MS-FSCADM methods, one row each",
	"internal/admin/admincli/admincli.go: func Commands": "trawl admin's subcommands, one row each",
}

// SizeExceptions are known oversize places, by Oversize key, each waiting
// for the issue named in its value.
var SizeExceptions = map[string]string{}

// Oversize is a command, file or function over its limit.
type Oversize struct {
	Key   string // "cmd/NAME: total", "FILE: file" or "FILE: func NAME" (a method: func TYPE.NAME)
	File  string // the command's directory, or the file
	Line  int    // the function's first line
	Lines int
	Limit int
}

func (o Oversize) String() string {
	where, what, _ := strings.Cut(o.Key, ": ")
	if o.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, o.Line)
	}
	return fmt.Sprintf("%s: %s has %d lines (limit %d)", where, what, o.Lines, o.Limit)
}

// CheckSizes returns the oversize places of the module rooted at root that
// are neither Tables nor SizeExceptions.
func CheckSizes(root string) ([]Oversize, error) {
	all, err := Sizes(root)
	return unlisted(all), err
}

// unlisted returns the places of all that are neither Tables nor
// SizeExceptions.
func unlisted(all []Oversize) []Oversize {
	var out []Oversize
	for _, o := range all {
		_, table := Tables[o.Key]
		_, known := SizeExceptions[o.Key]
		if !table && !known {
			out = append(out, o)
		}
	}
	return out
}

// stale returns the keys of lists that name no place of all: entries that
// no longer apply, sorted.
func stale(all []Oversize, lists ...map[string]string) []string {
	over := map[string]bool{}
	for _, o := range all {
		over[o.Key] = true
	}
	var out []string
	for _, list := range lists {
		for key := range list {
			if !over[key] {
				out = append(out, key)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Sizes returns every oversize place of the module rooted at root (its
// non-test Go files, as Check walks them), sorted by key.
func Sizes(root string) ([]Oversize, error) {
	var out []Oversize
	cmdLines := map[string]int{}
	err := goFiles(root, func(file, rel string) error {
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		lines := bytes.Count(src, []byte("\n"))
		if len(src) > 0 && src[len(src)-1] != '\n' {
			lines++
		}
		if dir := path.Dir(rel); strings.HasPrefix(dir, "cmd/") {
			cmdLines[strings.Join(strings.SplitN(dir, "/", 3)[:2], "/")] += lines
		}
		if strings.HasPrefix(rel, "internal/") && lines > MaxFileLines {
			out = append(out, Oversize{Key: rel + ": file", File: rel, Lines: lines, Limit: MaxFileLines})
		}
		fs, err := longFuncs(file, rel, src)
		out = append(out, fs...)
		return err
	})
	for dir, n := range cmdLines {
		if n >= MaxCmdLines {
			out = append(out, Oversize{Key: dir + ": total", File: dir, Lines: n, Limit: MaxCmdLines - 1})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, err
}

// longFuncs returns the functions of a file over MaxFuncLines.
func longFuncs(file, rel string, src []byte) ([]Oversize, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("lint: %w", err)
	}
	var out []Oversize
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		first, last := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		if n := last - first + 1; n > MaxFuncLines {
			out = append(out, Oversize{Key: rel + ": func " + funcName(fd), File: rel, Line: first, Lines: n, Limit: MaxFuncLines})
		}
	}
	return out, nil
}

// funcName is NAME, or TYPE.NAME for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
