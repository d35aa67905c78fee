package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/folder"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/runner"
	"github.com/strata-bench/strata/internal/simengine"
	"github.com/strata-bench/strata/internal/validate"
)

// asLlama makes the simulator report a llama.cpp build in /props (behind
// the Unmarked front, the engine looks like that llama.cpp).
var asLlama = map[string]json.RawMessage{"build_info": json.RawMessage(`"b9928-81ff7ab"`)}

type harness struct {
	scenario *simengine.Scenario
	// simulated serves the simulator as it is; otherwise it is behind
	// resulttest.Unmarked, so a run can be conforming and the status rules
	// can be tested. keep names the markers that front leaves.
	simulated bool
	keep      []resulttest.Marker
	optional  bool
	timeout   time.Duration
	slots     int
	// decodeTPS slows the engine down where a test needs time to pass.
	decodeTPS float64
	ctx       context.Context
	// before runs after the server started (to kill it, and so on).
	url   string
	facts *record.Facts
	// sim adjusts the simulator's configuration (its dialect, say).
	sim func(*simengine.Config)
	// view is what the runner could see of the engine process.
	view record.EngineView
	// machine, when set, is the machine the redactor protects (instead of
	// this one).
	machine *redact.Machine
	// identity, when set, is what the operator declared.
	identity *record.Identity
	// front, when set, puts a server of the test's in front of the engine
	// at url and returns the URL the run uses instead.
	front func(t testing.TB, url string) string
}

// longReasoning reasons 300 tokens (600 on long prompts, past the cap).
func longReasoning(c *simengine.Config) { c.ReasoningTokens = 300 }

type outcome struct {
	res     *contract.Results
	outs    map[string]contract.Output
	dir     string
	invalid []validate.Violation
	rec     *record.Run
}

func bundle(t testing.TB) *fixtures.Bundle {
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func conformingFacts() record.Facts {
	commit := strings.Repeat("ab", 20)
	sha := strings.Repeat("cd", 32)
	kind := "source"
	return record.Facts{
		Protocol:     protocol.StandIn(),
		StrataCommit: &commit, RunnerCommit: &commit, BuildKind: &kind,
		ModelFiles: []contract.ModelFile{{Path: "model-00001-of-00001.gguf", SHA256: &sha}},
		Missing: map[string]string{
			"/hardware/gpus": "test", "/hardware/cpu": "test", "/hardware/ram_bytes": "test", "/hardware/storage": "test",
			"/software/os": "test", "/software/drivers": "test", "/software/runtime": "test",
		},
	}
}

func (h harness) run(t testing.TB) outcome {
	t.Helper()
	rec, url := h.execute(t)
	return h.finish(t, rec, url)
}

// execute runs the protocol against the harness's engine and returns the
// record and the engine's URL.
func (h harness) execute(t testing.TB) (*record.Run, string) {
	t.Helper()
	b := bundle(t)
	sc := h.scenario
	if sc == nil {
		sc = &simengine.Scenario{}
	}
	if sc.Props == nil {
		sc.Props = asLlama
	}
	decode := h.decodeTPS
	if decode == 0 {
		decode = 2e5
	}
	tmpl, _, _ := prompts.Template(b)
	// Short reasoning by default (a run streams a fifth of the deltas);
	// longReasoning is the demo engine's.
	cfg := simengine.Config{PromptTPS: 5e6, DecodeTPS: decode, ReasoningTokens: 60, Accuracy: 1, Slots: max(h.slots, 1), Template: string(tmpl),
		ContextTokens: 32768, ModelPath: "/srv/models/qwen/model-00001-of-00001.gguf", Bundle: b, Scenario: sc}
	if h.sim != nil {
		h.sim(&cfg)
	}
	sim := simengine.New(cfg)
	var url string
	if h.simulated {
		var err error
		if url, err = sim.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := sim.Close(); err != nil {
				t.Error(err)
			}
		})
	} else {
		url = resulttest.Unmarked(t, sim, h.keep...)
	}
	if h.url != "" {
		url = h.url
	}
	if h.front != nil {
		url = h.front(t, url)
	}
	ctx := h.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	c := client.New(client.Options{BaseURL: url, Timeout: h.timeout})
	return runner.Execute(ctx, runner.Config{Client: c, Bundle: b, Optional: h.optional, HealthTimeout: 2 * time.Second}), url
}

