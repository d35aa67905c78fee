package derive

import (
	"fmt"
	"math"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/power"
	"github.com/strata-bench/strata/internal/protocol"
)

// Energy derives the energy block from its head (source, interval, GPUs,
// samples artifact, why sampling stopped or never began), the readings and
// the request records: the idle baseline, each dispatched request's
// joules over its dispatch→end window (offset_s to offset_s + total_s, the
// same window the durations use) and decode tokens per joule, the
// performance cases' summaries of both, and each concurrency round's
// joules over the round (never split among its requests). missing holds
// the reasons of its nulls. Assembly and the validator both call it, on
// the same numbers, so they agree exactly.
func Energy(head contract.Energy, readings []power.Reading, res *contract.Results, outs map[string]contract.Output, reuse measure.ReuseExclusions) (contract.Energy, map[string]string) {
	e := head
	e.IdleW, e.Requests, e.Summaries, e.Rounds = nil, []contract.EnergyRequest{}, []contract.Summary{}, []contract.EnergyRound{}
	if e.GPUs == nil {
		e.GPUs = []int{}
	}
	missing := map[string]string{}
	at := func(tokens ...any) string {
		return contract.Pointer(append([]any{"extensions", "energy"}, tokens...)...)
	}
	series := power.ByGPU(readings)
	notMeasured := notMeasuredReason(e, len(readings))
	if e.Source == nil {
		missing[contract.PtrEnergySource] = orReason(notMeasured, "no power source was named")
	}
	interval := 0.0
	if e.IntervalS != nil {
		interval = *e.IntervalS
	} else {
		missing[at("interval_s")] = orReason(notMeasured, "no sampling interval was recorded")
	}
	if notMeasured != "" {
		missing[at("idle_w")] = notMeasured
	} else if idle, why := power.Idle(series, e.GPUs); idle != nil {
		e.IdleW = idle
	} else {
		missing[at("idle_w")] = why
	}
	window := func(from, to float64) (*float64, string) {
		if notMeasured != "" {
			return nil, notMeasured
		}
		j, why := power.Window(series, e.GPUs, from, to, interval)
		if j == nil && e.Stopped != "" {
			why += " (the power source stopped: " + e.Stopped + ")"
		}
		return j, why
	}
	joules, perJoule, reasons := energyRequests(&e, res, outs, window, func(i int, field, why string) { missing[at("requests", i, field)] = why })
	e.Summaries = energySummaries(res, reuse, [2]map[string]*float64{joules, perJoule}, reasons,
		func(i int, field, why string) { missing[at("summaries", i, field)] = why })
	e.Rounds = energyRounds(res, outs, window, func(i int, field, why string) { missing[at("rounds", i, field)] = why })
	return e, missing
}

// notMeasuredReason is why no energy value can be given, for every value
// at once ("" when readings can give them): the source was not measured,
// or it gave no reading (what the sampler dropped and why it stopped said).
func notMeasuredReason(e contract.Energy, readings int) string {
	switch {
	case e.NotMeasured != "":
		return "not measured: " + e.NotMeasured
	case readings == 0:
		why := "not measured: the power source gave no reading"
		if d := contract.DroppedText(e.Dropped); d != "" {
			why += " the sampler kept: " + d
		}
		if e.Stopped != "" {
			why += " (" + e.Stopped + ")"
		}
		return why
	}
	return ""
}

