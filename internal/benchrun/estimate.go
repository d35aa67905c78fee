package benchrun

import (
	"math"

	"github.com/strata-bench/strata/internal/protocol"
)

// finished is what one finished request measured: its engine's prefill
// and decode (the counts and timers of its record, as strata records
// them), what it wrote and whether its cap stopped it, and the client's
// time from dispatch to its end.
type finished struct {
	phase      protocol.Phase
	caseID     string
	round      int
	input, cap int
	// read tokens in promptS seconds of prefill, decoded tokens in
	// decodeS seconds (0: not measured).
	read, promptS    float64
	decoded, decodeS float64
	wrote            float64
	capped           bool
	total            float64
}

// waiting is a request that has not ended: its stage, its frozen input
// count and its cap, and, once dispatched, the seconds since.
type waiting struct {
	phase      protocol.Phase
	caseID     string
	round      int
	input, cap int
	elapsed    float64
}

// timeLeft is what a run is expected to take still and its worst case
// (every remaining request writing to its cap), in seconds.
type timeLeft struct{ expected, worst float64 }

// sizeBand is how far (a factor of e^0.5, about 1.65) the prompts whose
// measurements a rate pools may be from the nearest measured size.
const sizeBand = 0.5

// estimateLeft is the time the requests in todo are expected to take at
// what the finished ones (done) measured: each request's prompt at the
// engine's prefill rate for prompts of its size, the tokens it is expected
// to write at the engine's decode rate after such a prompt, and the
// client's least time beyond the engine's timers (the exchange); a
// request in flight has its elapsed time taken off. A concurrency round
// takes what a finished round took, or, before one has, its four
// requests' time over the square root of the server's parallel slots:
// what slots gain is unknown until a round is measured (from nothing, on
// an engine the computation bounds, to their number), and the geometric
// middle is within a factor of two of either end. ok is false until a
// request has measured both rates.
func estimateLeft(done []finished, todo []waiting, parallel float64) (left timeLeft, ok bool) {
	m := model{done: done}
	if m.rate(0, prefill) == 0 || m.rate(0, decode) == 0 {
		return timeLeft{}, false
	}
	type round struct {
		one     timeLeft
		elapsed float64
	}
	rounds := map[int]*round{}
	type kind struct {
		phase      protocol.Phase
		cat        protocol.Category
		input, cap int
	}
	costs := map[kind]timeLeft{} // the schedule repeats a few kinds
	for _, w := range todo {
		k := kind{w.phase, category(w.caseID), w.input, w.cap}
		one, known := costs[k]
		if !known {
			one = m.seconds(w)
			costs[k] = one
		}
		if w.phase == protocol.PhaseConcurrency {
			r := rounds[w.round]
			if r == nil {
				r = &round{one: one}
				rounds[w.round] = r
			}
			r.elapsed = max(r.elapsed, w.elapsed)
			continue
		}
		left.expected += max(one.expected-w.elapsed, 0)
		left.worst += max(one.worst-w.elapsed, 0)
	}
	took, measured := m.roundTime()
	for _, r := range rounds {
		share := float64(protocol.ConcurrencyClients) / math.Sqrt(parallel)
		exp, worst := share*r.one.expected, share*r.one.worst
		if measured {
			exp, worst = took, max(worst, took)
		}
		left.expected += max(exp-r.elapsed, 0)
		left.worst += max(worst-r.elapsed, 0)
	}
	return left, true
}

// model reads the finished requests.
type model struct{ done []finished }

// A phase of a request the engine times.
const (
	prefill = iota
	decode
)

// rate is the engine's rate in tokens per second for a phase, pooled over
// the finished requests (concurrency aside: parallel requests share the
// engine) whose prompts are nearest in size to n (0: all of them): both
// rates change with the prompt's length. 0 when none measured it.
func (m model) rate(n int, phase int) float64 {
	near := math.Inf(1)
	dist := func(f finished) float64 {
		if n == 0 {
			return 0
		}
		return math.Abs(math.Log(float64(max(f.input, 1)) / float64(n)))
	}
	measured := func(f finished) (float64, float64, bool) {
		tok, s := f.read, f.promptS
		if phase == decode {
			tok, s = f.decoded, f.decodeS
		}
		return tok, s, tok > 0 && s > 0 && f.phase != protocol.PhaseConcurrency
	}
	for _, f := range m.done {
		if _, _, ok := measured(f); ok {
			near = min(near, dist(f))
		}
	}
	var tok, s float64
	for _, f := range m.done {
		if t, sec, ok := measured(f); ok && dist(f) <= near+sizeBand {
			tok, s = tok+t, s+sec
		}
	}
	if s == 0 {
		return 0
	}
	return tok / s
}

// seconds is the time a request is expected to take, and at most (writing
// to its cap).
func (m model) seconds(w waiting) timeLeft {
	s := m.overhead()
	if w.input > 0 {
		s += float64(w.input) / m.rate(w.input, prefill)
	}
	d := m.rate(w.input, decode)
	return timeLeft{s + m.writes(w)/d, s + float64(w.cap)/d}
}

// overhead is the least time a finished request took beyond its engine's
// timers: the exchange around them. The least, and never the warm-up's,
// because a first request may also wait for the engine to load the model
// (that is what a warm-up is for).
func (m model) overhead() float64 {
	least := math.Inf(1)
	for _, f := range m.done {
		if f.phase != protocol.PhaseConcurrency && f.phase != protocol.PhaseWarmup && f.promptS > 0 && f.decodeS > 0 {
			least = min(least, max(f.total-f.promptS-f.decodeS, 0))
		}
	}
	if math.IsInf(least, 1) {
		return 0
	}
	return least
}

// writes is how many tokens a request is expected to write: what the
// finished requests of its kind wrote on average (a sanity category's:
// instructions, retrieval and tool calls answer at different lengths),
// else its stage's; before one of its stage has finished, what the other
// stages' requests would have written under its cap, each as much as it
// wrote when it stopped by itself, and halfway from there to the cap when
// its own, smaller cap stopped it (it had more to write).
func (m model) writes(w waiting) float64 {
	var kind, stage, other mean
	for _, f := range m.done {
		wrote := min(f.wrote, float64(w.cap))
		switch {
		case f.phase == w.phase && category(f.caseID) == category(w.caseID):
			kind.add(wrote)
			stage.add(wrote)
		case f.phase == w.phase:
			stage.add(wrote)
		case f.capped && f.cap < w.cap:
			other.add((f.wrote + float64(w.cap)) / 2)
		default:
			other.add(wrote)
		}
	}
	for _, a := range []mean{kind, stage, other} {
		if a.n > 0 {
			return a.sum / a.n
		}
	}
	return float64(w.cap)
}

// category is a sanity case's category ("": another stage's case).
func category(caseID string) protocol.Category {
	c, _ := protocol.SanityCategory(caseID) // another stage's case has none
	return c
}

// mean is an average being taken.
type mean struct{ sum, n float64 }

func (a *mean) add(v float64) { a.sum, a.n = a.sum+v, a.n+1 }

// roundTime is the average time a finished concurrency round took, from
// its release to its last request's end.
func (m model) roundTime() (float64, bool) {
	ends, count := map[int]float64{}, map[int]int{}
	for _, f := range m.done {
		if f.phase == protocol.PhaseConcurrency {
			ends[f.round] = max(ends[f.round], f.total)
			count[f.round]++
		}
	}
	var sum, n float64
	for r, c := range count {
		if c == protocol.ConcurrencyClients {
			sum, n = sum+ends[r], n+1
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / n, true
}
