package result

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
)

func str(s string) *string { return &s }

// TestRequestRecord maps each way a request can end to its status, error
// and the reasons of its nulls.
func TestRequestRecord(t *testing.T) {
	t.Parallel()
	req := protocol.Schedule(false)[1]
	now := time.Now()
	for _, c := range []struct {
		name    string
		e       record.Request
		status  string
		errKind string
		null    string // a pointer that must have a reason
	}{
		{"skipped", record.Request{Req: req, SkipReason: "the run was interrupted"}, contract.Skipped, "skipped", "/finish_reason"},
		{"failed", record.Request{Req: req, Outcome: &record.Outcome{Error: &record.Error{Kind: record.ErrTimeout, Message: "1800 s"}, Total: 1800}}, contract.Failed, record.ErrTimeout, "/finish_reason"},
		{"truncated", record.Request{Req: req, Outcome: &record.Outcome{FinishReason: str("length"), Normal: true, Total: 1}}, contract.Truncated, "", "/error"},
		{"completed", record.Request{Req: req, Outcome: &record.Outcome{FinishReason: str("stop"), Normal: true, Total: 1}}, contract.Completed, "", "/error"},
		{"lost in flight", record.Request{Req: req, Lost: true, Outcome: &record.Outcome{Error: &record.Error{Kind: "runner_stopped", Message: "the runner stopped"}}}, contract.Failed, "runner_stopped", "/timings/total_s"},
	} {
		c.e.Start, c.e.End, c.e.DispatchedAt = now, now, now
		r, o, miss := RequestRecord(&c.e, dialect.Dialect{Engine: dialect.LlamaCpp, Build: 10470})
		if r.Status != c.status || o.Status != c.status {
			t.Errorf("%s: status %s (outputs %s), want %s", c.name, r.Status, o.Status, c.status)
		}
		if (r.Error == nil) != (c.errKind == "") || (r.Error != nil && r.Error.Kind != c.errKind) {
			t.Errorf("%s: error %+v, want kind %q", c.name, r.Error, c.errKind)
		}
		if miss[c.null] == "" {
			t.Errorf("%s: no reason for the null %s (%v)", c.name, c.null, miss)
		}
	}
}

