package measure

import (
	"fmt"
	"math"
	"sort"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/protocol"
)

// Median of an even number of samples is the mean of the two middle values.
func Median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// metricValue returns a request's value of a summary metric.
func metricValue(r *contract.Request, metric string) *float64 {
	switch metric {
	case contract.MetricPromptTPS:
		return r.Metrics.PromptTPS
	case contract.MetricDecodeTPS:
		return r.Metrics.DecodeTPS
	case contract.MetricTTFT:
		return r.Timings.TTFTS
	case contract.MetricFirstAnswer:
		return r.Timings.FirstAnswerS
	case contract.MetricTotal:
		return r.Timings.TotalS
	}
	return nil
}

// metricPointer is where a request record holds a summary metric, relative
// to the record: the key of the reason its null has in Nulls.
func metricPointer(metric string) string {
	switch metric {
	case contract.MetricPromptTPS:
		return contract.ReqMetricsPromptTPS
	case contract.MetricDecodeTPS:
		return contract.ReqMetricsDecodeTPS
	case contract.MetricTTFT:
		return contract.ReqTimingsTTFTS
	case contract.MetricFirstAnswer:
		return contract.ReqTimingsFirstAnswerS
	case contract.MetricTotal:
		return contract.ReqTimingsTotalS
	}
	return ""
}

// Nulls are the reasons of the nulls of request records: by request ID,
// then by pointer relative to the record (Accounting.Missing's keys).
type Nulls map[string]map[string]string

// ReuseExclusions maps request IDs to the reason they are left out of the
// summaries whatever their values (cache reuse; derive adds the length
// rule).
type ReuseExclusions map[string]string

// Summaries computes the per-case summaries of the performance stage and,
// when selected, the concurrency stage: all five metrics per case, with the
// included request IDs and every exclusion's reason. nulls give the reason
// a request's metric is null (nil: the exclusion says only that it is).
func Summaries(reqs []contract.Request, reuse ReuseExclusions, optional bool, nulls Nulls) []contract.Summary {
	type group struct {
		phase, caseID string
		concurrency   int
	}
	var groups []group
	for _, c := range protocol.PerformanceCases() {
		groups = append(groups, group{string(protocol.PhasePerformance), c, 1})
	}
	if optional {
		groups = append(groups, group{string(protocol.PhaseConcurrency), protocol.CaseShortBurst, protocol.ConcurrencyClients})
	}
	var out []contract.Summary
	for _, g := range groups {
		for _, metric := range contract.SummaryMetrics() {
			s := contract.Summary{Phase: g.phase, CaseID: g.caseID, Concurrency: g.concurrency, Metric: metric, Unit: contract.Unit(metric)}
			Summarize(&s, reqs, reuse, func(r *contract.Request) (*float64, string) {
				if v := metricValue(r, metric); v != nil {
					return v, ""
				}
				return nil, nulls[r.ID][metricPointer(metric)]
			})
			out = append(out, s)
		}
	}
	return out
}

// Summarize fills s (its phase, case and metric set) from the requests of
// its case: median, min, max and n over the values value gives, with
// every exclusion's reason (skipped, failed, cache reuse, a null value with
// why, a value that is not finite). The speed and the energy summaries
// share it, so a request is left out of both for the same reasons.
func Summarize(s *contract.Summary, reqs []contract.Request, reuse ReuseExclusions, value func(*contract.Request) (*float64, string)) {
	s.IncludedRequestIDs, s.Excluded = []string{}, []contract.Exclusion{}
	var xs []float64
	for i := range reqs {
		r := &reqs[i]
		if r.Phase != s.Phase || r.CaseID != s.CaseID {
			continue
		}
		reason := ""
		switch {
		case r.Status == contract.Skipped:
			reason = "skipped"
			if r.Error != nil {
				reason += ": " + r.Error.Message
			}
		case r.Status == contract.Failed:
			reason = "failed"
			if r.Error != nil {
				reason += " (" + r.Error.Kind + "): " + r.Error.Message
			}
		case reuse[r.ID] != "":
			reason = reuse[r.ID]
		}
		if reason == "" {
			if v, why := value(r); v == nil {
				reason = s.Metric + " is null"
				if why != "" {
					reason += ": " + why
				}
			} else if math.IsNaN(*v) || math.IsInf(*v, 0) {
				reason = s.Metric + " is not finite"
			} else {
				xs = append(xs, *v)
				s.IncludedRequestIDs = append(s.IncludedRequestIDs, r.ID)
				continue
			}
		}
		s.Excluded = append(s.Excluded, contract.Exclusion{RequestID: r.ID, Reason: reason})
	}
	s.N = len(xs)
	if s.N > 0 {
		med, lo, hi := Median(xs), xs[0], xs[0]
		for _, x := range xs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		s.Median, s.Min, s.Max = &med, &lo, &hi
	}
}

