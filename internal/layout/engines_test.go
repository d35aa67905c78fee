package layout_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// dialectPath is the package that holds every engine fact.
const dialectPath = "github.com/strata-bench/strata/internal/dialect"

// engineNames are internal/dialect's constants that name an engine (of
// type Engine, or Timers: an engine's timer table) and the values of its
// Engine constants ("vllm"), read from its source.
func engineNames(t *testing.T, dir string) (consts map[string]bool, values map[string]bool) {
	t.Helper()
	consts, values = map[string]bool{}, map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, ok := vs.Type.(*ast.Ident)
				if !ok || (typ.Name != "Engine" && typ.Name != "Timers") {
					continue
				}
				for i, name := range vs.Names {
					consts[name.Name] = true
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && typ.Name == "Engine" {
						if v, err := strconv.Unquote(lit.Value); err == nil {
							values[v] = true
						}
					}
				}
			}
		}
	}
	return consts, values
}

// engineSwitches lists, in one file, every case label and every == or !=
// operand that is one of dialect's engine constants or an engine's name
// as a string: the places that decide by engine.
func engineSwitches(fset *token.FileSet, f *ast.File, consts, values map[string]bool) []string {
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == dialectPath {
			local = "dialect"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	var out []string
	check := func(e ast.Expr) {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && local != "" && id.Name == local && consts[x.Sel.Name] {
				out = append(out, fset.Position(x.Pos()).String()+": "+local+"."+x.Sel.Name)
			}
		case *ast.BasicLit:
			if v, err := strconv.Unquote(x.Value); x.Kind == token.STRING && err == nil && values[v] {
				out = append(out, fset.Position(x.Pos()).String()+": "+x.Value)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CaseClause:
			for _, e := range n.List {
				check(e)
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				check(n.X)
				check(n.Y)
			}
		}
		return true
	})
	return out
}

// TestNoEngineSwitchOutsideDialect: internal/dialect is the only engine
// table. No other package decides by engine (a case or a comparison on
// dialect.VLLM, dialect.TimersVLLM or "vllm"); each asks the dialect for
// the fact instead. The simulator, which imitates the engines, and tests,
// which name the engines they drive, are exempt.
func TestNoEngineSwitchOutsideDialect(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	consts, values := engineNames(t, filepath.Join(root, "internal", "dialect"))
	for _, want := range []string{"LlamaCpp", "VLLM", "Unknown", "TimersVLLM"} {
		if !consts[want] {
			t.Fatalf("internal/dialect declares no engine constant %s: the scan reads the wrong source", want)
		}
	}
	if !values["llama.cpp"] || !values["vllm"] {
		t.Fatalf("engine values %v lack llama.cpp or vllm", values)
	}
	exempt := map[string]bool{"internal/dialect": true, "internal/simengine": true}
	fset := token.NewFileSet()
	for _, f := range shippedFiles(t, fset, root, exempt) {
		for _, hit := range engineSwitches(fset, f.file, consts, values) {
			t.Errorf("%s decides by engine: ask internal/dialect for the fact instead", hit)
		}
	}
}

// TestEngineSwitchesAreFound: the scan sees a switch, a comparison either
// way round, a renamed import and an engine's name as a string, and passes
// a switch on something else.
func TestEngineSwitchesAreFound(t *testing.T) {
	t.Parallel()
	consts := map[string]bool{"VLLM": true, "Unknown": true, "TimersVLLM": true}
	values := map[string]bool{"vllm": true, "llama.cpp": true}
	for _, c := range []struct {
		name, src string
		hits      int
	}{
		{"case", `package p
import "github.com/strata-bench/strata/internal/dialect"
func f(d dialect.Dialect) int { switch d.Engine { case dialect.VLLM, dialect.Unknown: return 1 }; return 0 }`, 2},
		{"comparisons", `package p
import "github.com/strata-bench/strata/internal/dialect"
func f(d dialect.Dialect) bool { return d.Engine == dialect.VLLM || dialect.Unknown != d.Engine || d.Timers() == (dialect.TimersVLLM) }`, 3},
		{"a renamed import", `package p
import dl "github.com/strata-bench/strata/internal/dialect"
func f(d dl.Dialect) bool { return d.Engine != dl.VLLM }`, 1},
		{"a name as a string", `package p
func f(engine string) bool { switch engine { case "llama.cpp": return true }; return engine == "vllm" }`, 2},
		{"something else", `package p
import "github.com/strata-bench/strata/internal/dialect"
func f(d dialect.Dialect, s string) bool { _ = dialect.VLLM; switch s { case "usage": return d.Known() }; return s == "metrics" }`, 0},
		{"another package's VLLM", `package p
import dialect "example.com/other"
func f(e string) bool { return e == dialect.VLLM }`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fset, f := parseSnippet(t, c.src)
			if got := engineSwitches(fset, f, consts, values); len(got) != c.hits {
				t.Errorf("found %q, want %d", got, c.hits)
			}
		})
	}
}
