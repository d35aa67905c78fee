package validate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/humanize"
)

// NotResultFolder is the error for a folder without results.json, which no
// command takes for a result folder. Inside names the result folders right
// below it: a folder of results (bench-results) given where one result
// belongs.
type NotResultFolder struct {
	Dir    string
	Inside []string
}

// namedInside is how many of the result folders inside the error names.
const namedInside = 5

func (e NotResultFolder) Error() string {
	msg := fmt.Sprintf("%s is not a result folder (no %s)", e.Dir, contract.ResultsFile)
	if n := len(e.Inside); n > 0 {
		names := strings.Join(e.Inside[:min(n, namedInside)], ", ")
		if n > namedInside {
			names += fmt.Sprintf(" and %d more", n-namedInside)
		}
		msg += fmt.Sprintf("; it holds %s: %s", humanize.Count(n, "result folder", "result folders"), names)
	}
	return msg
}

// ResultFolder checks that dir holds results.json, the file that makes a
// folder a result folder; a folder without one is a NotResultFolder
// naming it as name (the way the user wrote it). Whether the file can be
// read, and what it holds, is the validator's.
func ResultFolder(name, dir string) error {
	_, err := os.Lstat(filepath.Join(dir, contract.ResultsFile))
	if !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	e := NotResultFolder{Dir: name}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return e // what it holds is only a hint
	}
	for _, d := range entries {
		if _, err := os.Lstat(filepath.Join(dir, d.Name(), contract.ResultsFile)); err == nil && d.IsDir() {
			e.Inside = append(e.Inside, d.Name())
		}
	}
	return e
}
