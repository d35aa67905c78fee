package layout_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// rule is a protocol rule and its home: the functions that hold its values
// and say its verdict in its one sentence. Every other package calls them.
type rule struct {
	name string
	// home are the functions ("internal/protocol.LengthRule", a method
	// as "internal/cli.simulateOptions.check") that may read the rule's
	// values and state its words.
	home []string
	// values are the names (in the package their home names first) that
	// hold the rule's thresholds or predicate.
	values []string
	// words match the rule's sentence, or its threshold as text (nil:
	// the rule has no sentence).
	words *regexp.Regexp
	// readers read a value without applying the rule (recording it in a
	// file, or another rule that shares a predicate), each with why.
	readers map[string]string
	// verdicts are the names of the rule's outcomes: only the home
	// returns or assigns one (others compare with them).
	verdicts []string
	// deviation: a prompt's deviation from its target (a difference
	// scaled by 100) is computed only at home.
	deviation bool
}

// rules are the protocol's rules with a home. Changing a threshold or the
// words of a rule touches its home and nothing else.
var rules = []rule{{
	name:   "prompt length (the 2 % rule)",
	home:   []string{"internal/protocol.LengthRule", "internal/protocol.LengthTolerance"},
	values: []string{"internal/protocol.LengthTolerancePercent"},
	// "2 %", "2%" and "2 %%" state the threshold; "not within" is the
	// rule's sentence.
	words:     regexp.MustCompile(`(^|[^\w.])2 ?%|not within`),
	readers:   map[string]string{"internal/corpus.builder.buildInfo": "records the tolerance in build.json"},
	deviation: true,
}, {
	name:   "cache reuse",
	home:   []string{"internal/measure.CacheReuse"},
	values: []string{"internal/protocol.CacheBoundaryAllowance"},
	words:  regexp.MustCompile(`unexpected cache reuse`),
	readers: map[string]string{
		"internal/report.writePromptCache": "the folder's README describes the allowance beside the cache table",
	},
}, {
	name:   "decode-count agreement",
	home:   []string{"internal/measure.DecodeCount"},
	values: []string{"internal/protocol.DecodeCountSlack", "internal/protocol.DecodeCountSlackPerSecond"},
	words:  regexp.MustCompile(`x decode_s \+`),
}, {
	name:   "remote servers (loopback)",
	home:   []string{"internal/protocol.Remote"},
	values: []string{"internal/protocol.IsLoopback"},
	words:  regexp.MustCompile(`not on loopback|loopback measurement`),
	readers: map[string]string{
		"internal/benchrun.target.engineView": "looks for the engine's process on this machine only",
		"internal/cli.simulateOptions.check":  "the simulator itself listens on loopback only",
		"internal/cli.previewAddr":            "the site's preview listens on loopback only",
	},
}, {
	name:   "track names",
	home:   []string{"internal/protocol.ValidTrack"},
	values: []string{"internal/protocol.TrackDefault", "internal/protocol.TrackCustom"},
	words:  regexp.MustCompile(`"default" or "custom"|"custom" or "default"`),
	readers: map[string]string{
		"internal/benchrun.Declared.merge": "--track defaults to custom",
		"internal/cli.newRun":              "--track defaults to custom, and its help names the tracks",
	},
}, {
	name:     "requests the engine answered that strata did not send",
	home:     []string{"internal/derive.Foreign"},
	words:    regexp.MustCompile(`did not send while the run went`),
	verdicts: []string{"internal/contract.ForeignRequests"},
}, {
	name:     "status precedence (nonconforming > partial > complete)",
	home:     []string{"internal/measure.Status"},
	verdicts: []string{"internal/contract.StatusNonconforming", "internal/contract.StatusPartial", "internal/contract.StatusComplete"},
}}

// ruleFile is one parsed Go file and the package folder it is in.
type ruleFile struct {
	pkg  string // "internal/measure"
	file *ast.File
}

// imported maps the local names of a file's strata imports to their
// package folders ("protocol" → "internal/protocol").
func (f ruleFile) imported() map[string]string {
	out := map[string]string{}
	for _, imp := range f.file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !strings.HasPrefix(p, module) {
			continue
		}
		local := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		out[local] = strings.TrimPrefix(p, module)
	}
	return out
}

// funcName is a function's name as a rule names it: the package folder,
// the receiver's type for a method, and the name.
func funcName(pkg string, fn *ast.FuncDecl) string {
	name := pkg + "."
	if fn.Recv != nil && len(fn.Recv.List) > 0 {
		typ := fn.Recv.List[0].Type
		if star, ok := typ.(*ast.StarExpr); ok {
			typ = star.X
		}
		if id, ok := typ.(*ast.Ident); ok {
			name += id.Name + "."
		}
	}
	return name + fn.Name.Name
}