// TestPreciseReasonsStay: the install's own reason for a missing commit,
// gathered first, is what the result says for all three commit pointers;
// assembly's generic sentence never replaces it.
func TestPreciseReasonsStay(t *testing.T) {
	t.Parallel()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rec := &record.Run{ID: "20261201T100000Z-abcdef", StartedAt: started, Origin: started, BaseURL: "http://127.0.0.1:8080",
		Server: record.Server{Dialect: dialect.Identify(contract.ServerEvidence{}).Record()}}
	for _, req := range protocol.Schedule(false) {
		f, _ := b.Fixture(req.ID)
		rec.Requests = append(rec.Requests, &record.Request{Req: req, Fixture: f, SkipReason: "not sent"})
	}
	precise := "the binary carries no VCS stamp (built with -buildvcs=false) and /tmp/x is not a checkout"
	facts := record.Facts{Protocol: b.Protocol, Missing: map[string]string{contract.PtrSoftwareStrataCommit: precise,
		contract.PtrSoftwareRunnerCommit: precise, contract.PtrProtocolGitCommit: precise}}
	a, err := Assemble(rec, record.Identity{Track: "custom", Command: "strata bench run"}, facts, b.MaxShared(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{contract.PtrSoftwareStrataCommit, contract.PtrSoftwareRunnerCommit, contract.PtrProtocolGitCommit} {
		if got := a.Results.Missing[p]; got != precise {
			t.Errorf("%s: %q, want the install's own reason", p, got)
		}
	}
}

// TestThinkingEvidenceCountsWhatStreamed: a request that answered without
// reasoning is evidence that thinking did not happen; one cancelled in its
// prefill (or failed before any delta) is evidence of nothing, and one
// never dispatched is not counted at all.
func TestThinkingEvidenceCountsWhatStreamed(t *testing.T) {
	t.Parallel()
	req := func(id string, o *record.Outcome) *record.Request {
		return &record.Request{Req: protocol.Request{ID: id}, Outcome: o}
	}
	rec := &record.Run{Requests: []*record.Request{
		req("thought", &record.Outcome{Reasoning: "Checking records", FirstDeltaKind: "reasoning"}),
		req("answered", &record.Outcome{FirstDeltaKind: "answer"}),
		req("cancelled", &record.Outcome{}),
		req("skipped", nil),
	}}
	got := thinkingEvidence(rec)
	if got.Dispatched != 3 || got.WithReasoning != 1 || strings.Join(got.WithoutReasoning, ",") != "answered" {
		t.Errorf("dispatched %d, with reasoning %d, without %v; want 3, 1, [answered]", got.Dispatched, got.WithReasoning, got.WithoutReasoning)
	}
}

// TestEngineLogReason: the reason for a missing engine log names the real
// cause, an engine already serving that strata did not start, whether it
// was found at --url or at a profile's URL, and the way out; a recovered
// run says the file is read only after a run; a log kept is the artifact.
func TestEngineLogReason(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		engine    contract.Engine
		log       []byte
		recovered bool
		want      string // "": the log is kept
	}{
		{"--url", contract.Engine{}, nil, false, "the engine at --url was already serving when the run began, not started by strata, so strata could not keep its output: there is no engine log; name the log file the server writes (llama-server --log-file FILE) with --engine-log FILE"},
		{"--profile --no-start", contract.Engine{Profile: "llama-3060"}, nil, false, "profile llama-3060's engine was already serving when the run began, not started by strata"},
		{"recovered --url", contract.Engine{}, nil, true, "the run was recovered from its journal: the engine at --url was already serving"},
		{"--url with --engine-log", contract.Engine{}, []byte("log\n"), false, ""},
		{"started by strata", contract.Engine{StartedByRunner: true}, []byte("log\n"), false, ""},
	} {
		as := &assembler{missing: contract.Missing{}, facts: record.Facts{EngineLog: c.log}}
		if c.recovered {
			as.facts.Extensions.Recovered = &contract.Recovered{}
		}
		e := as.engineLog(&c.engine)
		got := as.missing[contract.PtrEngineLog]
		switch {
		case c.want == "" && (e.Log == nil || *e.Log != contract.EngineLog || got != ""):
			t.Errorf("%s: log %v, reason %q; want engine.log", c.name, e.Log, got)
		case c.want != "" && (e.Log != nil || !strings.HasPrefix(got, c.want)):
			t.Errorf("%s: log %v, reason %q; want %q", c.name, e.Log, got, c.want)
		}
	}
}

// TestLimitationsNameWhatTheEngineHas: every run says it is not a
// zero-cache or cold-model measurement; only an engine with an expert
// cache (Strata's server) is said to keep one warm, and switches that end
// a reply (repeat-stop, loop recovery) are named for Strata's server,
// which has them, and an unidentified one, which may.
func TestLimitationsNameWhatTheEngineHas(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d              dialect.Dialect
		expert, repeat bool
	}{
		{dialect.Dialect{Engine: dialect.LlamaCpp, Build: 10470}, false, false},
		{dialect.Dialect{Engine: dialect.LlamaCpp}, false, false},
		{dialect.Dialect{Engine: dialect.Ollama}, false, false},
		{dialect.Dialect{Engine: dialect.VLLM}, false, false},
		{dialect.Dialect{Engine: dialect.Unknown}, false, true},
		{dialect.Dialect{Engine: dialect.StrataServer}, true, true},
	} {
		rec := &record.Run{Server: record.Server{Dialect: c.d.Record()}}
		got := strings.Join(limitations(rec, contract.BudgetCheck{State: "sent", Detail: "x"}, nil, contract.Missing{}), "\n")
		if !strings.Contains(got, "not zero-cache or cold-model measurements") {
			t.Errorf("%s: no word that these are not zero-cache or cold-model measurements:\n%s", c.d.Engine, got)
		}
		if strings.Contains(strings.ToLower(got), "expert cache") != c.expert {
			t.Errorf("%s: names an expert cache: %v, want %v:\n%s", c.d.Engine, !c.expert, c.expert, got)
		}
		if switches := strings.Contains(got, "loop-recovery") || strings.Contains(got, "loop recovery") || strings.Contains(got, "loop_recovery"); switches != c.repeat {
			t.Errorf("%s: names repeat-stop and loop-recovery switches: %v, want %v:\n%s", c.d.Engine, !c.repeat, c.repeat, got)
		}
	}
}

// TestImpossiblePromptCountIsNull: a prompt count no engine can give for
// the request's fixture (usage.prompt_tokens of 2^63-1 for 32 frozen
// tokens) is recorded as null with the reason, not as the number.
func TestImpossiblePromptCountIsNull(t *testing.T) {
	t.Parallel()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	req := protocol.Schedule(false)[1]
	f, err := b.Fixture(req.ID)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	e := record.Request{Req: req, Fixture: f, Start: now, End: now, DispatchedAt: now, Outcome: &record.Outcome{FinishReason: str("stop"), Normal: true, Total: 1,
		Usage: []byte(`{"completion_tokens":3,"prompt_tokens":9223372036854775807}`)}}
	r, _, miss := RequestRecord(&e, dialect.Dialect{Engine: dialect.LlamaCpp, Build: 10470})
	if want := "impossible engine evidence: usage.prompt_tokens (9223372036854775807) exceeds"; r.Tokens.InputTokens != nil || !strings.HasPrefix(miss[contract.ReqTokensInputTokens], want) {
		t.Errorf("input_tokens %v (%q), want null with %q", r.Tokens.InputTokens, miss[contract.ReqTokensInputTokens], want)
	}
}
