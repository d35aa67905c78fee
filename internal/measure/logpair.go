package measure

import (
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
)

// LogPairs are a run's records paired with the per-request timer lines of
// the run's part of its engine log (contract.EngineLogOfRun), each timed
// record with the first line not yet paired that has its counts and
// times (dialect.MatchLog), in the records' order.
type LogPairs struct {
	// From is the log's line where the run's part begins; Whole whether
	// no cut left lines of it out.
	From  int
	Whole bool
	// Unlogged are the timed records no line pairs with.
	Unlogged []Unlogged
	// Extra are the lines no record pairs with, in the log's order.
	Extra []dialect.LogRequest
	// Untimed is how many dispatched requests have no engine timings.
	Untimed int
}

// Unlogged is a timed record no timer line of the log pairs with: its
// index in the records and its timers.
type Unlogged struct {
	Index  int
	Timers dialect.LogTimers
}

// PairLog pairs the dispatched records (outputs by request ID) with the
// engine log's timer lines; false when the dialect's log prints none or
// the run's part holds none (a lower verbosity), which says nothing of the
// records.
func PairLog(d dialect.Dialect, log []byte, reqs []contract.Request, outs map[string]contract.Output) (LogPairs, bool) {
	logged, from, whole := runLines(d, log)
	if len(logged) == 0 {
		return LogPairs{}, false
	}
	p := LogPairs{From: from, Whole: whole}
	used := make([]bool, len(logged))
	for i, q := range reqs {
		o, found := outs[q.ID]
		if !found || o.Status == contract.Skipped {
			continue
		}
		t, timed := d.LogTimersOf(o.Timings)
		if !timed {
			p.Untimed++
			continue
		}
		if j := dialect.MatchLog(logged, used, t); j >= 0 {
			used[j] = true
		} else {
			p.Unlogged = append(p.Unlogged, Unlogged{Index: i, Timers: t})
		}
	}
	for j, l := range logged {
		if !used[j] {
			p.Extra = append(p.Extra, l)
		}
	}
	return p, true
}

// runLines are the per-request timer lines of the run's part of an engine
// log in this dialect's words (none where strata reads none of its log),
// with where that part begins and whether no cut left lines of it out.
func runLines(d dialect.Dialect, log []byte) (logged []dialect.LogRequest, from int, whole bool) {
	if len(log) == 0 {
		return nil, 0, true
	}
	run, from, whole := contract.EngineLogOfRun(log)
	logged, _ = d.LogRequests(run)
	return logged, from, whole
}
