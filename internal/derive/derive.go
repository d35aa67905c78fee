// Package derive applies the protocol's rules to a run's records: a
// request's status from its finish reason and error, its sanity verdict,
// the settings the server resolved otherwise, unexpected cache reuse and
// the length rule, the summaries and concurrency rounds, the request
// counts and the quality tally, and the reasons a run is nonconforming or
// partial. A rule with a threshold or a sentence of its own has its home
// in protocol or measure (internal/layout/rules_test.go names each), and
// derive calls it there.
//
// Assembly (internal/result) calls it to produce these values from the
// records it has just built; validation (internal/validate) calls it on the
// records of a saved folder and compares. A rule therefore changes in one
// place, and what `bench report` accepts is exactly what `bench run`
// writes. It imports neither the runner nor the client.
package derive

import (
	"fmt"
	"math"
	"sort"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/score"
)

// RequestStatus is the protocol's status of a request: never dispatched is
// skipped; an HTTP or stream error, a malformed stream or a timeout is
// failed (errKind set); a normal end at the cap (finish_reason length) is
// truncated; any other normal end is completed.
func RequestStatus(dispatched bool, errKind string, finish *string) string {
	switch {
	case !dispatched:
		return contract.Skipped
	case errKind != "":
		return contract.Failed
	case finish != nil:
		if truncated, _ := protocol.FinishStatus(*finish); truncated {
			return contract.Truncated
		}
	}
	return contract.Completed
}

// Counts are the request counts per phase.
func Counts(reqs []contract.Request, optional bool) contract.RequestCounts {
	var rc contract.RequestCounts
	for _, p := range protocol.Phases() {
		rc.Phase(string(p)).Planned = protocol.PlannedCount(p, optional)
	}
	for _, r := range reqs {
		c := rc.Phase(r.Phase)
		if c == nil {
			continue
		}
		switch r.Status {
		case contract.Completed:
			c.Completed++
		case contract.Truncated:
			c.Truncated++
		case contract.Failed:
			c.Failed++
		case contract.Skipped:
			c.Skipped++
		}
	}
	for _, p := range protocol.Phases() {
		c := rc.Phase(string(p))
		c.Attempted = c.Completed + c.Truncated + c.Failed
	}
	return rc
}

// Quality tallies the sanity verdicts.
func Quality(reqs []contract.Request) contract.Quality {
	q := contract.Quality{Total: len(protocol.SanityCases())}
	tallies := map[string]*contract.Tally{
		string(protocol.CategoryInstruction): &q.Categories.Instruction,
		string(protocol.CategoryRetrieval):   &q.Categories.Retrieval,
		string(protocol.CategoryToolCall):    &q.Categories.ToolCall,
	}
	for _, c := range protocol.SanityDefinitions() {
		tallies[string(c.Category)].Total++
	}
	for _, r := range reqs {
		if r.Evaluation == nil {
			continue
		}
		if r.Evaluation.Passed {
			q.Passed++
			if t := tallies[r.Evaluation.Category]; t != nil {
				t.Passed++
			}
		}
	}
	return q
}

// Evaluate scores a sanity request from its record and its outputs.jsonl
// line: the final answer and structured tool calls, never the reasoning.
func Evaluate(exp *fixtures.Expected, q *contract.Request, o contract.Output) score.Verdict {
	resp := score.Response{Status: score.Status(q.Status), OutputTokens: q.Tokens.OutputTokens, Cap: q.MaxOutputTokens}
	if o.Answer != nil {
		resp.Answer = *o.Answer
	}
	for _, tc := range o.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, score.Call{Name: tc.Name, Arguments: tc.Arguments})
	}
	if o.Error != nil {
		resp.Reason = o.Error.Kind + ": " + o.Error.Message
		if q.Status == contract.Skipped {
			resp.Reason = o.Error.Message
		}
	}
	return score.Evaluate(exp, resp)
}

// Setting is one sampling setting as the server's settings view names it,
// with the value the protocol sends.
type Setting struct {
	Name string
	Want float64
	// Float32: llama.cpp stores these as float and prints 0.95 as
	// 0.949999988.
	Float32 bool
}

// Settings are the settings a request's resolved values are checked
// against, as llama.cpp's /slots names them.
func Settings(req protocol.Request) []Setting {
	s := protocol.ProfileSampling()
	return []Setting{
		{"seed", float64(req.Seed), false},
		{"temperature", s.Temperature, true},
		{"top_k", float64(s.TopK), false},
		{"top_p", s.TopP, true},
		{"min_p", s.MinP, true},
		{"presence_penalty", s.PresencePenalty, true},
		// llama.cpp reads repeat_penalty, not repetition_penalty; the value it
		// resolved is what decides whether the sent 1.0 held.
		{"repeat_penalty", s.RepetitionPenalty, true},
		{"n_predict", float64(req.Cap), false},
	}
}

// Mismatches are the settings the server resolved otherwise than sent for
// a request, from the values it showed (seen, by setting name).
func Mismatches(req protocol.Request, seen map[string]float64) []string {
	var out []string
	for _, x := range Settings(req) {
		got, ok := seen[x.Name]
		if !ok || sameSetting(got, x.Want, x.Float32) {
			continue
		}
		out = append(out, fmt.Sprintf("%s = %v, not the %v sent (%s)", x.Name, got, x.Want, req.ID))
	}
	return out
}

func sameSetting(got, want float64, f32 bool) bool {
	if f32 {
		return float32(got) == float32(want) || math.Abs(got-want) <= 1e-6
	}
	return got == want
}

// Reuse lists the requests that read their user payload from the cache:
// cached_tokens above the fixture's max_shared_prefix_tokens plus the
// boundary allowance. maxShared is by request ID (the bundle's values).
func Reuse(reqs []contract.Request, maxShared map[string]int) measure.ReuseExclusions {
	reuse := measure.ReuseExclusions{}
	for _, q := range reqs {
		limit, ok := maxShared[q.ID]
		if !ok || q.Status == contract.Skipped {
			continue
		}
		if hit, why := measure.CacheReuse(q.Tokens.CachedTokens, limit); hit {
			reuse[q.ID] = why
		}
	}
	return reuse
}

// ReuseList is the reuse map as the result lists it (by request ID).
func ReuseList(reuse measure.ReuseExclusions) []contract.CacheReuse {
	out := []contract.CacheReuse{}
	ids := make([]string, 0, len(reuse))
	for id := range reuse {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		out = append(out, contract.CacheReuse{RequestID: id, Reason: reuse[id]})
	}
	return out
}

// RoundTimings are the concurrency requests' dispatch offsets (from
// outputs.jsonl) and client totals, for measure.Rounds.
func RoundTimings(reqs []contract.Request, outs map[string]contract.Output) map[string]measure.RoundTiming {
	timing := map[string]measure.RoundTiming{}
	for _, q := range reqs {
		o, ok := outs[q.ID]
		switch {
		case !ok || q.Phase != string(protocol.PhaseConcurrency) || o.RoundOffsetS == nil:
		case q.Timings.TotalS != nil:
			timing[q.ID] = measure.RoundTiming{Offset: *o.RoundOffsetS, Total: *q.Timings.TotalS, Dispatched: true}
		default: // dispatched, its end lost (a recovered run)
			timing[q.ID] = measure.RoundTiming{Offset: *o.RoundOffsetS, Dispatched: true, EndUnknown: true}
		}
	}
	return timing
}
