package pilot

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/validate"
)

var committed = struct {
	once   sync.Once
	raw    map[string][]byte
	bundle *fixtures.Bundle
	err    error
}{}

// folder returns a fresh copy of a committed result folder's results,
// validated once (every case below edits its own copy).
func folder(t *testing.T, name string) *contract.Results {
	t.Helper()
	committed.once.Do(func() {
		committed.raw = map[string][]byte{}
		if committed.bundle, committed.err = prompts.Bundle(); committed.err != nil {
			return
		}
		for _, n := range []string{"baseline", "candidate", "partial", "nonconforming"} {
			v, err := validate.Dir(filepath.Join("..", "..", "testdata", "results", n), committed.bundle)
			if err != nil || len(v.Violations) > 0 {
				committed.err = err
				if err == nil {
					committed.err = &violations{n, v.Violations}
				}
				return
			}
			committed.raw[n], _ = json.Marshal(v.Results)
		}
	})
	if committed.err != nil {
		t.Fatal(committed.err)
	}
	var r contract.Results
	if err := json.Unmarshal(committed.raw[name], &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

type violations struct {
	name string
	v    []validate.Violation
}

func (v *violations) Error() string { return v.name + ": " + v.v[0].String() }

func input(path string, r *contract.Results) Input {
	return Input{Path: path, Validation: &validate.Validation{Results: r}, Bundle: committed.bundle}
}

// shownBy is the labels of the folders an item is shown by ("" for an
// item that is open), with its open reason checked against Shown.
func shownBy(t *testing.T, rep *Report, id string) string {
	t.Helper()
	if len(rep.Checklists) != 1 {
		t.Fatalf("%d checklists", len(rep.Checklists))
	}
	for _, it := range rep.Checklists[0].Items {
		if it.ID != id {
			continue
		}
		if it.Shown == (it.Open != "") || it.Shown != (len(it.By) > 0) {
			t.Errorf("%s: shown %v, open %q, by %v", id, it.Shown, it.Open, it.By)
		}
		var by []string
		for _, s := range it.By {
			by = append(by, s.Folder)
		}
		return strings.Join(by, ",")
	}
	t.Fatalf("no item %s", id)
	return ""
}

func request(r *contract.Results, id string) *contract.Request {
	for i := range r.Requests {
		if r.Requests[i].ID == id {
			return &r.Requests[i]
		}
	}
	panic("no request " + id)
}

// agreeingPreflight is a preflight in which every fixture of the bundle
// agrees in rendering and count, the engine's template the bundle's.
func agreeingPreflight() *contract.Preflight {
	pf := &contract.Preflight{Verifiable: true, Source: "test", TemplateAgrees: true, EngineTemplateSHA256: "ab", BundleTemplateSHA256: "ab"}
	for _, id := range committed.bundle.SortedIDs() {
		pf.Fixtures = append(pf.Fixtures, contract.PreflightFixture{RequestID: id, Agree: true, RenderingAgrees: true})
	}
	pf.Agree = len(pf.Fixtures)
	return pf
}

func simulated(r *contract.Results) { r.Extensions.EngineDialect.Dialect.Simulated = true }

// TestChecklistItems holds each item's rule to folders edited to show it,
// or to come just short of it.
func TestChecklistItems(t *testing.T) {
	t.Parallel()
	failAfterDelta := func(kind string) func(r *contract.Results) {
		return func(r *contract.Results) {
			q := request(r, "sanity-R2")
			q.Status, q.Error = contract.Failed, &contract.ErrorInfo{Kind: kind, Message: "cut"}
		}
	}
	smallContext := func(status string) func(r *contract.Results) {
		return func(r *contract.Results) {
			ctx := int64(2048)
			r.Configuration.ContextTokens = &ctx
			q := request(r, "performance-prompt-4k-r1")
			q.Status, q.Error = status, &contract.ErrorInfo{Kind: "http_status", Message: "HTTP 400"}
		}
	}
	for _, c := range []struct {
		name, item string
		base       string
		edit       func(r *contract.Results)
		want       string
	}{
		{"no preflight", ItemTemplate, "baseline", nil, ""},
		{"preflight agrees", ItemTemplate, "baseline", func(r *contract.Results) { r.Extensions.Preflight = agreeingPreflight() }, "#1"},
		{"preflight on the simulator", ItemTemplate, "baseline", func(r *contract.Results) { r.Extensions.Preflight = agreeingPreflight(); simulated(r) }, ""},
		{"a tool case unchecked", ItemTemplate, "baseline", func(r *contract.Results) {
			pf := agreeingPreflight()
			pf.Fixtures = slices.DeleteFunc(pf.Fixtures, func(f contract.PreflightFixture) bool { return f.RequestID == "sanity-T3" })
			pf.Agree--
			r.Extensions.Preflight = pf
		}, ""},
		{"counts only", ItemTemplate, "baseline", func(r *contract.Results) {
			pf := agreeingPreflight()
			for i := range pf.Fixtures {
				pf.Fixtures[i].RenderingUnchecked, pf.Fixtures[i].RenderingAgrees = true, false
			}
			r.Extensions.Preflight = pf
		}, ""},
		{"another template", ItemTemplate, "baseline", func(r *contract.Results) {
			pf := agreeingPreflight()
			pf.TemplateAgrees, pf.EngineTemplateSHA256 = false, "cd"
			r.Extensions.Preflight = pf
		}, ""},
		{"revisions unpinned", ItemRevisions, "baseline", nil, ""},
		{"revisions pinned", ItemRevisions, "baseline", func(r *contract.Results) {
			card, tok := "card-rev", "tok-rev"
			r.Protocol.ModelCardRevision, r.Model.TokenizerRevision = &card, &tok
		}, "#1"},
		{"enough context", ItemContext, "baseline", nil, ""},
		{"prompt longer than the context, failed", ItemContext, "baseline", smallContext(contract.Failed), "#1"},
		{"prompt longer than the context, on the simulator", ItemContext, "baseline", func(r *contract.Results) { smallContext(contract.Failed)(r); simulated(r) }, ""},
		{"context filled during generation", ItemContext, "baseline", func(r *contract.Results) {
			ctx := int64(4200)
			r.Configuration.ContextTokens = &ctx
			q := request(r, "sanity-R1")
			out := int64(100)
			q.Status, q.Tokens.OutputTokens = contract.Truncated, &out
		}, "#1"},
		{"context filled, but the cap reached", ItemContext, "baseline", func(r *contract.Results) {
			ctx := int64(4200)
			r.Configuration.ContextTokens = &ctx
			q := request(r, "sanity-R1")
			out := int64(q.MaxOutputTokens)
			q.Status, q.Tokens.OutputTokens = contract.Truncated, &out
		}, ""},
		{"error after a first delta (simulator unmarked)", ItemErrorAfter, "partial", nil, "#1"},
		{"error after a first delta, cut", ItemErrorAfter, "baseline", failAfterDelta("truncated_stream"), "#1"},
		{"interrupted after a first delta", ItemErrorAfter, "baseline", failAfterDelta("cancelled"), ""},
		{"error before any delta", ItemErrorAfter, "baseline", func(r *contract.Results) {
			failAfterDelta("connection_error")(r)
			request(r, "sanity-R2").FirstDeltaKind = nil
		}, ""},
		{"queueing on one slot", ItemQueueing, "baseline", nil, "#1"},
		{"four slots", ItemQueueing, "baseline", func(r *contract.Results) { four := int64(4); r.Configuration.ServerCapacity = &four }, ""},
		{"capacity unknown", ItemQueueing, "baseline", func(r *contract.Results) { r.Configuration.ServerCapacity = nil }, ""},
		{"no optional stage", ItemQueueing, "partial", nil, ""},
		{"every round skipped", ItemQueueing, "baseline", func(r *contract.Results) {
			for i := range r.Requests {
				if r.Requests[i].Round != nil {
					r.Requests[i].Status = contract.Skipped
				}
			}
		}, ""},
		{"one hardware configuration", ItemHardware, "baseline", nil, ""},
		{"the sanity rescoring", ItemSanityRescore, "baseline", nil, ""},
		{"the website", ItemWebsite, "baseline", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := folder(t, c.base)
			if c.edit != nil {
				c.edit(r)
			}
			rep := Build([]Input{input(c.base, r)}, Options{})
			if got := shownBy(t, rep, c.item); got != c.want {
				t.Errorf("%s shown by %q, want %q", c.item, got, c.want)
			}
		})
	}
}

// TestTwoHardwareConfigurations: two complete runs on a real engine on
// different hardware show it, the longer one the slower system; the same
// hardware, equal durations, a partial run or the simulator do not.
func TestTwoHardwareConfigurations(t *testing.T) {
	t.Parallel()
	other := func(r *contract.Results) { r.Hardware.GPUs[0].Name = "NVIDIA RTX A4000" }
	for _, c := range []struct {
		name string
		edit func(base, cand *contract.Results)
		want string
	}{
		{"same GPU", func(_, _ *contract.Results) {}, ""},
		{"another GPU", func(base, cand *contract.Results) {
			other(cand)
			// The committed folders' durations are a simulator's and vary
			// when they are made again: the baseline is made the longer.
			slow, fast := 0.2, 0.1
			base.Run.RequiredDurationS, cand.Run.RequiredDurationS = &slow, &fast
		}, "#1,#2"},
		{"equal durations", func(base, cand *contract.Results) {
			other(cand)
			cand.Run.RequiredDurationS = base.Run.RequiredDurationS
		}, ""},
		{"one partial", func(_, cand *contract.Results) { other(cand); cand.Run.Status = contract.StatusPartial }, ""},
		{"one simulated", func(_, cand *contract.Results) { other(cand); simulated(cand) }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base, cand := folder(t, "baseline"), folder(t, "candidate")
			c.edit(base, cand)
			rep := Build([]Input{input("baseline", base), input("candidate", cand)}, Options{})
			if got := shownBy(t, rep, ItemHardware); got != c.want {
				t.Fatalf("shown by %q, want %q", got, c.want)
			}
			if c.want == "" {
				return
			}
			by := rep.Checklists[0].Items[slices.IndexFunc(rep.Checklists[0].Items, func(i Item) bool { return i.ID == ItemHardware })].By
			// The baseline took longer than the candidate (0.2 s, 0.1 s).
			if !strings.HasSuffix(by[0].Evidence, "(the slower system)") || strings.Contains(by[1].Evidence, "slower") || !strings.HasPrefix(by[1].Evidence, "NVIDIA RTX A4000") {
				t.Errorf("evidence %+v", by)
			}
		})
	}
}

