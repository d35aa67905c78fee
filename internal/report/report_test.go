package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

func read(t *testing.T, dir string) *contract.Results {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, contract.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var r contract.Results
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestCommittedReadmesAreTheirResults: each committed folder's README.md is
// exactly what its results.json gives.
func TestCommittedReadmesAreTheirResults(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"baseline", "candidate", "partial", "nonconforming", "aborted"} {
		dir := filepath.Join("..", "..", "testdata", "results", name)
		if d := Diff(dir, read(t, dir)); len(d) != 0 {
			t.Errorf("%s: %v", name, d)
		}
	}
}

// TestReadmeFollowsTheNumbers: a README that no longer matches results.json
// (a number changed in one of them) is named line by line, and what the
// report says comes from results.json.
func TestReadmeFollowsTheNumbers(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "results", "partial")
	r := read(t, dir)
	var b strings.Builder
	if err := README(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"partial", "required work was skipped: 7 of the 22 required requests"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	r.Quality.Passed++
	d := Diff(dir, r)
	if len(d) == 0 || !strings.Contains(d[0], "differs from the numbers in results.json") {
		t.Errorf("a changed pass count is not named: %v", d)
	}
}

// TestNullsHaveNoUnit: a null duration or summary is "not measured", never
// "not measured s".
func TestNullsHaveNoUnit(t *testing.T) {
	t.Parallel()
	r := read(t, filepath.Join("..", "..", "testdata", "results", "baseline"))
	r.Run.RequiredDurationS, r.Run.OptionalDurationS = nil, nil
	r.Run.OptionalConcurrency = true
	r.Summaries = nil
	r.Hardware.GPUs[0].PowerLimitW = nil
	var b strings.Builder
	if err := README(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"not measured s", "not measured tok/s", "(n=0) s", "(n=0) tok/s", "not measured W"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("the report writes %q", bad)
		}
	}
	if !strings.Contains(b.String(), "| Required stages | not measured |") {
		t.Errorf("the required stages' null duration is not written as not measured")
	}
}

// TestPreflightLine: a preflight that saw the workload change is the bold
// line; a count alone of the tool cases, or counts off the chat path, are
// said to show nothing of the workload; a fixture that could not be
// checked keeps the bold line, in the terminal's words: not checked, not
// differ; a template the engine does not reveal is said so.
func TestPreflightLine(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	agree := contract.PreflightFixture{RequestID: "warmup", Agree: true, EngineTokens: n(30), FrozenTokens: 30}
	toolCount := contract.PreflightFixture{RequestID: "sanity-T1", EngineTokens: n(164), FrozenTokens: 174, RenderingUnchecked: true}
	plainCount := contract.PreflightFixture{RequestID: "sanity-R1", EngineTokens: n(4000), FrozenTokens: 4085, RenderingUnchecked: true}
	failed := contract.PreflightFixture{RequestID: "sanity-T2", Problem: "HTTP 500", FrozenTokens: 184}
	for _, c := range []struct {
		name     string
		fixtures []contract.PreflightFixture
		offChat  bool
		want     string
	}{
		{"a tool count alone", []contract.PreflightFixture{agree, toolCount}, false,
			"1 of 2 fixtures count otherwise (sanity-T1), tool cases only, which this engine hands its template in its own shape of the tools, so they show nothing of the workload"},
		{"off the chat path", []contract.PreflightFixture{agree, plainCount}, true,
			"(the engine's own tokenizer, off its chat path): 1 of 2 fixtures count otherwise (sanity-R1)"},
		{"a count without tools", []contract.PreflightFixture{agree, toolCount, plainCount}, false,
			"**2 of 3 fixtures differ** (sanity-T1, sanity-R1)"},
		{"a fixture not checked", []contract.PreflightFixture{agree, toolCount, failed}, false,
			"**1 of 3 fixtures differ** (sanity-T1); **1 of 3 fixtures not checked** (sanity-T2): HTTP 500; the engine serves the same template as the bundle"},
		{"nothing checked, the template not revealed", []contract.PreflightFixture{failed}, false,
			"**1 of 1 fixtures not checked** (sanity-T2): HTTP 500; the engine serves a template it does not reveal"},
	} {
		pf := &contract.Preflight{Verifiable: true, TemplateAgrees: len(c.fixtures) > 1, OffChatPath: c.offChat, Fixtures: c.fixtures}
		for _, f := range c.fixtures {
			if f.Agree {
				pf.Agree++
			} else {
				pf.Differ++
			}
		}
		var b strings.Builder
		writeEngineSection(func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }, contract.Extensions{EngineDialect: &contract.EngineDialect{}, Preflight: pf})
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s:\n%s\nwant %q", c.name, b.String(), c.want)
		}
	}
}

// TestReadmeReturnsTheWriteError: a failed write is the report's error.
func TestReadmeReturnsTheWriteError(t *testing.T) {
	t.Parallel()
	// A pipe whose reader is gone fails every write, as a closed terminal
	// does.
	pr, pw := io.Pipe()
	_ = pr.Close() // a pipe's Close always returns nil
	if err := README(pw, read(t, filepath.Join("..", "..", "testdata", "results", "baseline"))); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("README on a closed pipe: %v, want %v", err, io.ErrClosedPipe)
	}
}

// TestFirstSectionSaysTheEngineAndItsLog: the report's first section says
// who started the engine and what it had answered before the run, and
// names the engine log or says there is none, with why.
func TestFirstSectionSaysTheEngineAndItsLog(t *testing.T) {
	t.Parallel()
	two := int64(2)
	const why = "profile x's engine was already serving when the run began"
	for _, c := range []struct {
		name    string
		engine  *contract.Engine
		log     bool
		want    []string
		notWant string
	}{
		{"started by strata, with its log", &contract.Engine{StartedByRunner: true}, true,
			[]string{"| Engine | freshly loaded: strata started it for this run |", "| Engine log | `engine.log` |"}, "**none**"},
		{"already serving, no log", &contract.Engine{Profile: "x", ServedBeforeRun: &contract.ServedBefore{Answered: &two}}, false,
			[]string{"| Engine | **already serving, not started by strata; not freshly loaded: it had answered 2 requests before this run** |", "| Engine log | **none**: " + why + " |"}, "`engine.log`"},
		{"no engine recorded, no log", nil, false, []string{"| Engine log | **none**: the folder lists no engine_log artifact |"}, "| Engine |"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := read(t, filepath.Join("..", "..", "testdata", "results", "baseline"))
			r.Extensions.Engine = c.engine
			var arts []contract.Artifact
			for _, a := range r.Artifacts {
				if a.Kind != contract.ArtifactEngineLog {
					arts = append(arts, a)
				}
			}
			if c.log {
				arts = append(arts, contract.Artifact{Kind: contract.ArtifactEngineLog, Path: contract.EngineLog, SHA256: strings.Repeat("ab", 32)})
			} else if c.engine != nil {
				r.Missing[contract.PtrEngineLog] = why
			}
			r.Artifacts = arts
			var b strings.Builder
			if err := README(&b, r); err != nil {
				t.Fatal(err)
			}
			first := b.String()[:strings.Index(b.String(), "## ")]
			for _, w := range c.want {
				if !strings.Contains(first, w) {
					t.Errorf("the first section lacks %q:\n%s", w, first)
				}
			}
			if strings.Contains(first, c.notWant) {
				t.Errorf("the first section has %q:\n%s", c.notWant, first)
			}
		})
	}
}