// finish assembles, writes and validates the folder of a record the way
// a run does, with the harness's facts, machine and identity.
func (h harness) finish(t testing.TB, rec *record.Run, url string) outcome {
	t.Helper()
	b := bundle(t)
	facts := conformingFacts()
	if h.facts != nil {
		facts = *h.facts
	}
	facts.Engine = h.view
	maxShared := b.MaxShared()
	red := result.Redactor(redact.Local(os.Getenv), b)
	if h.machine != nil {
		red = result.Redactor(*h.machine, b)
	}
	id := record.Identity{Track: "custom", Command: "strata bench run --url " + url}
	if h.identity != nil {
		id = *h.identity
	}
	a, err := result.Assemble(rec, id, facts, maxShared, red)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := folder.Write(t.TempDir(), a, red, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := validate.Dir(dir, b)
	if err != nil {
		t.Fatal(err)
	}
	return outcome{res: v.Results, outs: readOutputs(t, dir), dir: dir, invalid: v.Violations, rec: rec}
}

// executed is one execution of the protocol that several folders are
// finished from: the cases that differ only in what assembly and writing
// are given (the facts, the machine the redactor protects) share the
// engine's answers instead of each running the protocol again.
type executed struct {
	rec *record.Run
	url string
}

// executeOnce runs h's protocol once for the cases that finish it.
func (h harness) executeOnce(t testing.TB) executed {
	t.Helper()
	rec, url := h.execute(t)
	return executed{rec, url}
}

// finishCopy finishes a copy of the shared record with h: assembly redacts
// the evidence in place (RedactEvidence), so each case gets its own copy
// of what that writes, the run's Aborted and each request's skip reason
// and outcome (answer, reasoning, error body and message, tool calls,
// malformed lines); the rest is only read.
func (e executed) finishCopy(t testing.TB, h harness) outcome {
	t.Helper()
	rec := *e.rec
	rec.Requests = make([]*record.Request, len(e.rec.Requests))
	for i, q := range e.rec.Requests {
		c := *q
		if q.Outcome != nil {
			o := *q.Outcome
			o.ToolCalls = slices.Clone(o.ToolCalls)
			o.Malformed = slices.Clone(o.Malformed)
			if o.Error != nil {
				err := *o.Error
				o.Error = &err
			}
			c.Outcome = &o
		}
		rec.Requests[i] = &c
	}
	return h.finish(t, &rec, e.url)
}

func readOutputs(t testing.TB, dir string) map[string]contract.Output {
	f, err := os.Open(filepath.Join(dir, contract.OutputsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	out := map[string]contract.Output{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var o contract.Output
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		out[o.RequestID] = o
	}
	return out
}

func (o outcome) req(t *testing.T, id string) contract.Request {
	t.Helper()
	for _, r := range o.res.Requests {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no record %s", id)
	return contract.Request{}
}

func (o outcome) reasons() string {
	sr := o.res.Extensions.StatusReasons
	return strings.Join(append(contract.Texts(sr.Nonconforming), contract.Texts(sr.Partial)...), " | ")
}

func (o outcome) mustBeValid(t *testing.T) {
	t.Helper()
	for _, v := range o.invalid {
		t.Errorf("validation: %s", v)
	}
}

func i(n int) *int       { return &n }
func s(v string) *string { return &v }

// summary is the performance phase's summary of caseID's metric.
func summary(t *testing.T, r *contract.Results, caseID, metric string) contract.Summary {
	t.Helper()
	for _, s := range r.Summaries {
		if s.Phase == "performance" && s.CaseID == caseID && s.Metric == metric {
			return s
		}
	}
	t.Fatalf("no summary performance/%s/%s", caseID, metric)
	return contract.Summary{}
}

// decode decodes data into v or ends the test, naming what was read.
func decode(t testing.TB, what string, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func excluded(s contract.Summary, id string) string {
	for _, e := range s.Excluded {
		if e.RequestID == id {
			return e.Reason
		}
	}
	return ""
}