// TestInvalidFolderIsNoEvidence: a folder with violations is listed with
// them and shows nothing, even what its records would show; a folder that
// could not be validated is listed with its error.
func TestInvalidFolderIsNoEvidence(t *testing.T) {
	t.Parallel()
	bad := input("broken", folder(t, "baseline"))
	bad.Validation.Violations = []validate.Violation{{Pointer: "/quality/passed", Message: "tampered"}}
	rep := Build([]Input{bad, {Path: "gone", Err: errNoBundle{}}, input("partial", folder(t, "partial"))}, Options{})
	if got := shownBy(t, rep, ItemQueueing); got != "" {
		t.Errorf("queueing shown by %q: the invalid baseline counted", got)
	}
	if got := shownBy(t, rep, ItemErrorAfter); got != "#3" {
		t.Errorf("error after a first delta shown by %q, want #3", got)
	}
	inv := rep.Invalid()
	if len(inv) != 2 || inv[0].Evidence != nil || !slices.Equal(inv[0].Violations, []string{"/quality/passed: tampered"}) || inv[1].Error != "no bundle here" {
		t.Errorf("invalid %+v", inv)
	}
	if len(rep.Sanity[0].Outcomes) != 1 || rep.Sanity[0].Outcomes[0].Folder != "#3" {
		t.Errorf("sanity across folders counts an invalid one: %+v", rep.Sanity[0])
	}
}

