package admin

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxURIFile caps the size of a URI file (AddURIFile,
// CollectionDeleteURIFile).
const MaxURIFile = 64 << 20

// URIFiles reads the URI files of AddURIFile and CollectionDeleteURIFile.
// MS-FSCADM makes the server read any absolute path it is given; trawl only
// reads files inside Dir (after resolving symbolic links), and none when
// Dir is empty (docs/decisions/admin.md).
type URIFiles struct {
	Dir string
}

// Read returns the URIs of the file at path: one per line, UTF-8, blank
// lines and lines starting with '#' skipped. Every failure is a refusal
// (Refuse) naming what was wrong.
func (u URIFiles) Read(path string) ([]string, error) {
	if u.Dir == "" {
		return nil, Refuse("reading URI files is disabled on this crawler (start it with --admin-files DIR)")
	}
	if !filepath.IsAbs(path) {
		return nil, Refuse("URI file %q is not an absolute path", path)
	}
	dir, err := filepath.EvalSymlinks(u.Dir)
	if err != nil {
		return nil, Refuse("URI file directory: %v", err)
	}
	dir, _ = filepath.Abs(dir)
	real, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		return nil, Refuse("URI file %q: %v", path, unwrapPathError(err))
	}
	rel, err := filepath.Rel(dir, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, Refuse("URI file %q is outside the directory this crawler reads URI files from (%s)", path, u.Dir)
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, Refuse("URI file %q: %v", path, unwrapPathError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, Refuse("URI file %q: %v", path, unwrapPathError(err))
	}
	if !st.Mode().IsRegular() {
		return nil, Refuse("URI file %q is not a regular file", path)
	}
	if st.Size() > MaxURIFile {
		return nil, Refuse("URI file %q is %d bytes, more than the limit of %d", path, st.Size(), MaxURIFile)
	}
	var uris []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		uris = append(uris, string(b))
	}
	if err := sc.Err(); err != nil {
		return nil, Refuse("URI file %q: line %d: %v", path, line+1, err)
	}
	return uris, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s", pe.Err)
	}
	return err
}