// ruleHits lists, in one file, every place outside the rule's home that
// reads one of its values, states its words in a string, or computes a
// prompt's deviation. A top-level declaration is its own place ("pkg.name").
func ruleHits(fset *token.FileSet, f ruleFile, r rule) []string {
	at := map[string]bool{}
	for _, h := range r.home {
		at[h] = true
	}
	for reader := range r.readers {
		at[reader+" (reader)"] = true
	}
	values, verdicts := map[string]bool{}, map[string]bool{}
	for _, v := range r.values {
		values[v] = true
	}
	for _, v := range r.verdicts {
		verdicts[v] = true
	}
	imports := f.imported()
	declared := map[*ast.Ident]bool{}
	var out []string
	hit := func(where string, n ast.Node, what string) {
		out = append(out, fset.Position(n.Pos()).String()+" ("+where+"): "+what)
	}
	// decided reports a value that is one of the rule's verdicts.
	decided := func(e ast.Expr) bool {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && imports[x.Name] != "" && verdicts[imports[x.Name]+"."+sel.Sel.Name]
	}
	var visit func(where string, root ast.Node)
	diffs := map[string]bool{} // names assigned a difference, per place
	visit = func(where string, root ast.Node) {
		ast.Inspect(root, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				for _, id := range x.Names {
					declared[id] = true
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(x.Value); x.Kind == token.STRING && err == nil && r.words != nil && r.words.MatchString(s) && !at[where] {
					hit(where, x, "states the rule's words: "+x.Value)
				}
			case *ast.SelectorExpr:
				// Only X can be a name of this package; Sel is a field,
				// a method or another package's name.
				id, ok := x.X.(*ast.Ident)
				if !ok {
					visit(where, x.X)
					return false
				}
				if imports[id.Name] != "" && values[imports[id.Name]+"."+x.Sel.Name] && !at[where] && !at[where+" (reader)"] {
					hit(where, x, "reads "+id.Name+"."+x.Sel.Name)
				}
				return false
			case *ast.Ident:
				if values[f.pkg+"."+x.Name] && !declared[x] && !at[where] && !at[where+" (reader)"] {
					hit(where, x, "reads "+x.Name)
				}
			case *ast.ReturnStmt:
				for _, e := range x.Results {
					if decided(e) && !at[where] {
						hit(where, e, "returns the rule's verdict")
					}
				}
			case *ast.KeyValueExpr:
				if decided(x.Value) && !at[where] {
					hit(where, x.Value, "sets the rule's verdict")
				}
			case *ast.AssignStmt:
				for _, e := range x.Rhs {
					if decided(e) && !at[where] {
						hit(where, e, "sets the rule's verdict")
					}
				}
				for i, lhs := range x.Lhs {
					if id, ok := lhs.(*ast.Ident); ok && len(x.Rhs) == len(x.Lhs) {
						if d, ok := ast.Unparen(x.Rhs[i]).(*ast.BinaryExpr); ok && d.Op == token.SUB {
							diffs[id.Name] = true
						}
					}
				}
			case *ast.BinaryExpr:
				if r.deviation && !at[where] && deviation(x, diffs) {
					hit(where, x, "computes a deviation (a difference scaled by 100)")
				}
			}
			return true
		})
	}
	for _, d := range f.file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			clear(diffs)
			declared[d.Name] = true
			visit(funcName(f.pkg, d), d)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				where := f.pkg + "."
				switch s := s.(type) {
				case *ast.ValueSpec:
					where += s.Names[0].Name
				case *ast.TypeSpec:
					where += s.Name.Name
				}
				visit(where, s)
			}
		}
	}
	return out
}

// deviation is a product with 100 whose other side holds a difference:
// (tokens-target)*100, or d*100 where d was assigned one (diffs).
func deviation(b *ast.BinaryExpr, diffs map[string]bool) bool {
	hundred := func(e ast.Expr) bool {
		lit, ok := ast.Unparen(e).(*ast.BasicLit)
		return ok && (lit.Value == "100" || lit.Value == "100.0")
	}
	difference := func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				found = found || n.Op == token.SUB
			case *ast.Ident:
				found = found || diffs[n.Name]
			}
			return !found
		})
		return found
	}
	return b.Op == token.MUL && ((hundred(b.X) && difference(b.Y)) || (hundred(b.Y) && difference(b.X)))
}

// shippedFiles parses every Go file of the tree but tests, testdata and
// the exempt package folders, and fails unless it found the tree.
func shippedFiles(t *testing.T, fset *token.FileSet, root string, exempt map[string]bool) []ruleFile {
	t.Helper()
	var files []ruleFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || exempt[rel]) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, ruleFile{pkg: filepath.ToSlash(filepath.Dir(rel)), file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("parsed %d Go files: the walk missed the tree", len(files))
	}
	return files
}

