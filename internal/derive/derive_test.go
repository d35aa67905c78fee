package derive

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
)

func str(s string) *string { return &s }

func TestRequestStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dispatched bool
		err        string
		finish     *string
		want       string
	}{
		{false, "", nil, contract.Skipped},
		{true, "timeout", nil, contract.Failed},
		{true, "malformed_stream", str("stop"), contract.Failed},
		{true, "", str("length"), contract.Truncated},
		{true, "", str("stop"), contract.Completed},
		{true, "", str("tool_calls"), contract.Completed},
	} {
		if got := RequestStatus(c.dispatched, c.err, c.finish); got != c.want {
			t.Errorf("RequestStatus(%v, %q, %v) = %s, want %s", c.dispatched, c.err, c.finish, got, c.want)
		}
	}
}

func TestStatusPrecedence(t *testing.T) {
	t.Parallel()
	skipped := contract.StatusReason{Kind: contract.SkippedWork, Text: "skipped"}
	remote := contract.StatusReason{Kind: contract.RemoteServer, Text: "remote"}
	for _, c := range []struct {
		rs   []contract.StatusReason
		want string
	}{
		{nil, contract.StatusComplete},
		{[]contract.StatusReason{skipped, Interruption("SIGHUP")}, contract.StatusPartial},
		{[]contract.StatusReason{skipped, remote}, contract.StatusNonconforming},
	} {
		if got := measure.Status(c.rs); got != c.want {
			t.Errorf("measure.Status(%v) = %s, want %s", c.rs, got, c.want)
		}
	}
	sr := Split([]contract.StatusReason{remote, skipped, remote})
	if len(sr.Nonconforming) != 1 || len(sr.Partial) != 1 || sr.Nonconforming[0].Kind != contract.RemoteServer {
		t.Errorf("Split: %+v (a repeated reason is listed once, with its kind)", sr)
	}
}

func TestRemote(t *testing.T) {
	t.Parallel()
	for url, remote := range map[string]bool{
		"http://127.0.0.1:8080": false, "http://localhost:1": false, "http://[::1]:8080": false,
		"http://10.0.0.5:8080": true, "https://gpu.example.com": true,
	} {
		if got := Remote(url) != nil; got != remote {
			t.Errorf("Remote(%s) = %v, want %v", url, got, remote)
		}
	}
}

// TestMismatches: llama.cpp keeps float settings as float32; 0.95 comes
// back as 0.949999988 and is the value sent, 0 for a temperature of 1 is not.
func TestMismatches(t *testing.T) {
	t.Parallel()
	req := protocol.Schedule(false)[1]
	got := Mismatches(req, map[string]float64{"top_p": 0.949999988079071, "temperature": 0, "seed": float64(req.Seed), "n_predict": float64(req.Cap)})
	if len(got) != 1 || !strings.HasPrefix(got[0], "temperature = 0, not the 1 sent (") {
		t.Errorf("mismatches %q", got)
	}
	// A round's check holds each request's values under its ID.
	chk := &contract.SettingsCheck{Revealed: true, Seen: map[string]any{"concurrency-r1-c1": map[string]any{"seed": 1.0}, "concurrency-r1-c2": map[string]any{"seed": 2.0}}}
	if s := chk.SeenFor("concurrency-r1-c2"); s["seed"] != 2 {
		t.Errorf("SeenFor in a round: %v", s)
	}
	if s := chk.SeenFor("concurrency-r1-c3"); s != nil {
		t.Errorf("SeenFor a request the round's check lacks: %v", s)
	}
}

// folder reads a committed result folder's records.
func folder(t *testing.T, name string) (*contract.Results, map[string]contract.Output) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "results", name)
	data, err := os.ReadFile(filepath.Join(dir, contract.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var res contract.Results
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	lines, err := os.ReadFile(filepath.Join(dir, contract.OutputsFile))
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]contract.Output{}
	for _, l := range bytes.Split(bytes.TrimSpace(lines), []byte("\n")) {
		var o contract.Output
		if err := json.Unmarshal(l, &o); err != nil {
			t.Fatal(err)
		}
		outs[o.RequestID] = o
	}
	return &res, outs
}