type errNoBundle struct{}

func (errNoBundle) Error() string { return "no bundle here" }

// TestOneChecklistPerProtocol: evidence of one protocol is never another's.
func TestOneChecklistPerProtocol(t *testing.T) {
	t.Parallel()
	other := folder(t, "candidate")
	other.Protocol.ID = "another-protocol"
	rep := Build([]Input{input("baseline", folder(t, "baseline")), input("other", other)}, Options{})
	if len(rep.Checklists) != 2 || rep.Checklists[0].ProtocolID == rep.Checklists[1].ProtocolID ||
		!slices.Equal(rep.Checklists[0].Folders, []string{"#1"}) || !slices.Equal(rep.Checklists[1].Folders, []string{"#2"}) {
		t.Errorf("checklists %+v", rep.Checklists)
	}
}

// TestLengthRule: the measured prompt lengths against the 2 % rule, and the
// capped count, per case.
func TestLengthRule(t *testing.T) {
	t.Parallel()
	r := folder(t, "baseline")
	long := int64(4200)
	request(r, "performance-prompt-4k-r2").Tokens.InputTokens = &long
	request(r, "performance-prompt-16k-r1").Status = contract.Truncated
	rep := Build([]Input{input("baseline", r)}, Options{})
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| prompt-4k | 0/3 | 4,089, 4,200, 4,089 | **outside** 2 % of 4,096: performance-prompt-4k-r2 has 4,200 tokens (+2.54 %) |",
		"| prompt-16k | 1/3 | 16,384 (×3) | within 2 % of 16,384 (largest deviation +0.00 %) |",
		"| short | 0/3 | 32 (×3) | no target (the short prompt) |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("no line %q in\n%s", want, md.String())
		}
	}
	c := rep.Folders[0].Evidence.Performance[1]
	if c.WithinRule == nil || *c.WithinRule || c.TargetTokens == nil || *c.TargetTokens != 4096 {
		t.Errorf("prompt-4k %+v", c)
	}
}

