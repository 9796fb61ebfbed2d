package table

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// registerTasks adds the pythontasks.pyc functions whose semantics the spec
// gives in full (3.6.5.2) and that need no table layout of MS-FSWADF.
func registerTasks(r *Registry) {
	r.RegisterTask("_local_copy_func", localCopy)
	r.RegisterTask("_local_touch_func", localTouch)
	r.RegisterTask("wamakefileutils.remove_files_in_filter", func(a []string) error { return removeFiltered(a, true) })
	r.RegisterTask("wamakefileutils.remove_files_not_in_filter", func(a []string) error { return removeFiltered(a, false) })
	r.RegisterTask("wamakefileutils.dir_creator", dirCreator)
	r.RegisterTask("wamakefileutils.remove_directories", removeDirectories)
	r.RegisterTask("wamakefileutils.clean_view_build_dir", cleanViewBuildDir)
	r.RegisterTask("spmakefileutils.file_finder", fileFinder)
	r.RegisterTask("wamakefileutils.file_finder", fileFinder)
	r.RegisterTask("wamakefileutils.remove_coll_directory", removeCollDirectory)
	r.RegisterTask("wamakefileutils.remove_coll_files", removeCollFiles)
}

func needArgs(name string, a []string, lo, hi int) error {
	if len(a) < lo || (hi >= 0 && len(a) > hi) {
		return fmt.Errorf("table: %s: wrong number of parameters (%d)", name, len(a))
	}
	return nil
}

// permissions applies a "permissions" parameter: "None", or a base-10 mode
// (as Python's int of the mode, e.g. 420 for 0644).
func permissions(name, p string) error {
	if p == "None" {
		return nil
	}
	m, err := strconv.ParseUint(p, 10, 32)
	if err != nil || m > 0o7777 {
		return fmt.Errorf("table: bad permissions %q", p)
	}
	return os.Chmod(name, os.FileMode(m))
}

func localCopy(a []string) error {
	if err := needArgs("_local_copy_func", a, 3, 3); err != nil {
		return err
	}
	src, err := os.Open(a[0])
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	defer src.Close()
	err = writeAtomic(a[1], func(w *bufio.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
	if err != nil {
		return err
	}
	return permissions(a[1], a[2])
}

func localTouch(a []string) error {
	if err := needArgs("_local_touch_func", a, 2, 2); err != nil {
		return err
	}
	f, err := os.OpenFile(a[0], os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	f.Close()
	return permissions(a[0], a[1])
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// removeFiltered deletes the files of dir_path whose names begin (in) or
// do not begin (!in) with one of the prefixes (3.6.5.2.7, 3.6.5.2.8).
func removeFiltered(a []string, in bool) error {
	if err := needArgs("remove_files_*_filter", a, 2, -1); err != nil {
		return err
	}
	ents, err := os.ReadDir(a[0])
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if hasAnyPrefix(e.Name(), a[1:]) == in {
			if err := os.Remove(filepath.Join(a[0], e.Name())); err != nil {
				return fmt.Errorf("table: %w", err)
			}
		}
	}
	return nil
}

// dirCreator creates every directory with its parents (the spec gives the
// parameters but no handling; this is what the name says).
func dirCreator(a []string) error {
	if err := needArgs("dir_creator", a, 1, -1); err != nil {
		return err
	}
	for _, d := range a {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("table: %w", err)
		}
	}
	return nil
}

// removeDirectories removes every directory and what it holds.
func removeDirectories(a []string) error {
	if err := needArgs("remove_directories", a, 1, -1); err != nil {
		return err
	}
	for _, d := range a {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("table: %w", err)
		}
	}
	return nil
}

// cleanViewBuildDir (3.6.5.2.4) deletes the files of build-path whose
// names begin with none of the prefixes; a file also present in
// input-path must be read-only there.
func cleanViewBuildDir(a []string) error {
	if err := needArgs("clean_view_build_dir", a, 2, -1); err != nil {
		return err
	}
	ents, err := os.ReadDir(a[0])
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() || hasAnyPrefix(e.Name(), a[2:]) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(a[1], e.Name())); err == nil && fi.Mode().Perm()&0o222 != 0 {
			return fmt.Errorf("table: clean_view_build_dir: %s is in the input directory but not read-only", e.Name())
		}
		if err := os.Remove(filepath.Join(a[0], e.Name())); err != nil {
			return fmt.Errorf("table: %w", err)
		}
	}
	return nil
}

// fileFinder (3.6.5.2.3): for each file name, output-prefix+name+".0" in
// the current directory is the concatenation of the files of linkdump-path
// named [prefix.]collection.timestamp.name with the given collection and
// name, by ascending timestamp (then file name).
func fileFinder(a []string) error {
	if err := needArgs("file_finder", a, 4, -1); err != nil {
		return err
	}
	dir, coll, outPrefix := a[0], a[1], a[2]
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	if len(ents) == 0 {
		return nil
	}
	type target struct {
		ts   int64
		name string
	}
	for _, want := range a[3:] {
		var ts []target
		for _, e := range ents {
			parts := strings.SplitN(e.Name(), ".", 4)
			if len(parts) == 4 && parts[0] != "taken" {
				continue
			}
			if len(parts) == 4 {
				parts = parts[1:]
			} else if len(parts) == 3 {
				// collection.timestamp.name
			} else {
				continue
			}
			if len(parts) != 3 || parts[0] != coll || parts[2] != want {
				continue
			}
			t, err := strconv.ParseInt(parts[1], 10, 64)
			if err != nil {
				continue
			}
			ts = append(ts, target{t, e.Name()})
		}
		sort.Slice(ts, func(i, j int) bool {
			if ts[i].ts != ts[j].ts {
				return ts[i].ts < ts[j].ts
			}
			return ts[i].name < ts[j].name
		})
		err := writeAtomic(outPrefix+want+".0", func(w *bufio.Writer) error {
			for _, t := range ts {
				f, err := os.Open(filepath.Join(dir, t.name))
				if err != nil {
					return err
				}
				_, err = io.Copy(w, f)
				f.Close()
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// removeCollDirectory removes the directory of collection coll under
// dir-path: dir-path/coll and what it holds. The spec gives the parameters
// (dir-path, collectionname; the name alphanumeric) but no handling
// section (MS-FSFDMW 3.6.5.2 lists eight); this is what the name says.
func removeCollDirectory(a []string) error {
	if err := needArgs("remove_coll_directory", a, 2, 2); err != nil {
		return err
	}
	if !alnum(a[1]) {
		return fmt.Errorf("table: remove_coll_directory: collection name %q is not alphanumeric", a[1])
	}
	if err := os.RemoveAll(filepath.Join(a[0], a[1])); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	return nil
}

// removeCollFiles removes the files of collection coll in dir-path: those
// named [prefix.]collection.timestamp.name (the target_name of 2.2.3.11,
// as file_finder reads them) whose collection is coll. Like
// remove_coll_directory it has parameters and no handling section.
func removeCollFiles(a []string) error {
	if err := needArgs("remove_coll_files", a, 2, 2); err != nil {
		return err
	}
	ents, err := os.ReadDir(a[0])
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		parts := strings.SplitN(e.Name(), ".", 4)
		if len(parts) == 4 {
			parts = parts[1:]
		}
		if len(parts) != 3 || parts[0] != a[1] {
			continue
		}
		if _, err := strconv.ParseInt(parts[1], 10, 64); err != nil {
			continue
		}
		if err := os.Remove(filepath.Join(a[0], e.Name())); err != nil {
			return fmt.Errorf("table: %w", err)
		}
	}
	return nil
}

func alnum(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