// server reads what a committed folder's server served about itself.
func server(t *testing.T, name string) contract.ServerEvidence {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "results", name, contract.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := contract.ReadServerEvidence(data)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func maxShared(t *testing.T) map[string]int {
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	out := b.MaxShared()
	return out
}

// TestCommittedFoldersDeriveAgain: what each committed folder stores is
// what its records give.
func TestCommittedFoldersDeriveAgain(t *testing.T) {
	t.Parallel()
	ms := maxShared(t)
	for _, name := range []string{"baseline", "candidate", "partial", "nonconforming", "aborted"} {
		res, outs := folder(t, name)
		d := FromRecords(res, outs, ms, nil)
		if !reflect.DeepEqual(d.Counts, res.RequestCounts) || !reflect.DeepEqual(d.Quality, res.Quality) {
			t.Errorf("%s: counts or quality differ", name)
		}
		if len(d.Summaries) != len(res.Summaries) || len(d.Rounds) != len(res.ConcurrencyRounds) {
			t.Errorf("%s: %d summaries, %d rounds; stored %d, %d", name, len(d.Summaries), len(d.Rounds), len(res.Summaries), len(res.ConcurrencyRounds))
		}
		for i := range d.Summaries {
			if i < len(res.Summaries) && (d.Summaries[i].N != res.Summaries[i].N || !sameF(d.Summaries[i].Median, res.Summaries[i].Median)) {
				t.Errorf("%s: summary %d differs", name, i)
			}
		}
		ev := Evidence{Results: res, Outputs: outs, MaxShared: ms, Server: server(t, name)}
		if got, stored := Split(Reasons(ev)), res.Extensions.StatusReasons; !reflect.DeepEqual(got, stored) {
			t.Errorf("%s: reasons %+v, stored %+v", name, got, stored)
		}
		if got := measure.Status(Reasons(ev)); got != res.Run.Status {
			t.Errorf("%s: status %s, stored %s", name, got, res.Run.Status)
		}
	}
}

func sameF(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// TestReasonsFollowTheRecords: each rule fires on the record that breaks it.
func TestReasonsFollowTheRecords(t *testing.T) {
	t.Parallel()
	ms := maxShared(t)
	for _, c := range []struct {
		name   string
		mutate func(*contract.Results, map[string]contract.Output)
		kind   contract.ReasonKind
	}{
		{"no commit", func(r *contract.Results, _ map[string]contract.Output) { r.Software.StrataCommit = nil }, contract.NoCommit},
		{"no template", func(r *contract.Results, _ map[string]contract.Output) { r.Configuration.Template = nil }, contract.NoTemplate},
		{"an unhashed file", func(r *contract.Results, _ map[string]contract.Output) { r.Model.Files[0].SHA256 = nil }, contract.UnhashedModel},
		{"cache reuse", func(r *contract.Results, _ map[string]contract.Output) {
			n := int64(4000)
			r.Requests[2].Tokens.CachedTokens = &n
		}, contract.CacheReuseKind},
		{"length rule", func(r *contract.Results, _ map[string]contract.Output) {
			n := int64(3000)
			r.Requests[2].Tokens.InputTokens = &n
		}, contract.LengthRule},
		{"a refusal", func(r *contract.Results, o map[string]contract.Output) {
			x := o["sanity-T2"]
			s := 400
			x.HTTPStatus, x.Error = &s, &contract.ErrorInfo{Kind: "http_status", Message: "no"}
			o["sanity-T2"] = x
		}, contract.RefusedRequest},
		{"a fixture the engine renders otherwise", func(r *contract.Results, _ map[string]contract.Output) {
			r.Extensions.Preflight = differingPreflight(ptr(512), 200)
		}, contract.PreflightDiffers},
		{"a fixture the engine counts otherwise", func(r *contract.Results, _ map[string]contract.Output) {
			r.Extensions.Preflight = differingPreflight(nil, 201)
		}, contract.PreflightDiffers},
		{"a resolved setting", func(r *contract.Results, o map[string]contract.Output) {
			x := o["sanity-I1"]
			x.SettingsCheck = &contract.SettingsCheck{Revealed: true, Seen: map[string]any{"temperature": 0.0}}
			o["sanity-I1"] = x
		}, contract.SettingOtherwise},
	} {
		res, outs := folder(t, "baseline")
		c.mutate(res, outs)
		found := false
		for _, r := range Reasons(Evidence{Results: res, Outputs: outs, MaxShared: ms}) {
			found = found || r.Kind == c.kind
		}
		if !found {
			t.Errorf("%s: no %s reason", c.name, c.kind)
		}
	}
}

// TestLengthRuleLeavesTheSummaries: a 16K request measured at 15,000 input
// tokens (outside the 2 % rule) is excluded from every summary of its case,
// with the rule's words, and the others of the case stay.
func TestLengthRuleLeavesTheSummaries(t *testing.T) {
	t.Parallel()
	res, outs := folder(t, "baseline")
	bad := -1
	for i, q := range res.Requests {
		if q.CaseID == "prompt-16k" && q.Status == contract.Completed {
			bad = i
			break
		}
	}
	if bad < 0 {
		t.Fatal("the baseline has no completed prompt-16k request")
	}
	n := int64(15000)
	res.Requests[bad].Tokens.InputTokens = &n
	id := res.Requests[bad].ID
	d := FromRecords(res, outs, maxShared(t), nil)
	seen := 0
	for _, s := range d.Summaries {
		if s.CaseID != "prompt-16k" {
			continue
		}
		seen++
		if slices.Contains(s.IncludedRequestIDs, id) {
			t.Errorf("%s: %s is included", s.Metric, id)
		}
		var why string
		for _, x := range s.Excluded {
			if x.RequestID == id {
				why = x.Reason
			}
		}
		if !strings.Contains(why, "measured input_tokens 15000") || !strings.Contains(why, "2%") {
			t.Errorf("%s: %s excluded with %q", s.Metric, id, why)
		}
		if len(s.IncludedRequestIDs) == 0 {
			t.Errorf("%s: the case's other requests left too", s.Metric)
		}
	}
	if seen != len(contract.SummaryMetrics()) {
		t.Errorf("%d prompt-16k summaries", seen)
	}
}

// differingPreflight is a preflight of two fixtures: sanity-I1 agrees, and
// sanity-T1 (frozen at 200 tokens) is rendered otherwise from byte at (nil:
// the same rendering) and counted as count.
func differingPreflight(at *int, count int) *contract.Preflight {
	agree := 37
	return &contract.Preflight{Verifiable: true, Source: "POST /apply-template, POST /tokenize", Agree: 1, Differ: 1, Fixtures: []contract.PreflightFixture{
		{RequestID: "sanity-I1", Agree: true, RenderingAgrees: true, EngineTokens: &agree, FrozenTokens: 37},
		{RequestID: "sanity-T1", RenderingAgrees: at == nil, FirstDifference: at, EngineTokens: &count, FrozenTokens: 200},
	}}
}

// TestWorkload: on an engine whose source says it changes the tool cases
// (Ollama's native API), the preflight's rendering of them decides: one
// that differs is named with that cause (preflight_differs), one equal to
// the bundle's gives no reason; where no rendering of them was shown, the
// source's fact makes the run nonconforming (setting_not_taken). An engine
// not known to change them is held to its preflight alone.
func TestWorkload(t *testing.T) {
	t.Parallel()
	ollama := dialect.Dialect{Engine: dialect.Ollama, Version: "0.32.11", API: dialect.APINative, Model: "m"}
	rendered := func(at *int) *contract.Preflight {
		pf := differingPreflight(at, 0)
		pf.Fixtures[0].EngineTokens, pf.Fixtures[1].EngineTokens = nil, nil
		return pf
	}
	unrendered := rendered(nil)
	unrendered.Fixtures[1].RenderingAgrees, unrendered.Fixtures[1].Problem, unrendered.Fixtures[1].Agree = false, "POST /api/chat answered HTTP 500", false
	for _, c := range []struct {
		name string
		pf   *contract.Preflight
		d    dialect.Dialect
		kind contract.ReasonKind // "": no reason
		want string
	}{
		{"tool cases rendered otherwise", rendered(ptr(350)), ollama, contract.PreflightDiffers,
			"the preflight showed the engine renders 1 of the 2 fixtures it checked, the tool cases, otherwise than the bundle (first sanity-T1: its rendering differs from the bundle's at byte 350), as its source says it must (Ollama's api.ToolFunctionParameters"},
		{"tool cases rendered as the bundle", rendered(nil), ollama, "", ""},
		{"tool cases not rendered", unrendered, ollama, contract.SettingNotTaken, "and the preflight did not show their rendering: T1–T4 are not the protocol's workload"},
		{"no preflight", nil, ollama, contract.SettingNotTaken, "the engine cannot take the tool cases' tools as the protocol gives them (Ollama's api.ToolFunctionParameters"},
		{"another engine, rendered otherwise", rendered(ptr(350)), dialect.Dialect{Engine: dialect.LlamaCpp}, contract.PreflightDiffers, "the preflight showed the engine's chat template or tokenizer is not the profile's"},
		{"another engine, no preflight", nil, dialect.Dialect{Engine: dialect.LlamaCpp}, "", ""},
	} {
		rs := Workload(c.pf, c.d)
		switch {
		case c.kind == "" && len(rs) != 0:
			t.Errorf("%s: reasons %+v, want none", c.name, rs)
		case c.kind != "" && (len(rs) != 1 || rs[0].Kind != c.kind || !strings.Contains(rs[0].Text, c.want)):
			t.Errorf("%s: reasons %+v\nwant one %s saying %q", c.name, rs, c.kind, c.want)
		}
	}
}

// TestPreflightDiffers: a fixture the engine showed to become another
// prompt (its rendering, or its count of the same rendering) makes the run
// nonconforming, naming how many and the first with what differs; one the
// preflight could not check, a count alone of a tool case (a server's own
// shape of the tools), a count by a route that renders otherwise than
// the chat path (vLLM's /tokenize), an agreeing check, a preflight the
// engine could not take and none at all give no reason.
func TestPreflightDiffers(t *testing.T) {
	t.Parallel()
	unchecked := differingPreflight(nil, 0)
	unchecked.Fixtures[1].EngineTokens, unchecked.Fixtures[1].Problem = nil, "POST /tokenize answered HTTP 500"
	toolCountOnly := differingPreflight(nil, 201)
	toolCountOnly.Fixtures[1].RenderingAgrees, toolCountOnly.Fixtures[1].RenderingUnchecked = false, true
	plainCountOnly := differingPreflight(nil, 200)
	plainCountOnly.Fixtures[0].RenderingAgrees, plainCountOnly.Fixtures[0].RenderingUnchecked, plainCountOnly.Fixtures[0].EngineTokens = false, true, ptr(39)
	offPath := differingPreflight(nil, 201)
	offPath.OffChatPath = true
	agrees := differingPreflight(nil, 200)
	agrees.Fixtures[1].Agree = true
	for _, c := range []struct {
		name string
		pf   *contract.Preflight
		want string
	}{
		{"rendered otherwise", differingPreflight(ptr(512), 200), "1 of the 2 fixtures it checked became another prompt than the bundle's (first sanity-T1: its rendering differs from the bundle's at byte 512)"},
		{"counted otherwise", differingPreflight(nil, 201), "(first sanity-T1: it counts 201 tokens, frozen 200)"},
		{"not checked", unchecked, ""},
		{"counted off the chat path", offPath, ""},
		{"a tool case counted otherwise, its rendering not shown", toolCountOnly, ""},
		{"a case without tools counted otherwise, its rendering not shown", plainCountOnly, "(first sanity-I1: it counts 39 tokens, frozen 37)"},
		{"agrees", agrees, ""},
		{"not verifiable", &contract.Preflight{Reason: "the engine serves no /apply-template"}, ""},
		{"none", nil, ""},
	} {
		r := PreflightDiffers(c.pf)
		switch {
		case c.want == "" && r != nil:
			t.Errorf("%s: a reason %q", c.name, r.Text)
		case c.want != "" && (r == nil || r.Kind != contract.PreflightDiffers || !strings.Contains(r.Text, c.want) || measure.Status([]contract.StatusReason{*r}) != contract.StatusNonconforming):
			t.Errorf("%s: %+v, want a nonconforming reason saying %q", c.name, r, c.want)
		}
	}
}

// TestRanOtherwise: where the preflight showed a fixture rendered as the
// bundle's and counted nothing (Ollama's render-only route), the run's own
// count of that request decides whether the engine ran that prompt: a count
// other than the frozen one means it ran another (preflight_differs), as a
// server that renders one thing for the preflight and runs another would.
func TestRanOtherwise(t *testing.T) {
	t.Parallel()
	uncounted := func() *contract.Preflight {
		pf := differingPreflight(nil, 0)
		pf.Fixtures[0].EngineTokens, pf.Fixtures[1].EngineTokens = nil, nil
		pf.Fixtures[1].Agree = true
		return pf
	}
	counted := differingPreflight(nil, 200)
	offPath := uncounted()
	offPath.OffChatPath = true
	run := func(i1, t1 *int64) []contract.Request {
		return []contract.Request{{ID: "sanity-I1", Tokens: contract.Tokens{InputTokens: i1}}, {ID: "sanity-T1", Tokens: contract.Tokens{InputTokens: t1}}}
	}
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		name string
		pf   *contract.Preflight
		reqs []contract.Request
		want string // "": no reason
	}{
		{"counted as frozen", uncounted(), run(n(37), n(200)), ""},
		{"a tool case counted otherwise", uncounted(), run(n(37), n(194)),
			"the engine counted 1 of the requests whose rendering its preflight showed as the bundle's otherwise than the bundle froze (first sanity-T1: input_tokens 194, frozen 200)"},
		{"no count", uncounted(), run(nil, nil), ""},
		{"a preflight that counted", counted, run(n(37), n(194)), ""},
		{"a check off the chat path", offPath, run(n(37), n(194)), ""},
		{"no preflight", nil, run(n(37), n(194)), ""},
	} {
		r := RanOtherwise(c.pf, c.reqs)
		switch {
		case c.want == "" && r != nil:
			t.Errorf("%s: %+v, want no reason", c.name, r)
		case c.want != "" && (r == nil || r.Kind != contract.PreflightDiffers || !strings.HasPrefix(r.Text, c.want)):
			t.Errorf("%s: %+v, want preflight_differs %q", c.name, r, c.want)
		}
	}
}
