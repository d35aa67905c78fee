package charts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-bench/strata/internal/atomicfile"
	"github.com/strata-bench/strata/internal/exitcode"
)

// File is one chart as it is written: its file name and its bytes.
type File struct {
	Name string
	Data []byte
}

// Write writes the charts into the folder out (the --charts flag) and
// returns their paths under out. out must lie outside every result folder
// given: a result folder holds only what the spec lists. Both are compared
// as real paths (every symbolic link resolved), so a link that points into
// a result folder is inside it.
//
// No chart is written through a symbolic link. A link (or anything but a
// regular file) where a chart goes is refused, naming it, before any chart
// is written: following it would overwrite whatever it points to, and
// replacing it would delete a link someone made, so the operator decides.
// Each chart is written aside and renamed into place, and a rename replaces
// a link made in the meantime instead of following it.
func Write(out string, results []string, files []File) ([]string, error) {
	real, err := Outside("--charts", out, results)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		p := filepath.Join(real, f.Name)
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("chart %s: %w", filepath.Join(out, f.Name), err)
		case st.Mode()&fs.ModeSymlink != 0:
			return nil, exitcode.Usagef("--charts: %s is a symbolic link; a chart is never written through one (remove it, or choose another folder)", filepath.Join(out, f.Name))
		case !st.Mode().IsRegular():
			return nil, exitcode.Usagef("--charts: %s is not a regular file; a chart would replace it (remove it, or choose another folder)", filepath.Join(out, f.Name))
		}
	}
	if err := os.MkdirAll(real, 0o755); err != nil {
		return nil, fmt.Errorf("--charts %s: %w", out, err)
	}
	var written []string
	for _, f := range files {
		if err := atomicfile.WriteFile(filepath.Join(real, f.Name), f.Data, 0o644); err != nil {
			return written, err
		}
		written = append(written, filepath.Join(out, f.Name))
	}
	return written, nil
}

// Outside returns the real path of out (the folder the flag names, which
// need not exist yet) once it is known to lie outside every result folder
// given, which holds only what the spec lists; a usage error otherwise.
// Both are compared as real paths, so a link into a result folder is
// inside it.
func Outside(flag, out string, results []string) (string, error) {
	real, err := realPath(out)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, out, err)
	}
	for _, dir := range results {
		realDir, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return "", fmt.Errorf("result folder %s: %w", dir, err)
		}
		if within(realDir, real) {
			return "", exitcode.Usagef("%s %s is inside the result folder %s (%s); a result folder holds only what the spec lists", flag, out, dir, real)
		}
	}
	return real, nil
}

// realPath is p with every symbolic link resolved, for a p that need not
// exist yet: its deepest existing ancestor resolved, the rest (which does
// not exist, so holds no link) as written.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for dir := abs; ; dir = filepath.Dir(dir) {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || dir == filepath.Dir(dir) {
			return "", err
		}
		if _, lerr := os.Lstat(dir); lerr == nil {
			return "", fmt.Errorf("%s is a symbolic link to nothing", dir)
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
	}
}

// within reports whether p is dir or lies below it (both clean and
// absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
