package derive

import (
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/measure"
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

// Run derives the summaries, rounds, counts and quality of a result from
// its records. nullReason, when set, says why a request's metric is null
// (the summaries' exclusion reasons); the validator, which checks which
// requests are excluded rather than the words, passes nil.
func Run(res *contract.Results, outs map[string]contract.Output, maxShared map[string]int, nullReason func(id, metric string) string) Derived {
	if nullReason == nil {
		nullReason = func(string, string) string { return "" }
	}
	d := Derived{Reuse: Reuse(res.Requests, maxShared), Missing: map[string]string{}, Rounds: []contract.Round{}}
	optional := res.Run.OptionalConcurrency
	d.Summaries = measure.Summaries(res.Requests, d.Reuse, optional, nullReason)
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
