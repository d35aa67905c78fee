package derive

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/power"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// energyRecords: three short requests (one of 1 s, one too short for the
// three-interval rule, one skipped) and a concurrency round of two
// overlapping requests, at a constant 100 W every 0.1 s.
func energyRecords() (*contract.Results, map[string]contract.Output, []power.Reading) {
	req := func(id, phase, caseID, status string, total float64, decode int64) contract.Request {
		r := contract.Request{ID: id, Phase: phase, CaseID: caseID, Status: status}
		if status != contract.Skipped {
			r.Timings.TotalS, r.Tokens.DecodeTokens = f64(total), i64(decode)
		}
		return r
	}
	res := &contract.Results{Requests: []contract.Request{
		req("performance-short-r1", "performance", "short", contract.Completed, 1, 150),
		req("performance-short-r2", "performance", "short", contract.Completed, 0.2, 10),
		req("performance-short-r3", "performance", "short", contract.Skipped, 0, 0),
		req("concurrency-r1-c1", "concurrency", "short-burst", contract.Completed, 1, 0),
		req("concurrency-r1-c2", "concurrency", "short-burst", contract.Completed, 1, 0),
	}}
	res.Run.OptionalConcurrency = true
	res.ConcurrencyRounds = []contract.Round{{Round: 1, RequestIDs: []string{"concurrency-r1-c1", "concurrency-r1-c2"}, OutputTokens: i64(300)}}
	outs := map[string]contract.Output{
		"performance-short-r1": {OffsetS: f64(0)}, "performance-short-r2": {OffsetS: f64(2)},
		"concurrency-r1-c1": {OffsetS: f64(3)}, "concurrency-r1-c2": {OffsetS: f64(3.5)},
	}
	var rs []power.Reading
	for i := -10; i <= 50; i++ {
		rs = append(rs, power.Reading{T: float64(i) / 10, GPU: 0, W: 100})
	}
	return res, outs, rs
}

// TestEnergyPerRequestAndRound: joules per request over its window, decode
// tokens per joule, the per-case summary with its exclusions, and one
// energy per concurrency round, never split among its requests.
func TestEnergyPerRequestAndRound(t *testing.T) {
	t.Parallel()
	res, outs, rs := energyRecords()
	head := contract.Energy{Source: new("nvidia-smi"), IntervalS: f64(0.1), GPUs: []int{0}, Samples: contract.PowerFile, SampleCount: len(rs)}
	e, missing := Energy(head, rs, res, outs, nil)
	if len(e.Requests) != 2 {
		t.Fatalf("requests %+v: a skipped request has no energy and concurrency requests have their round's", e.Requests)
	}
	r1, r2 := e.Requests[0], e.Requests[1]
	if r1.Joules == nil || !near(*r1.Joules, 100) || !near(*r1.DecodeTokensPerJoule, 1.5) || *r1.WindowS != 1 {
		t.Errorf("r1: %+v", r1)
	}
	if r2.Joules != nil || !strings.Contains(missing["/extensions/energy/requests/1/joules"], "shorter than 3 sampling intervals") ||
		!strings.HasPrefix(missing["/extensions/energy/requests/1/decode_tokens_per_joule"], "joules is null: ") {
		t.Errorf("r2 (0.2 s at 0.1 s intervals): %+v %q", r2, missing["/extensions/energy/requests/1/joules"])
	}
	if e.IdleW == nil || *e.IdleW != 100 {
		t.Errorf("idle %v", e.IdleW)
	}
	s := e.Summary("short", contract.MetricJoules)
	if s == nil || s.N != 1 || *s.Median != *r1.Joules || s.Unit != "J" || len(s.Excluded) != 2 ||
		!strings.HasPrefix(s.Excluded[0].Reason, "joules is null: the window is 0.2 s") || s.Excluded[1].Reason != "skipped" {
		t.Errorf("short joules summary %+v", s)
	}
	if e.Summary("prompt-4k", contract.MetricDecodeTokensPerJoule).N != 0 || missing["/extensions/energy/summaries/2/median"] == "" {
		t.Error("a case without requests has n=0 and its nulls a reason")
	}
	// The round runs from 3 s to 4.5 s: 150 J at 100 W, 300 tokens.
	if len(e.Rounds) != 1 || !near(*e.Rounds[0].Joules, 150) || !near(*e.Rounds[0].WindowS, 1.5) || !near(*e.Rounds[0].OutputTokensPerJoule, 2) {
		t.Errorf("rounds %+v", e.Rounds)
	}
}

// TestEnergyNotMeasured: without a source every value is null, each with
// the reason.
func TestEnergyNotMeasured(t *testing.T) {
	t.Parallel()
	res, outs, _ := energyRecords()
	e, missing := Energy(EnergyNotMeasured("no GPU was probed"), nil, res, outs, nil)
	if e.IdleW != nil || e.Requests[0].Joules != nil || e.Rounds[0].Joules != nil {
		t.Fatalf("%+v", e)
	}
	for _, p := range []string{"/extensions/energy/interval_s", "/extensions/energy/idle_w", "/extensions/energy/requests/0/joules", "/extensions/energy/rounds/0/joules"} {
		if !strings.HasPrefix(missing[p], "not measured: no GPU was probed") {
			t.Errorf("%s: %q", p, missing[p])
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestEnergyRatesStayFinite: a draw within range but so small that the
// window's joules are near zero (1e-320 W) gives no tokens per joule, with
// the reason, instead of an infinity that no results.json can hold.
func TestEnergyRatesStayFinite(t *testing.T) {
	t.Parallel()
	res, outs, rs := energyRecords()
	for i := range rs {
		rs[i].W = 1e-320
	}
	head := contract.Energy{Source: new("nvidia-smi"), IntervalS: f64(0.1), GPUs: []int{0}, Samples: contract.PowerFile, SampleCount: len(rs)}
	e, missing := Energy(head, rs, res, outs, nil)
	if _, err := json.Marshal(e); err != nil {
		t.Fatalf("the energy block cannot be written: %v", err)
	}
	if r := e.Requests[0]; r.Joules == nil || r.DecodeTokensPerJoule != nil || !strings.Contains(missing["/extensions/energy/requests/0/decode_tokens_per_joule"], "too small") {
		t.Errorf("request: %+v, reason %q", r, missing["/extensions/energy/requests/0/decode_tokens_per_joule"])
	}
	if r := e.Rounds[0]; r.OutputTokensPerJoule != nil || !strings.Contains(missing["/extensions/energy/rounds/0/output_tokens_per_joule"], "too small") {
		t.Errorf("round: %+v, reason %q", r, missing["/extensions/energy/rounds/0/output_tokens_per_joule"])
	}
}