// TestEachRuleHasOneHome: each protocol rule is applied, and its
// threshold and sentence stated, in its home only; every other package
// calls the home. The 2 % rule's threshold is in no string elsewhere and
// no other file computes a prompt's deviation. Tests, which assert the
// words, and the simulator, which imitates engines, are exempt.
func TestEachRuleHasOneHome(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := shippedFiles(t, fset, root, map[string]bool{"internal/simengine": true})
	homes := map[string]bool{}
	for _, f := range files {
		for _, d := range f.file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				homes[funcName(f.pkg, fn)] = true
			}
		}
	}
	for _, r := range rules {
		for _, h := range r.home {
			if !homes[h] {
				t.Errorf("%s: its home %s is not in the tree", r.name, h)
			}
		}
		for reader := range r.readers {
			if !homes[reader] {
				t.Errorf("%s: its reader %s is not in the tree: drop it from rules", r.name, reader)
			}
		}
		for _, f := range files {
			for _, h := range ruleHits(fset, f, r) {
				t.Errorf("%s: %s; call its home (%s) instead", r.name, h, strings.Join(r.home, ", "))
			}
		}
	}
}

// parseSnippet parses one Go file's source for a scan's own test.
func parseSnippet(t *testing.T, src string) (*token.FileSet, *ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fset, f
}

// TestRuleHitsAreFound: the scan sees the threshold in a string, the
// rule's sentence, a value read through a renamed import or inside its
// own package, and a deviation either way round or through a name, and
// passes the home, a reader, a percentage of something else, a rounding
// and a duration.
func TestRuleHitsAreFound(t *testing.T) {
	t.Parallel()
	length := rules[0]
	for _, c := range []struct {
		name, pkg, src string
		hits           int
	}{
		{"the threshold in words", "internal/pilot", `package p
import "fmt"
const help = "lengths against the 2 % rule"
func f(t int) string { return fmt.Sprintf("within 2 %% of %d", t) + fmt.Sprint("2%") }`, 3},
		{"the sentence", "internal/corpus", `package p
func f() string { return "is not within the tolerance" }`, 1},
		{"a value through a renamed import", "internal/preflight", `package p
import proto "github.com/strata-bench/strata/internal/protocol"
func f(n, t int) bool { return n <= proto.LengthTolerancePercent*t }`, 1},
		{"a value in its own package, outside the home", "internal/protocol", `package protocol
const LengthTolerancePercent = 2
func Other(n int) int { return n * LengthTolerancePercent }
func LengthRule(n, t int) bool { d := n - t; return d*100 <= LengthTolerancePercent*t }`, 1},
		{"a deviation either way round", "internal/pilot", `package p
func f(n, t int64) (float64, float64) { return float64(n-t) * 100 / float64(t), 100.0 * float64(t-n) }
func g(n, t int) bool { d := n - t; return d*100 <= 2*t }`, 3},
		{"a reader, a percentage and a rounding", "internal/corpus", `package p
import (
	"math"
	"time"
	"github.com/strata-bench/strata/internal/protocol"
)
type info struct{ Tolerance int }
type builder struct{}
func (*builder) buildInfo() info { return info{Tolerance: protocol.LengthTolerancePercent} }
func f(done, total int, x float64, since time.Duration) (float64, float64, bool) {
	return 100 * float64(done) / float64(total), math.Round(x*100) / 100, since >= 100*time.Millisecond
}`, 0},
		{"another package's value", "internal/pilot", `package p
import protocol "example.com/other"
func f() int { return protocol.LengthTolerancePercent }`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fset, f := parseSnippet(t, c.src)
			if got := ruleHits(fset, ruleFile{pkg: c.pkg, file: f}, length); len(got) != c.hits {
				t.Errorf("found %q, want %d", got, c.hits)
			}
		})
	}
}

// TestVerdictHitsAreFound: the scan sees a run status returned, assigned
// or set in a literal outside its home, and passes a comparison with one.
func TestVerdictHitsAreFound(t *testing.T) {
	t.Parallel()
	status := rules[len(rules)-1]
	fset, f := parseSnippet(t, `package p
import c "github.com/strata-bench/strata/internal/contract"
type run struct{ Status string }
func decide(bad bool) string { if bad { return c.StatusNonconforming }; return (c.StatusComplete) }
func set(r *run) run { r.Status = c.StatusPartial; return run{Status: c.StatusPartial} }
func read(r run) bool { return r.Status == c.StatusComplete }`)
	if got := ruleHits(fset, ruleFile{pkg: "internal/derive", file: f}, status); len(got) != 4 {
		t.Errorf("found %q, want 4", got)
	}
}
