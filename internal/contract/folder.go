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
