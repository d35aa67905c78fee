package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// load reads a committed result folder's results.json.
func load(t *testing.T, name string) *contract.Results {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "results", name, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r contract.Results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func str(s string) *string { return &s }

// TestIdentity: which pairs are the same model and quantization.
func TestIdentity(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		edit       func(base, cand *contract.Results)
		refuse     []string // substrings of the refusal; none: compared
		note       string
		notRefused bool
	}{
		{name: "declared and alike", edit: func(b, c *contract.Results) {}},
		{name: "identical files, no quantization declared", edit: func(b, c *contract.Results) {
			b.Model.Quantization, c.Model.Quantization = nil, nil
		}, note: "byte-identical (1 file, same SHA-256s), so the model and quantization are the same although the quantization is not declared in either run"},
		{name: "identical files at other paths, one declares", edit: func(b, c *contract.Results) {
			c.Model.Quantization = nil
			c.Model.Files[0].Path = "elsewhere/" + c.Model.Files[0].Path
		}, note: "not declared in the candidate"},
		// The files decide: byte-identical files are one
		// quantization whatever each run declared, and both names are shown.
		{name: "identical files, declared quantizations differ", edit: func(b, c *contract.Results) {
			c.Model.Quantization = str("Q4_K_M")
		}, note: "byte-identical (1 file, same SHA-256s), so the model and quantization are the same although the declared quantizations differ (IQ3_XXS vs Q4_K_M)"},
		{name: "unhashed, declared quantizations differ", edit: func(b, c *contract.Results) {
			c.Model.Quantization = str("Q4_K_M")
			c.Model.Files[0].SHA256 = nil
		}, refuse: []string{"quantizations differ (IQ3_XXS vs Q4_K_M)"}},
		{name: "different files, declared quantizations differ", edit: func(b, c *contract.Results) {
			c.Model.Quantization = str("Q4_K_M")
			c.Model.Files[0].SHA256 = str(strings.Repeat("ab", 32))
		}, refuse: []string{"the model files differ", "quantizations differ"}},
		{name: "different files, undeclared", edit: func(b, c *contract.Results) {
			c.Model.Files[0].SHA256 = str(strings.Repeat("ab", 32))
			b.Model.Quantization, c.Model.Quantization = nil, nil
		}, refuse: []string{"the model files differ", "--quantization"}},
		{name: "different files, declared alike", edit: func(b, c *contract.Results) {
			c.Model.Files[0].SHA256 = str(strings.Repeat("ab", 32))
		}, refuse: []string{"the model files differ"}},
		{name: "unhashed, undeclared", edit: func(b, c *contract.Results) {
			b.Model.Files, c.Model.Files = nil, nil
			b.Model.Quantization = nil
		}, refuse: []string{"not hashed in either run", "not declared in the baseline", "--quantization"}},
		{name: "unhashed, declared alike", edit: func(b, c *contract.Results) {
			c.Model.Files[0].SHA256 = nil
		}, refuse: []string{"not hashed in the candidate"}},
		{name: "other model ID", edit: func(b, c *contract.Results) {
			c.Model.ID = str("another-model")
		}, refuse: []string{"model IDs differ"}},
		{name: "other protocol", edit: func(b, c *contract.Results) {
			c.Protocol.ID = "other-protocol"
		}, refuse: []string{"protocol IDs differ"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, cd := load(t, "baseline"), load(t, "candidate")
			c.edit(b, cd)
			cmp, err := New(b, cd)
			if len(c.refuse) > 0 {
				if err == nil {
					t.Fatalf("compared; want a refusal with %q", c.refuse)
				}
				for _, want := range c.refuse {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q lacks %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			var out bytes.Buffer
			if err := cmp.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			if c.note != "" && !strings.Contains(out.String(), "note: "+"the model files are "+c.note) && !strings.Contains(out.String(), c.note) {
				t.Errorf("no note %q in\n%s", c.note, out.String())
			}
			if c.note == "" && strings.Contains(out.String(), "byte-identical") {
				t.Errorf("a declared pair says it relied on the files:\n%s", out.String())
			}
		})
	}
}

func f(v float64) *float64 { return &v }

func TestChange(t *testing.T) {
	t.Parallel()
	sum := func(m string, v float64) *contract.Summary {
		return &contract.Summary{Metric: m, Median: f(v), Min: f(v), Max: f(v), N: 3}
	}
	for _, c := range []struct {
		metric     string
		base, cand float64
		want       Change
	}{
		{contract.MetricDecodeTPS, 40, 82, Change{"+42.0 tok/s", "2.050×", "faster"}},
		{contract.MetricPromptTPS, 2000, 1000, Change{"-1,000 tok/s", "0.500×", "slower"}},
		{contract.MetricTTFT, 0.42, 0.21, Change{"-0.210 s", "0.500×", "lower latency"}},
		{contract.MetricTotal, 10, 12, Change{"+2.00 s", "1.200×", "higher latency"}},
		{contract.MetricTotal, 10, 10, Change{"±0 s", "1.000×", "about the same"}},
		{contract.MetricTTFT, 0.5, 0.5000001, Change{"±0 s", "1.000×", "about the same"}},
		{contract.MetricTTFT, 0, 0.1, Change{"+0.100 s", "–", "higher latency"}},
	} {
		got := ChangeOf(c.metric, sum(c.metric, c.base), sum(c.metric, c.cand))
		if got != c.want {
			t.Errorf("%s %g→%g: %+v, want %+v", c.metric, c.base, c.cand, got, c.want)
		}
	}
	if got := ChangeOf(contract.MetricTTFT, nil, sum(contract.MetricTTFT, 1)); got != (Change{"–", "–", "–"}) {
		t.Errorf("absent baseline: %+v", got)
	}
}

// TestTextReadable: the table has units and directions and no bare zero
// differences or exponent notation; an unknown GPU is named as such.
func TestTextReadable(t *testing.T) {
	t.Parallel()
	b, cd := load(t, "baseline"), load(t, "candidate")
	b.Hardware.GPUs = nil
	cmp, err := New(b, cd)
	if err != nil {
		t.Fatal(err)
	}
	for _, write := range []func(*Comparison, *bytes.Buffer) error{
		func(c *Comparison, w *bytes.Buffer) error { return c.WriteText(w) },
		func(c *Comparison, w *bytes.Buffer) error { return c.WriteMarkdown(w) },
	} {
		var out bytes.Buffer
		if err := write(cmp, &out); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if strings.Contains(s, "(, ") {
			t.Errorf("an empty GPU name:\n%s", s)
		}
		if m := regexp.MustCompile(`[+-]0(\.0+)? `).FindString(s); m != "" {
			t.Errorf("a signed zero difference %q:\n%s", m, s)
		}
		if regexp.MustCompile(`\de[+-]\d`).MatchString(s) {
			t.Errorf("exponent notation:\n%s", s)
		}
		for _, want := range []string{"unknown gpu", "tok/s", "faster", "candidate is"} {
			if !strings.Contains(strings.ToLower(s), want) {
				t.Errorf("output lacks %q:\n%s", want, s)
			}
		}
	}
}

// TestEnginesDiffer: two engines' rates are never shown side by side
// without saying so, and each run names its engine.
func TestEnginesDiffer(t *testing.T) {
	t.Parallel()
	b, cd := load(t, "baseline"), load(t, "candidate")
	ed := *cd.Extensions.EngineDialect
	ed.Dialect.Engine = "vllm"
	cd.Extensions.EngineDialect = &ed
	cmp, err := New(b, cd)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := cmp.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"engines differ (llama.cpp vs vllm): each rate is that engine's own timer", "(NVIDIA GeForce RTX 3060, llama.cpp, complete)", "(NVIDIA GeForce RTX 3060, vllm, complete)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	if same, _ := New(b, load(t, "candidate")); strings.Contains(strings.Join(same.Warnings, " "), "engines differ") {
		t.Error("one engine, yet a warning that engines differ")
	}
}

// TestCaseOrderIsFixed: cases the protocol does not order (unknown IDs, one
// case at two levels) come in the same order every time, by ID and level.
func TestCaseOrderIsFixed(t *testing.T) {
	t.Parallel()
	base, cand := load(t, "baseline"), load(t, "baseline")
	for _, id := range []string{"zeta", "alpha", "mu"} {
		for _, conc := range []int{4, 1} {
			base.Summaries = append(base.Summaries, contract.Summary{Phase: "performance", CaseID: id, Concurrency: conc, Metric: contract.MetricDecodeTPS})
		}
	}
	var first []string
	for i := 0; i < 30; i++ {
		keys := caseKeys(base, cand)
		var got []string
		for _, k := range keys {
			got = append(got, fmt.Sprintf("%s/%s/%d", k.phase, k.id, k.conc))
		}
		if i == 0 {
			first = got
			continue
		}
		if strings.Join(got, " ") != strings.Join(first, " ") {
			t.Fatalf("the order changed between calls:\n%v\n%v", first, got)
		}
	}
	joined := strings.Join(first, " ")
	if !strings.Contains(joined, "performance/alpha/1 performance/alpha/4 performance/mu/1 performance/mu/4 performance/zeta/1 performance/zeta/4") {
		t.Errorf("unknown cases are not ordered by ID and level: %v", first)
	}
}

// TestEnergyComparedWhenBothHaveIt: two runs that measured energy are
// compared on it too, per case, with the words of energy (less energy,
// more tokens per joule); a run without it is not compared on it.
func TestEnergyComparedWhenBothHaveIt(t *testing.T) {
	t.Parallel()
	base, cand := load(t, "baseline"), load(t, "candidate")
	c, err := New(base, cand)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Energy) != 6 || c.Energy[0].Case != "short" || c.Energy[0].Metric != contract.MetricJoules || c.Energy[5].Metric != contract.MetricDecodeTokensPerJoule {
		t.Fatalf("energy rows %+v", c.Energy)
	}
	var text, md bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "energy (GPU joules") || !strings.Contains(md.String(), "### Energy") || !strings.Contains(md.String(), "| prompt-16k | joules | ") {
		t.Errorf("energy not shown:\n%s\n%s", text.String(), md.String())
	}
	for _, d := range []struct {
		metric     string
		base, cand float64
		want       string
	}{
		{contract.MetricJoules, 10, 8, "less energy"},
		{contract.MetricJoules, 10, 12, "more energy"},
		{contract.MetricDecodeTokensPerJoule, 1, 2, "more tokens per joule"},
		{contract.MetricDecodeTokensPerJoule, 2, 1, "fewer tokens per joule"},
		{contract.MetricJoules, 10, 10.01, "about the same"},
	} {
		if got := Direction(d.metric, d.base, d.cand); got != d.want {
			t.Errorf("%s %v → %v: %q, want %q", d.metric, d.base, d.cand, got, d.want)
		}
	}
	cand.Extensions.Energy = nil
	if c, _ := New(base, cand); c.Energy != nil {
		t.Error("compared on energy with one run without it")
	}
}

