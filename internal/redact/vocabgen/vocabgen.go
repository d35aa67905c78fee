// Package vocabgen lists the words of strata's own text: every word of
// every string literal in the non-test Go source under the given folders.
// The redactor treats a machine name that is one of these words ("build",
// "short", "bench") as that word, not as the name, except in a path; the
// list is generated (go generate ./internal/redact) and a test keeps it in
// step with the source.
package vocabgen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var word = regexp.MustCompile(`[A-Za-z0-9_]+`)

// Words returns the sorted, lower-cased words of the string literals in the
// .go files (tests and generated files excluded) below each folder of root.
func Words(root string, folders ...string) ([]string, error) {
	set := map[string]bool{}
	for _, f := range folders {
		err := filepath.WalkDir(filepath.Join(root, f), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || testSupport[filepath.ToSlash(rel(root, p))]) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			return addWords(set, p)
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(set))
	for w := range set {
		out = append(out, w)
	}
	sort.Strings(out)
	return out, nil
}

// addWords adds to set the lower-cased words of the string literals of the
// Go file p, unless it is generated.
func addWords(set map[string]bool, p string) error {
	file, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		return err
	}
	if ast.IsGenerated(file) {
		// Generated data (gitleaks' rules) is not text strata writes: its
		// words would shield names from redaction.
		return nil
	}
	ast.Inspect(file, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		for _, w := range word.FindAllString(s, -1) {
			set[strings.ToLower(w)] = true
		}
		return true
	})
	return nil
}

// Folders are the source folders whose text strata writes.
var Folders = []string{"cmd", "internal", "bench"}

// testSupport are packages that exist for tests: their strings (planted
// names such as "alice") are not strata's words.
var testSupport = map[string]bool{
	"internal/redact/plant": true, "internal/resulttest": true, "internal/realengine": true,
	"bench/ssebench": true, "bench/hashbench": true,
}

func rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}