// TestEnergySeam: a folder shows energy only when the reader gives some.
func TestEnergySeam(t *testing.T) {
	t.Parallel()
	j := 12.5
	reader := func(r *contract.Results) []CaseEnergy {
		if r.Run.Status != contract.StatusComplete {
			return nil
		}
		return []CaseEnergy{{Phase: "performance", CaseID: "short", Source: "nvidia-smi", MedianJ: &j, MinJ: &j, MaxJ: &j, N: 3}}
	}
	rep := Build([]Input{input("baseline", folder(t, "baseline")), input("partial", folder(t, "partial"))}, Options{Energy: reader})
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(md.String(), "| Energy | Case |"); n != 1 || !strings.Contains(md.String(), "| performance | short | nvidia-smi | 12.5 (12.5–12.5, n=3) | not measured |") {
		t.Errorf("%d energy tables:\n%s", n, md.String())
	}
	var js strings.Builder
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if strings.Count(js.String(), `"energy"`) != 1 {
		t.Errorf("energy in the JSON of a folder without it:\n%s", js.String())
	}
	rep = Build([]Input{input("baseline", folder(t, "baseline"))}, Options{})
	md.Reset()
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Energy") {
		t.Error("energy shown without a reader")
	}
}

// TestCopiedFolderCountsOnce: a copy of a folder (the
// same run ID, or the same outputs.jsonl under another run ID) is the
// same run: it is listed as a copy of the first and counted once, in the
// checklists and across folders; two runs count twice.
func TestCopiedFolderCountsOnce(t *testing.T) {
	t.Parallel()
	renamed := folder(t, "baseline")
	renamed.Run.ID = "20261202T040000Z-abcdef"
	for _, c := range []struct {
		name   string
		second *contract.Results
		copyOf string
	}{
		{"a copy", folder(t, "baseline"), "#1"},
		{"a copy under another run ID", renamed, "#1"},
		{"another run", folder(t, "candidate"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := Build([]Input{input("baseline", folder(t, "baseline")), input("copy", c.second)}, Options{})
			f := rep.Folders[1]
			counted := 2
			if c.copyOf != "" {
				counted = 1
			}
			if f.CopyOf != c.copyOf || !f.Valid || (f.Evidence == nil) != (c.copyOf != "") {
				t.Errorf("the second folder: copy of %q, valid %v, evidence %v; want a copy of %q", f.CopyOf, f.Valid, f.Evidence != nil, c.copyOf)
			}
			if got := len(rep.Checklists[0].Folders); got != counted {
				t.Errorf("the checklist counts %v, want %d folders", rep.Checklists[0].Folders, counted)
			}
			if got := len(rep.Sanity[0].Outcomes); got != counted {
				t.Errorf("sanity across folders counts %d outcomes, want %d", got, counted)
			}
			if len(rep.Invalid()) != 0 {
				t.Errorf("a copy is listed as invalid: %+v", rep.Invalid())
			}
			var md strings.Builder
			if err := rep.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			for _, says := range []string{"#2 `copy`: a copy of #1", "1 valid (and 1 copy of one of them, counted once), 0 not valid"} {
				if (c.copyOf != "") != strings.Contains(md.String(), says) {
					t.Errorf("the Markdown says %q: %v", says, strings.Contains(md.String(), says))
				}
			}
		})
	}
}

// TestMarkdownReturnsTheWriteError: a failed write is the Markdown's
// error.
func TestMarkdownReturnsTheWriteError(t *testing.T) {
	t.Parallel()
	rep := Build([]Input{input("baseline", folder(t, "baseline"))}, Options{})
	// A pipe whose reader is gone fails every write, as a closed terminal
	// does.
	pr, pw := io.Pipe()
	_ = pr.Close() // a pipe's Close always returns nil
	if err := rep.WriteMarkdown(pw); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("WriteMarkdown on a closed pipe: %v, want %v", err, io.ErrClosedPipe)
	}
}