// SummaryNullReason explains the null statistics of a summary with n = 0.
func SummaryNullReason(s contract.Summary) string {
	if len(s.Excluded) == 0 {
		return "no request of this case was scheduled"
	}
	return fmt.Sprintf("no valid samples: all %d requests were excluded (see excluded)", len(s.Excluded))
}

// RoundTiming is when a concurrency request was dispatched and ended, in
// seconds from the round's first dispatch (monotonic).
type RoundTiming struct {
	Offset float64
	Total  float64
	// Dispatched is false for a request that was never sent; EndUnknown is
	// set for one the runner lost in flight (a recovered run).
	Dispatched bool
	EndUnknown bool
}

// Rounds computes concurrency_rounds: wall time from the first dispatch to
// the last termination (failed requests' time included), the accepted output
// tokens of completed and capped requests, and their aggregate rate.
func Rounds(reqs []contract.Request, timing map[string]RoundTiming) ([]contract.Round, map[string]string) {
	missing := map[string]string{}
	out := []contract.Round{}
	for round := 1; round <= protocol.ConcurrencyRounds; round++ {
		t := tallyRound(round, reqs, timing)
		if len(t.r.RequestIDs) == 0 {
			continue
		}
		out = append(out, t.finish(len(out), missing))
	}
	return out, missing
}

// roundTally is what one round's requests show.
type roundTally struct {
	r     contract.Round
	total int64 // output tokens of its completed and capped requests
	// countKnown is false when one of those lacks its count, and counted
	// true when there is one.
	countKnown, counted bool
	// end is its last termination, of the requests dispatched (if any);
	// endUnknown is set when one was lost in flight.
	end                    float64
	dispatched, endUnknown bool
}

// tallyRound reads the requests of one round.
func tallyRound(round int, reqs []contract.Request, timing map[string]RoundTiming) roundTally {
	t := roundTally{r: contract.Round{Round: round, RequestIDs: []string{}}, countKnown: true}
	for i := range reqs {
		q := &reqs[i]
		if q.Phase != string(protocol.PhaseConcurrency) || q.Round == nil || *q.Round != round {
			continue
		}
		t.r.RequestIDs = append(t.r.RequestIDs, q.ID)
		if q.Status == contract.Failed {
			t.r.Failed++
		}
		if rt, ok := timing[q.ID]; ok && rt.Dispatched {
			t.dispatched = true
			t.endUnknown = t.endUnknown || rt.EndUnknown
			t.end = math.Max(t.end, rt.Offset+rt.Total)
		}
		if q.Status == contract.Completed || q.Status == contract.Truncated {
			t.counted = true
			if q.Tokens.OutputTokens == nil {
				t.countKnown = false
			} else {
				t.total += *q.Tokens.OutputTokens
			}
		}
	}
	return t
}

// finish is the round, the idx-th of concurrency_rounds, with its wall
// time, output tokens and aggregate rate, each null with its reason in
// missing where the requests cannot give it.
func (t roundTally) finish(idx int, missing map[string]string) contract.Round {
	r := t.r
	switch {
	case t.endUnknown:
		missing[contract.Pointer("concurrency_rounds", idx, "wall_s")] = "a request of this round was in flight when the runner stopped: the round's end is unknown"
	case t.dispatched:
		r.WallS = &t.end
	default:
		missing[contract.Pointer("concurrency_rounds", idx, "wall_s")] = "no request of this round was dispatched"
	}
	switch {
	case !t.counted:
		missing[contract.Pointer("concurrency_rounds", idx, "output_tokens")] = "no request of this round completed or reached the cap"
	case !t.countKnown:
		missing[contract.Pointer("concurrency_rounds", idx, "output_tokens")] = "a completed or capped request of this round lacks usage.completion_tokens"
	default:
		r.OutputTokens = &t.total
	}
	switch {
	case r.OutputTokens == nil || r.WallS == nil:
		missing[contract.Pointer("concurrency_rounds", idx, "aggregate_tps")] = "output_tokens or wall_s is null"
	case *r.WallS == 0:
		missing[contract.Pointer("concurrency_rounds", idx, "aggregate_tps")] = "wall_s is 0"
	default:
		v := float64(*r.OutputTokens) / *r.WallS
		r.AggregateTPS = &v
	}
	return r
}

// Samples returns the values a summary was made of, in the order of its
// included request IDs: what a chart draws as dots beside the median.
func Samples(r *contract.Results, s *contract.Summary) []float64 {
	if s == nil {
		return nil
	}
	byID := make(map[string]*contract.Request, len(r.Requests))
	for i := range r.Requests {
		byID[r.Requests[i].ID] = &r.Requests[i]
	}
	var out []float64
	for _, id := range s.IncludedRequestIDs {
		if q := byID[id]; q != nil {
			if v := metricValue(q, s.Metric); v != nil {
				out = append(out, *v)
			}
		}
	}
	return out
}
