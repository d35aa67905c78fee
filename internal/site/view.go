package site

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/strictjson"
)

// Labels of a run in a local view (bench view).
const (
	// LabelLocal is a result folder on this machine that the validator
	// accepts: not in any manifest, never reviewed.
	LabelLocal = "local"
	// LabelInvalid is a result folder on this machine that the validator
	// rejects: its page lists the violations, and it is compared with
	// nothing, as bench compare compares only valid results.
	LabelInvalid = "invalid"
)

// LocalMark is what every page of a local view says of itself, so that
// none of them can pass for the approved site.
const LocalMark = "local — not reviewed"

// Folder is a result folder on this machine as bench view found it.
type Folder struct {
	// Name is the folder as the user named it: the page's title.
	Name string
	// Dir is where its files are read.
	Dir string
	// Results is the validator's reading of results.json; nil when the
	// validator could not read it as the format.
	Results *contract.Results
	// Violations are the validator's, as bench report prints them; none
	// for a valid result.
	Violations []string
}

// View is the site of result folders on this machine (bench view): one
// run page each, with the site's templates and page builders, and a
// compare page for every two valid folders compare.New compares (a pair it
// refuses is listed with its reasons on both run pages). Every page is
// marked LocalMark; the index lists the folders. A folder the validator
// rejects keeps its page, labelled LabelInvalid with its violations as its
// reasons. Of each folder only what Run.Evidence publishes is read.
func View(folders []Folder) (*Site, error) {
	s := &Site{Local: true}
	for _, f := range folders {
		r := &Run{Folder: f.Name, Label: LabelLocal, Results: f.Results}
		if len(f.Violations) > 0 {
			r.Label = LabelInvalid
			r.Reasons = append([]string{fmt.Sprintf("not a valid result: %d violations of the result contract (strata bench report prints them); it is compared with nothing", len(f.Violations))}, f.Violations...)
		} else if f.Results != nil {
			r.Reasons = statusReasons(f.Results)
		}
		files, err := readEvidence(f.Dir, f.Results)
		if err != nil {
			return nil, err
		}
		r.Files = files
		s.Others = append(s.Others, r)
	}
	AssignSlugs(s)
	return s, nil
}

// readEvidence reads the files of a folder that Run.Evidence may publish:
// results.json, README.md and the artifacts results.json lists under a
// plain name. Anything but a regular file (a link, a folder) is left out,
// so Evidence says the artifact is not in the folder; so is a file larger
// than contract.MaxArtifactBytes, which the validator refuses to read too
// (the folder's violations say so).
func readEvidence(dir string, r *contract.Results) (map[string][]byte, error) {
	names := []string{contract.ResultsFile, contract.ReadmeFile}
	if r != nil {
		for _, a := range r.Artifacts {
			if plainName(a.Path) {
				names = append(names, a.Path)
			}
		}
	}
	files := map[string][]byte{}
	fsys := os.DirFS(dir)
	for _, name := range names {
		st, err := fs.Lstat(fsys, name)
		if errors.Is(err, fs.ErrNotExist) || err == nil && (!st.Mode().IsRegular() || st.Size() > contract.MaxArtifactBytes) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("result folder %s: %w", dir, err)
		}
		data, err := strictjson.ReadFile(fsys, name, contract.MaxArtifactBytes)
		if errors.Is(err, strictjson.ErrTooLarge) {
			continue // it grew past the limit since the Lstat
		}
		if err != nil {
			return nil, fmt.Errorf("result folder %s: %w", dir, err)
		}
		files[name] = data
	}
	return files, nil
}

// viewIndex is a local view's index: its folders, and every pair of them.
type viewIndex struct {
	Runs  []*Run
	Pairs []*pair
}
