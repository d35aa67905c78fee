// Package layout_test holds docs/layout.md to the tree: every package
// folder is listed there, and everything listed exists.
package layout_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestLayoutMatchesTheTree(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(data)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(\S+)\s{2,}\S`).FindAllStringSubmatch(section, -1) {
		listed[strings.TrimSuffix(m[1], "/")] = true
	}
	for p := range listed {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("docs/layout.md lists %s, which is not in the tree", p)
		}
	}
	// Every folder with Go files is listed (or is inside a listed
	// folder that is not internal/, such as bench/prompts' data).
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err // a folder not read is a folder not checked
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if goFiles, _ := filepath.Glob(filepath.Join(path, "*.go")); len(goFiles) == 0 {
			return nil
		}
		covered := listed[rel]
		for p := range listed {
			covered = covered || (!strings.HasPrefix(rel, "internal/") && strings.HasPrefix(rel, p+"/"))
			covered = covered || (strings.HasPrefix(rel, "internal/") && strings.Count(rel, "/") > 1 && strings.HasPrefix(rel, p+"/"))
		}
		if !covered {
			t.Errorf("%s is not in docs/layout.md", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
