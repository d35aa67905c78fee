package layout_test

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/strata-bench/strata/"

// layers are strata's floors, bottom first. A package imports only
// packages on its own floor or below (test files are free); the
// foundation imports no strata package at all; nothing but tests imports
// test support. Every package of the tree is
// on exactly one floor, so a new package has to be placed here.
var layers = []struct {
	name     string
	packages []string
}{
	{"foundation: no strata import", []string{
		"internal/protocol", "internal/strictjson", "internal/jsonfmt", "internal/atomicfile",
		"internal/inputfile", "internal/abandon", "internal/clock", "internal/sse", "internal/escape", "internal/exitcode",
		"internal/version", "internal/redact", "internal/redact/vocabgen", "internal/redact/plant", "internal/liveline", "internal/localproc", "internal/captures",
	}},
	{"the result format: results.json's types", []string{
		"schema", "internal/contract",
	}},
	{"the run record and the bundle it ran", []string{
		"internal/fixtures", "internal/record",
	}},
	{"the protocol's data, the engines and the readings", []string{
		"bench/prompts", "internal/dialect", "internal/humanize", "internal/gguf", "internal/tokenizer", "internal/chattemplate",
		"internal/install", "internal/probe", "internal/power", "internal/power/nvml", "internal/modelfiles", "internal/corpus",
	}},
	{"the run's record kept on disk", []string{
		"internal/journal",
	}},
	{"the rules over records, and the mapping of a record to the result", []string{
		"internal/derive", "internal/measure", "internal/score", "internal/engineconfig", "internal/result",
	}},
	{"what gathers, reads and writes result folders", []string{
		"internal/provenance", "internal/folder", "internal/validate", "internal/report",
		"internal/manifest", "internal/charts", "internal/compare", "internal/site", "internal/submit", "internal/pilot",
	}},
	{"the run: engine, client, runner", []string{
		"internal/engine", "internal/client", "internal/runner", "internal/preflight", "internal/simengine",
	}},
	{"the use case and the injected state", []string{
		"internal/procstate", "internal/benchrun",
	}},
	{"the commands", []string{
		"internal/cli", "cmd/strata",
	}},
	{"programs beside the tool (benchmarks, generators)", []string{
		"bench/hashbench", "bench/ssebench", "internal/redact/genvocab",
	}},
}

// apart are packages that must not reach another even through others,
// though the floors would allow it.
var apart = []struct{ from, to, why string }{
	{"internal/benchrun", "internal/folder", "the run use case does not write result folders: the command layer gives it folder.Finish, for `bench run` and `bench recover` alike"},
}

// support is test support: tests may import it, nothing else does.
var support = []string{
	"internal/sharedpath", "internal/resulttest", "internal/resulttest/submissions", "internal/realengine", "internal/e2e", "internal/layout", "internal/probe/probetest", "internal/releasetest",
}

// floors maps each package to its floor (support: -1).
func floors() map[string]int {
	f := map[string]int{}
	for i, l := range layers {
		for _, p := range l.packages {
			f[p] = i
		}
	}
	for _, p := range support {
		f[p] = -1
	}
	return f
}

