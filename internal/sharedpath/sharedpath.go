// Package sharedpath finds the project's shared reference material (the
// ../shared folder beside the checkout: tokenizer data, test vectors, wire
// captures) for tests. In CI the folder must exist, so a test that needs it
// fails there instead of skipping silently.
package sharedpath

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared folder: $STRATA_SHARED, or the first ../shared found
// walking up from the working directory. When it is missing, the test is
// skipped locally and fails under CI=true.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("STRATA_SHARED"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "..", "shared")
		if st, err := os.Stat(filepath.Join(cand, "spec")); err == nil && st.IsDir() {
			return filepath.Clean(cand)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("the shared folder (../shared beside the checkout, or $STRATA_SHARED) is missing; CI needs it")
	}
	t.Skip("shared folder not found; set STRATA_SHARED")
	return ""
}

// Path joins elements onto Dir.
func Path(t testing.TB, elem ...string) string {
	return filepath.Join(append([]string{Dir(t)}, elem...)...)
}