// TestWritesReturnTheWriteError: a failed write is the comparison's
// error, as text and as Markdown.
func TestWritesReturnTheWriteError(t *testing.T) {
	t.Parallel()
	c, err := New(load(t, "baseline"), load(t, "candidate"))
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(io.Writer) error{"text": c.WriteText, "Markdown": c.WriteMarkdown} {
		// A pipe whose reader is gone fails every write, as a closed
		// terminal does.
		pr, pw := io.Pipe()
		_ = pr.Close() // a pipe's Close always returns nil
		if err := write(pw); !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("%s on a closed pipe: %v, want %v", name, err, io.ErrClosedPipe)
		}
	}
}

// TestFreshnessWarned: a run whose engine is not shown to have been freshly
// loaded is warned of in the comparison's first lines, naming the run and
// what the engine had answered; freshly loaded engines are not.
func TestFreshnessWarned(t *testing.T) {
	t.Parallel()
	two, zero := int64(2), int64(0)
	for _, c := range []struct {
		name   string
		base   *contract.Engine
		cand   *contract.Engine
		warned string // "" none
	}{
		{"both started by strata", &contract.Engine{StartedByRunner: true}, &contract.Engine{StartedByRunner: true}, ""},
		{"serving, no request answered", &contract.Engine{ServedBeforeRun: &contract.ServedBefore{Answered: &zero}}, &contract.Engine{StartedByRunner: true}, ""},
		{"the candidate had answered two", &contract.Engine{StartedByRunner: true}, &contract.Engine{ServedBeforeRun: &contract.ServedBefore{Answered: &two}},
			"not freshly loaded: it had answered 2 requests before this run"},
		{"the baseline's count unknown", &contract.Engine{ServedBeforeRun: &contract.ServedBefore{Reason: "the engine's /metrics has no request or token counters"}}, &contract.Engine{StartedByRunner: true},
			"whether it was freshly loaded is unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, cd := load(t, "baseline"), load(t, "candidate")
			b.Extensions.Engine, cd.Extensions.Engine = c.base, c.cand
			cmp, err := New(b, cd)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := cmp.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			third := strings.SplitN(out.String(), "\n", 4)[2]
			switch {
			case c.warned == "" && strings.Contains(out.String(), "freshly loaded"):
				t.Errorf("a warning of freshness:\n%s", out.String())
			case c.warned != "" && (!strings.HasPrefix(third, "WARNING: run ") || !strings.Contains(third, c.warned)):
				t.Errorf("the third line is %q, want a warning with %q", third, c.warned)
			}
		})
	}
}
