package contract

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Slug makes a folder-name part.
func Slug(s string) string {
	s = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 40 {
		s = strings.Trim(s[:40], "-")
	}
	return s
}

// FolderName is <UTC-date>-standard-<gpu>-<run-id>.
func FolderName(started time.Time, hw Hardware, runID string) string {
	gpu := "unknown-gpu"
	if len(hw.GPUs) > 0 && Slug(hw.GPUs[0].Name) != "" {
		gpu = Slug(hw.GPUs[0].Name)
		if len(hw.GPUs) > 1 {
			gpu = fmt.Sprintf("%dx-%s", len(hw.GPUs), gpu)
		}
	}
	return started.UTC().Format("2006-01-02") + "-standard-" + gpu + "-" + runID
}

// runIDForm is the form of a run ID: the run's UTC start, then six hex
// digits (runner.NewID).
var runIDForm = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$`)

// folderForm is the form of a result folder's name (FolderName): the date,
// "standard", a slug of the first GPU (with a count), and the run ID.
var folderForm = regexp.MustCompile(`^([0-9]{4}-[0-9]{2}-[0-9]{2})-standard-(?:[0-9]+x-)?[a-z0-9]+(?:-[a-z0-9]+)*-([0-9]{8}T[0-9]{6}Z-[0-9a-f]{6})$`)

// ValidRunID reports whether id has the form of a run ID.
func ValidRunID(id string) bool { return runIDForm.MatchString(id) }

// ValidFolderName reports whether name is the name FolderName gives a run
// with that ID started at that time.
func ValidFolderName(name string, started time.Time, runID string) bool {
	m := folderForm.FindStringSubmatch(name)
	return m != nil && m[1] == started.UTC().Format("2006-01-02") && m[2] == runID && ValidRunID(runID) &&
		strings.HasPrefix(runID, started.UTC().Format("20060102T150405Z"))
}
