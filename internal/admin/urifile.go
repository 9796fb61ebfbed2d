package admin

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/trawl/trawl/internal/config"
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
// (Refuse). A path outside Dir, after resolving symbolic links, gets one
// message whether or not it exists and whatever it is; inside Dir, a file
// that is not regular (a FIFO, a device, a directory) is refused before it
// is opened, and the open itself never blocks (O_NONBLOCK, then fstat).
func (u URIFiles) Read(path string) ([]string, error) {
	if u.Dir == "" {
		return nil, Refuse("reading URI files is disabled on this crawler (start it with --admin-files DIR)")
	}
	if !filepath.IsAbs(path) {
		return nil, Refuse("URI file %q is not an absolute path", config.Clip(path))
	}
	outside := Refuse("URI file %q is not a file inside the directory this crawler reads URI files from (%s)", config.Clip(path), u.Dir)
	dir, err := filepath.EvalSymlinks(u.Dir)
	if err != nil {
		return nil, Refuse("URI file directory: %v", err)
	}
	dir, _ = filepath.Abs(dir)
	abs, _ := filepath.Abs(u.Dir)
	clean := filepath.Clean(path)
	if !within(dir, clean) && !within(abs, clean) {
		return nil, outside // decided before touching the path
	}
	real, err := filepath.EvalSymlinks(clean)
	if err != nil || !within(dir, real) {
		return nil, outside
	}
	st, err := os.Lstat(real)
	if err != nil {
		return nil, Refuse("URI file %q: %v", config.Clip(path), unwrapPathError(err))
	}
	if !st.Mode().IsRegular() {
		return nil, Refuse("URI file %q is not a regular file", config.Clip(path))
	}
	if st.Size() > MaxURIFile {
		return nil, Refuse("URI file %q is %d bytes, more than the limit of %d", config.Clip(path), st.Size(), MaxURIFile)
	}
	// Opened without blocking and checked again: the file may have been
	// replaced (by a FIFO, say) since Lstat.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, Refuse("URI file %q: %v", config.Clip(path), unwrapPathError(err))
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil || !fst.Mode().IsRegular() || !os.SameFile(st, fst) {
		return nil, Refuse("URI file %q is not a regular file", config.Clip(path))
	}
	var uris []string
	sc := bufio.NewScanner(io.LimitReader(f, MaxURIFile))
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
		return nil, Refuse("URI file %q: line %d: %v", config.Clip(path), line+1, err)
	}
	return uris, nil
}

// within reports whether path is dir or below it (lexically).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s", pe.Err)
	}
	return err
}
