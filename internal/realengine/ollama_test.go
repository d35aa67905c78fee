//go:build linux

package realengine

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/jsonfmt"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/runner"
)

// bundleTemplateSHA is the SHA-256 of the Qwen3 chat template the tiny
// models carry (../shared/engines/llama.cpp/README.md), which the bundle
// was built with.
const bundleTemplateSHA = "87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5"

// TestOllama runs against one real Ollama 0.32.11 (one start: loading the
// 151,936-token vocabulary is most of a start), with the thinker model:
//   - Run: `bench run --url --engine-log` speaks Ollama's own /api/chat
//     and writes a valid folder, nonconforming for the tool cases alone
//     (checkOllamaRun), which keeps Ollama's server log with its
//     llama-server helper's timer lines, one request's below the run's
//     start for each request sent, held against the records
//     (checkOllamaLog);
//   - OpenAIEndpointRefusesXHigh: its OpenAI-compatible endpoint answers
//     reasoning_effort xhigh with the Go module build's 400, which strata
//     reads as a refusal that names 0.32.12, not 0.32.11;
//   - ToolCall: the scripted model, created after the run, answers T1 with
//     one call on the done line, done_reason "stop": a completed request
//     whose call passes.
func TestOllama(t *testing.T) {
	t.Parallel()
	srv := StartOllama(t, OllamaOptions{Models: []string{Thinker}})
	t.Run("Run", func(t *testing.T) {
		out := t.TempDir()
		r := strata(t, repoRoot(), nil, "bench", "run", "--url", srv.URL, "--engine-log", srv.LogFile, "--results-dir", out)
		if r.code != 0 || !strings.Contains(r.stderr, "engine: ollama 0.32.11") {
			t.Fatalf("exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, srv.Log())
		}
		f := readFolder(t, out)
		checkOllamaRun(t, f)
		checkOllamaLog(t, f)
		checkOllamaSplitHeld(t, f)
	})
	t.Run("OpenAIEndpointRefusesXHigh", func(t *testing.T) {
		d := dialect.Dialect{Engine: dialect.Ollama, Version: "0.32.11"}
		b, _ := prompts.Bundle()
		fx, _ := b.Fixture("warmup")
		body, err := d.Body(fx)
		if err != nil {
			t.Fatal(err)
		}
		o, _, _ := client.New(client.Options{BaseURL: srv.URL}).Chat(context.Background(), d.Wire(), body, nil)
		ref := d.RefusedIn(o.HTTPStatus, o.ErrorBody)
		if ref == nil || !strings.Contains(ref.Text(), "the first version that takes it is 0.32.12") || strings.Contains(ref.Text(), "is 0.32.11") {
			t.Errorf("HTTP %d %s: refusal %+v", o.HTTPStatus, o.ErrorBody, ref)
		}
	})
	t.Run("ToolCall", func(t *testing.T) {
		srv.Create(t, Scripted)
		c := client.New(client.Options{BaseURL: srv.URL})
		d := dialect.Of(runner.ProbeServer(context.Background(), c).Dialect)
		d.Model = OllamaModel(Scripted) // the server lists two models now
		q, o := sendOne(t, c, d, "sanity-T1")
		if q.Status != contract.Completed || q.FinishReason == nil || *q.FinishReason != "stop" || q.Evaluation == nil || !q.Evaluation.Passed {
			t.Fatalf("T1: %s %v %+v; calls %+v; error %+v", q.Status, q.FinishReason, q.Evaluation, o.ToolCalls, q.Error)
		}
		if len(o.ToolCalls) != 1 || o.ToolCalls[0].Name != "lookup_record" || *q.FirstDeltaKind != "reasoning" || q.Tokens.OutputTokens == nil {
			t.Errorf("calls %+v, first delta %v, output tokens %v", o.ToolCalls, q.FirstDeltaKind, q.Tokens.OutputTokens)
		}
	})
}

// sendOne sends one fixture's request in dialect d, as a run sends it, and
// returns its record.
func sendOne(t *testing.T, c *client.Client, d dialect.Dialect, id string) (contract.Request, contract.Output) {
	t.Helper()
	b, _ := prompts.Bundle()
	fx, err := b.Fixture(id)
	if err != nil {
		t.Fatal(err)
	}
	body, err := d.Body(fx)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := protocol.Lookup(id)
	e := &record.Request{Req: req, Fixture: fx, Body: body}
	e.Outcome, e.Start, e.End = c.Chat(context.Background(), d.Wire(), body, nil)
	q, o, _ := result.RequestRecord(e, d)
	return q, o
}

// checkOllamaRun: a run on Ollama is valid (report accepts it), and its
// one nonconforming reason is the workload: the preflight's rendering of
// the tool cases on /api/chat differs from the bundle's, as Ollama's
// reading drops their additionalProperties (api/types.go @96fb6d2fa
// ToolFunctionParameters), while it renders the other 30 fixtures as the
// bundle does; no sampling setting, effort, budget, template or model
// file makes it nonconforming. Every body is /api/chat's with the
// profile's options and think "max"; the template is the GGUF's, from
// /api/show, and the bundle's; the model file is the blob Ollama runs,
// named and hashed; every request has a prompt count from
// prompt_eval_count (the frozen one but for T1–T4, whose schema Ollama
// shortened), a decode rate from eval_count over eval_duration, and, as
// the run kept Ollama's log, the prompt's evaluated tokens from its
// helper's prompt eval line, the rest cached, and a prompt rate of those
// over prompt_eval_duration.
func checkOllamaRun(t *testing.T, f folder) {
	t.Helper()
	f.report(t)
	reasons := f.res.Extensions.StatusReasons.Nonconforming
	if len(reasons) != 1 || reasons[0].Kind != contract.PreflightDiffers ||
		!strings.HasPrefix(reasons[0].Text, "the preflight showed the engine renders 4 of the 34 fixtures it checked, the tool cases, otherwise than the bundle (first sanity-T1: ") {
		t.Errorf("nonconforming for %d reasons, want the tool cases' rendering alone:", len(reasons))
		for _, r := range reasons {
			t.Errorf("  %s: %s", r.Kind, r.Text)
		}
	}
	if f.res.Run.Status != contract.StatusNonconforming || len(f.res.Extensions.StatusReasons.Partial) != 0 {
		t.Errorf("status %s, partial %+v", f.res.Run.Status, f.res.Extensions.StatusReasons.Partial)
	}
	if pf := f.res.Extensions.Preflight; pf == nil || !pf.Verifiable || pf.Agree != 30 || pf.Differ != 4 || !pf.TemplateAgrees {
		t.Errorf("preflight %+v", pf)
	}
	ed := f.res.Extensions.EngineDialect
	if ed == nil || ed.Dialect.API != string(dialect.APINative) || ed.Dialect.Model != OllamaModel(Thinker) || ed.Dialect.Version != "0.32.11" {
		t.Errorf("dialect %+v", ed)
	}
	if tm := f.res.Configuration.Template; tm == nil || tm.SHA256 != bundleTemplateSHA {
		t.Errorf("template %+v", tm)
	}
	checkOllamaModelFile(t, f)
	checkOllamaBodies(t, f)
	b, _ := prompts.Bundle()
	for _, q := range f.res.Requests {
		fx, _ := b.Fixture(q.ID)
		tool := fx.OffersTools()
		switch {
		case q.Tokens.InputTokens == nil || !tool && int(*q.Tokens.InputTokens) != fx.InputTokens || tool && int(*q.Tokens.InputTokens) >= fx.InputTokens:
			t.Errorf("%s: input_tokens %v, frozen %d (tools %v)", q.ID, q.Tokens.InputTokens, fx.InputTokens, tool)
		case q.Status != contract.Completed || q.FinishReason == nil || *q.FinishReason != "stop" || q.FirstDeltaKind == nil || *q.FirstDeltaKind != "reasoning":
			t.Errorf("%s: %s, finish %v, first delta %v", q.ID, q.Status, q.FinishReason, q.FirstDeltaKind)
		case q.Metrics.DecodeTPS == nil || q.Sources.DecodeTokens == nil || !strings.Contains(*q.Sources.DecodeTokens, "eval_count"):
			t.Errorf("%s: decode rate %v from %v", q.ID, q.Metrics.DecodeTPS, q.Sources.DecodeTokens)
		case q.Tokens.ReadTokens == nil || q.Tokens.CachedTokens == nil || *q.Tokens.ReadTokens+*q.Tokens.CachedTokens != *q.Tokens.InputTokens ||
			q.Sources.ReadTokens == nil || !strings.HasPrefix(*q.Sources.ReadTokens, contract.EngineLog+" line "):
			t.Errorf("%s: read %v + cached %v of %v, from %v", q.ID, q.Tokens.ReadTokens, q.Tokens.CachedTokens, *q.Tokens.InputTokens, q.Sources.ReadTokens)
		case q.Metrics.PromptTPS == nil || q.Timings.PromptS == nil || math.Abs(*q.Metrics.PromptTPS - float64(*q.Tokens.ReadTokens) / *q.Timings.PromptS) > 1e-6**q.Metrics.PromptTPS:
			t.Errorf("%s: prompt rate %v, read %d in %v s", q.ID, q.Metrics.PromptTPS, *q.Tokens.ReadTokens, q.Timings.PromptS)
		}
		if o := f.outs[q.ID]; o.Reasoning == nil || *o.Reasoning != "Checking records" {
			t.Errorf("%s: reasoning %v", q.ID, o.Reasoning)
		}
	}
}

// checkOllamaLog: the folder keeps Ollama's server log as its engine log,
// and below strata's line where the run began there is one llama-server
// prompt-eval line for each request the run sent, none above it (the
// validator, through report, holds their number to the records').
func checkOllamaLog(t *testing.T, f folder) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, contract.EngineLog))
	if err != nil {
		t.Fatal(err)
	}
	pre, run, found := strings.Cut(string(data), contract.EngineLogRunStart+"\n")
	if n := strings.Count(run, "prompt eval time ="); !found || n != len(f.res.Requests) || strings.Count(pre, "prompt eval time =") != 0 {
		t.Errorf("%d prompt-eval lines below the run's start (found %v), %d above; want one a request (%d) below", n, found, strings.Count(pre, "prompt eval time ="), len(f.res.Requests))
	}
	if e := f.res.Extensions.Engine; e == nil || e.Log == nil || *e.Log != contract.EngineLog || e.StartedByRunner {
		t.Errorf("extensions.engine %+v", e)
	}
}

