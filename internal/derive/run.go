package derive

import (
	"math"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
)

// Derived is everything of a result that is a function of its request
// records and outputs.jsonl.
type Derived struct {
	Reuse     measure.ReuseExclusions
	Summaries []contract.Summary
	Rounds    []contract.Round
	Counts    contract.RequestCounts
	Quality   contract.Quality
	// Missing holds the reasons of the nulls among summaries and rounds.
	Missing map[string]string
}

// FromRecords derives the summaries, rounds, counts and quality of a result from
// its records. nulls, when given, say why a request's metric is null (the
// summaries' exclusion reasons); the validator, which checks which
// requests are excluded rather than the words, passes nil.
func FromRecords(res *contract.Results, outs map[string]contract.Output, maxShared map[string]int, nulls measure.Nulls) Derived {
	d := Derived{Reuse: Reuse(res.Requests, maxShared), Missing: map[string]string{}, Rounds: []contract.Round{}}
	optional := res.Run.OptionalConcurrency
	d.Summaries = measure.Summaries(res.Requests, excluded(res.Requests, d.Reuse), optional, nulls)
	for i, s := range d.Summaries {
		if s.N == 0 {
			why := measure.SummaryNullReason(s)
			for _, f := range []string{"median", "min", "max"} {
				d.Missing[contract.Pointer("summaries", i, f)] = why
			}
		}
	}
	if optional {
		rounds, m := measure.Rounds(res.Requests, RoundTimings(res.Requests, outs))
		d.Rounds = rounds
		for k, v := range m {
			d.Missing[k] = v
		}
	}
	d.Counts = Counts(res.Requests, optional)
	d.Quality = Quality(res.Requests)
	return d
}

// excluded are the requests the speed summaries leave out whatever their
// values: those that read their user payload from the cache, and those
// whose measured input length breaks the 2 % rule (the engine did not read
// the protocol's prompt, so its speed is not the case's).
func excluded(reqs []contract.Request, reuse measure.ReuseExclusions) measure.ReuseExclusions {
	out := measure.ReuseExclusions{}
	for id, why := range reuse {
		out[id] = why
	}
	for _, q := range reqs {
		if _, ok := out[q.ID]; ok || q.Status == contract.Skipped {
			continue
		}
		if bad, why := measure.LengthViolation(q.CaseID, q.Tokens.InputTokens); bad {
			out[q.ID] = why
		}
	}
	return out
}

// Durations are the run's required_duration_s and optional_duration_s from
// the trace in outputs.jsonl, the monotonic clock's: required runs from the
// warm-up's dispatch to the end of the last required request that was sent,
// optional from the concurrency stage's first dispatch to its last
// termination. A request's dispatch is its offset_s, its end that plus its
// client total_s; a request whose end was lost (a recovered run) counts to
// its dispatch. missing holds the reasons of the nulls. The writer computes
// them from the values it writes, so the validator gets the same numbers.
func Durations(reqs []contract.Request, outs map[string]contract.Output, optional bool) (required, opt *float64, missing map[string]string) {
	missing = map[string]string{}
	type span struct {
		start, end float64
		any        bool
	}
	var req, con span
	for _, q := range reqs {
		o, ok := outs[q.ID]
		if !ok || o.OffsetS == nil || q.Status == contract.Skipped {
			continue
		}
		end := *o.OffsetS
		if q.Timings.TotalS != nil {
			end += *q.Timings.TotalS
		}
		sp := &req
		if q.Phase == string(protocol.PhaseConcurrency) {
			sp = &con
		}
		if !sp.any {
			sp.start, sp.end, sp.any = *o.OffsetS, end, true
			continue
		}
		sp.start, sp.end = math.Min(sp.start, *o.OffsetS), math.Max(sp.end, end)
	}
	if req.any {
		required = ptr(req.end - req.start)
	} else {
		missing[contract.PtrRunRequiredDurationS] = "no required request was dispatched"
	}
	switch {
	case !optional:
		missing[contract.PtrRunOptionalDurationS] = contract.NotApplicable("the optional concurrency stage was not selected")
	case !con.any:
		missing[contract.PtrRunOptionalDurationS] = "no request of the optional concurrency stage was dispatched"
	default:
		opt = ptr(con.end - con.start)
	}
	return required, opt, missing
}

func ptr[T any](v T) *T { return &v }