// energySummaries are the performance cases' summaries of joules and
// decode tokens per joule (values[0] and values[1], their reasons by
// request ID), with the null reasons of an empty one.
func energySummaries(res *contract.Results, reuse measure.ReuseExclusions, values [2]map[string]*float64, reasons map[string][2]string,
	miss func(i int, field, why string)) []contract.Summary {
	out := []contract.Summary{}
	for _, c := range protocol.PerformanceCases() {
		for k, metric := range []string{contract.MetricJoules, contract.MetricDecodeTokensPerJoule} {
			s := contract.Summary{Phase: string(protocol.PhasePerformance), CaseID: c, Concurrency: 1, Metric: metric, Unit: EnergyUnit(metric)}
			measure.Summarize(&s, res.Requests, reuse, func(r *contract.Request) (*float64, string) {
				return values[k][r.ID], reasons[r.ID][k]
			})
			if s.N == 0 {
				for _, f := range []string{"median", "min", "max"} {
					miss(len(out), f, measure.SummaryNullReason(s))
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// energyRequests fills e.Requests: each dispatched request outside the
// concurrency stage, its window, joules and decode tokens per joule. It
// returns both values and their null reasons by request ID, for the
// summaries.
func energyRequests(e *contract.Energy, res *contract.Results, outs map[string]contract.Output, window func(from, to float64) (*float64, string),
	miss func(i int, field, why string)) (joules, perJoule map[string]*float64, reasons map[string][2]string) {
	joules, perJoule, reasons = map[string]*float64{}, map[string]*float64{}, map[string][2]string{}
	for _, q := range res.Requests {
		if q.Phase == string(protocol.PhaseConcurrency) || q.Status == contract.Skipped {
			continue
		}
		i := len(e.Requests)
		er := contract.EnergyRequest{RequestID: q.ID}
		o := outs[q.ID]
		var jWhy, tWhy string
		if o.OffsetS == nil || q.Timings.TotalS == nil {
			jWhy = "the request's dispatch→end window is not known (no offset_s or total_s)"
			miss(i, "window_s", jWhy)
		} else {
			er.WindowS = ptr(*q.Timings.TotalS)
			er.Joules, jWhy = window(*o.OffsetS, *o.OffsetS+*q.Timings.TotalS)
		}
		switch {
		case er.Joules == nil:
			tWhy = "joules is null: " + jWhy
			miss(i, "joules", jWhy)
		case q.Tokens.DecodeTokens == nil:
			tWhy = "the engine's decode_tokens is null"
		default:
			er.DecodeTokensPerJoule, tWhy = tokensPerJoule(*q.Tokens.DecodeTokens, *er.Joules, "the window's")
		}
		if tWhy != "" {
			miss(i, "decode_tokens_per_joule", tWhy)
		}
		joules[q.ID], perJoule[q.ID], reasons[q.ID] = er.Joules, er.DecodeTokensPerJoule, [2]string{jWhy, tWhy}
		e.Requests = append(e.Requests, er)
	}
	return joules, perJoule, reasons
}

// energyRounds is each concurrency round's energy, from its first dispatch
// to its last end, and its output tokens (concurrency_rounds') per joule.
func energyRounds(res *contract.Results, outs map[string]contract.Output, window func(from, to float64) (*float64, string), miss func(i int, field, why string)) []contract.EnergyRound {
	out := []contract.EnergyRound{}
	for _, rd := range res.ConcurrencyRounds {
		i := len(out)
		er := contract.EnergyRound{Round: rd.Round}
		from, to, ok := roundSpan(res, outs, rd)
		var why string
		if !ok {
			why = "the round's first dispatch or last end is not known"
			miss(i, "window_s", why)
		} else {
			er.WindowS = ptr(to - from)
			er.Joules, why = window(from, to)
		}
		switch {
		case er.Joules == nil:
			miss(i, "joules", why)
			miss(i, "output_tokens_per_joule", "joules is null: "+why)
		case rd.OutputTokens == nil:
			miss(i, "output_tokens_per_joule", "the round's output_tokens is null")
		default:
			var why string
			if er.OutputTokensPerJoule, why = tokensPerJoule(*rd.OutputTokens, *er.Joules, "the round's"); why != "" {
				miss(i, "output_tokens_per_joule", why)
			}
		}
		out = append(out, er)
	}
	return out
}

// tokensPerJoule is tokens per joule of whose energy, or nil with why: none
// for no energy, and none for energy so near zero that the quotient is
// beyond any number results.json can hold.
func tokensPerJoule(tokens int64, joules float64, whose string) (*float64, string) {
	if joules <= 0 {
		return nil, whose + " energy is 0 J"
	}
	q := float64(tokens) / joules
	if math.IsInf(q, 0) {
		return nil, fmt.Sprintf("%s energy, %g J, is too small to divide by", whose, joules)
	}
	return &q, ""
}

// roundSpan is a round's first dispatch and last end on the run's clock;
// ok is false when a dispatched request's end is unknown.
func roundSpan(res *contract.Results, outs map[string]contract.Output, rd contract.Round) (from, to float64, ok bool) {
	in := map[string]bool{}
	for _, id := range rd.RequestIDs {
		in[id] = true
	}
	seen := false
	for _, q := range res.Requests {
		o := outs[q.ID]
		if !in[q.ID] || q.Status == contract.Skipped || o.OffsetS == nil {
			continue
		}
		if q.Timings.TotalS == nil {
			return 0, 0, false
		}
		start, end := *o.OffsetS, *o.OffsetS+*q.Timings.TotalS
		if !seen || start < from {
			from = start
		}
		if !seen || end > to {
			to = end
		}
		seen = true
	}
	return from, to, seen
}

// EnergyUnit is the unit of an energy summary's metric.
func EnergyUnit(metric string) string {
	if metric == contract.MetricJoules {
		return "J"
	}
	return "tok/J"
}

func orReason(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// EnergyNotMeasured is the head of a run that sampled nothing, and why.
func EnergyNotMeasured(why string) contract.Energy {
	return contract.Energy{NotMeasured: why, GPUs: []int{}}
}