// forbidden lists the imports that break the layers in a graph of
// package → its strata imports (non-test files).
func forbidden(graph map[string][]string) []string {
	floor := floors()
	var bad []string
	for pkg, imports := range graph {
		from, ok := floor[pkg]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is on no floor: add it to layers in internal/layout/imports_test.go", pkg))
			continue
		}
		for _, imp := range imports {
			to, ok := floor[imp]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%s imports %s, which is on no floor", pkg, imp))
			case from == -1:
				// Test support may import anything.
			case to == -1:
				bad = append(bad, fmt.Sprintf("%s imports test support %s", pkg, imp))
			case from == 0:
				bad = append(bad, fmt.Sprintf("%s is foundation and imports %s (%s)", pkg, imp, layers[to].name))
			case to > from:
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s from a floor above (%s)", pkg, layers[from].name, imp, layers[to].name))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// reaches says whether from imports to, directly or through others, in a
// graph of package → its strata imports.
func reaches(graph map[string][]string, from, to string) bool {
	seen := map[string]bool{}
	next := []string{from}
	for len(next) > 0 {
		p := next[len(next)-1]
		next = next[:len(next)-1]
		for _, imp := range graph[p] {
			if imp == to {
				return true
			}
			if !seen[imp] {
				seen[imp] = true
				next = append(next, imp)
			}
		}
	}
	return false
}

// importGraph reads every package of the tree: its strata imports, from
// the non-test files that build on this platform.
func importGraph(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			if _, none := errors.AsType[*build.NoGoError](err); none {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, _ := filepath.Rel(root, path)
		var imports []string
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module) {
				imports = append(imports, strings.TrimPrefix(imp, module))
			}
		}
		graph[filepath.ToSlash(rel)] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

// TestImportsFollowTheLayers: no package imports from a floor above its
// own, and every package is on a floor.
func TestImportsFollowTheLayers(t *testing.T) {
	t.Parallel()
	graph := importGraph(t, filepath.Join("..", ".."))
	if len(graph) < 40 {
		t.Fatalf("read only %d packages; the walk is broken", len(graph))
	}
	for _, b := range forbidden(graph) {
		t.Error(b)
	}
	floor := floors()
	for p := range floor {
		if _, ok := graph[p]; !ok {
			t.Errorf("layers names %s, which is not a package of the tree", p)
		}
	}
	for _, a := range apart {
		if reaches(graph, a.from, a.to) {
			t.Errorf("%s imports %s: %s", a.from, a.to, a.why)
		}
	}
}

// TestForbiddenImportsAreFound: the check itself fails on each kind of
// forbidden import.
func TestForbiddenImportsAreFound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		graph map[string][]string
		want  string
	}{
		{"the result writer imports the runner", map[string][]string{"internal/folder": {"internal/runner"}}, "from a floor above"},
		{"the result mapper imports the writer", map[string][]string{"internal/result": {"internal/folder"}}, "from a floor above"},
		{"the journal imports the client", map[string][]string{"internal/journal": {"internal/client"}}, "from a floor above"},
		{"the journal imports the rules", map[string][]string{"internal/journal": {"internal/derive"}}, "from a floor above"},
		{"a foundation package imports a type", map[string][]string{"internal/sse": {"internal/contract"}}, "is foundation"},
		{"the result format imports the engine table", map[string][]string{"internal/contract": {"internal/dialect"}}, "from a floor above"},
		{"the result format imports the run record", map[string][]string{"internal/contract": {"internal/record"}}, "from a floor above"},
		{"the run record imports the power sampler", map[string][]string{"internal/record": {"internal/power"}}, "from a floor above"},
		{"shipped code imports test support", map[string][]string{"internal/cli": {"internal/resulttest"}}, "test support"},
		{"an unplaced package", map[string][]string{"internal/newthing": nil}, "on no floor"},
		{"an import of an unplaced package", map[string][]string{"internal/cli": {"internal/newthing"}}, "on no floor"},
	} {
		got := forbidden(c.graph)
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%s: %v, want one finding with %q", c.name, got, c.want)
		}
	}
	allowed := map[string][]string{
		"internal/cli":        {"internal/benchrun", "internal/protocol"},
		"internal/folder":     {"internal/report", "internal/result"},
		"internal/result":     {"internal/derive", "internal/record"},
		"internal/resulttest": {"internal/runner"},
		"bench/ssebench":      {"internal/client"},
	}
	if got := forbidden(allowed); len(got) != 0 {
		t.Errorf("allowed imports are refused: %v", got)
	}
	through := map[string][]string{"internal/benchrun": {"internal/journal"}, "internal/journal": {"internal/folder"}}
	if !reaches(through, "internal/benchrun", "internal/folder") {
		t.Error("an import through another package is not found")
	}
	if reaches(allowed, "internal/cli", "internal/folder") {
		t.Error("an import that is not there is found")
	}
}