// checkOllamaModelFile: the model file is the blob /api/show's FROM line
// names, hashed: its name is its SHA-256 (Ollama stores blobs so), and it
// is not the imported GGUF's hash (ollama create rewrites it), as the
// hashing note says.
func checkOllamaModelFile(t *testing.T, f folder) {
	t.Helper()
	files := f.res.Model.Files
	if len(files) != 1 || files[0].SHA256 == nil || files[0].Path != "sha256-"+*files[0].SHA256 || *files[0].SHA256 == thinkerSHA {
		t.Errorf("model files %+v", files)
	}
	if mh := f.res.Extensions.ModelHashing; mh == nil || !strings.Contains(mh.ModelPathResolved, "rewrites") {
		t.Errorf("model hashing %+v", mh)
	}
	if mc := f.res.Extensions.ModelCheck; mc == nil || mc.State != contract.ModelAdmitted {
		t.Errorf("model check %+v", mc)
	}
}

// checkOllamaBodies: each body is /api/chat's: the model, think "max", the
// profile's options and the cap as num_predict, nothing /api/chat does
// not read.
func checkOllamaBodies(t *testing.T, f folder) {
	t.Helper()
	want := map[string]any{"temperature": 1.0, "top_p": 0.95, "top_k": 20.0, "min_p": 0.0, "presence_penalty": 0.0, "repeat_penalty": 1.0}
	for _, q := range f.res.Requests {
		var body struct {
			Model   string         `json:"model"`
			Think   string         `json:"think"`
			Options map[string]any `json:"options"`
		}
		raw := f.outs[q.ID].Request
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatalf("%s: %v", q.ID, err)
		}
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(raw, &keys)
		for _, k := range []string{"tool_choice", "chat_template_kwargs", "reasoning_effort", "max_tokens", "stream_options"} {
			if _, ok := keys[k]; ok {
				t.Errorf("%s: %s sent to /api/chat", q.ID, k)
			}
		}
		if body.Model != OllamaModel(Thinker) || body.Think != "max" || body.Options["num_predict"] != float64(q.MaxOutputTokens) || body.Options["seed"] != float64(q.Seed) {
			t.Errorf("%s: body %s", q.ID, raw)
		}
		for k, v := range want {
			if body.Options[k] != v {
				t.Errorf("%s: options.%s %v, want %v", q.ID, k, body.Options[k], v)
			}
		}
	}
}

// checkOllamaSplitHeld: the validator pairs the records with the kept log
// as the run did, so a split moved by one token (the sum kept) is named.
func checkOllamaSplitHeld(t *testing.T, f folder) {
	t.Helper()
	q := &f.res.Requests[1]
	if q.Tokens.ReadTokens == nil || q.Tokens.CachedTokens == nil {
		t.Fatalf("%s has no split", q.ID)
	}
	*q.Tokens.ReadTokens--
	*q.Tokens.CachedTokens++
	b, err := jsonfmt.Indent(f.res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, contract.ResultsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := strata(t, t.TempDir(), nil, "bench", "report", "-q", f.dir)
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "/requests/1/tokens/read_tokens") {
		t.Errorf("a split moved by one token: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
