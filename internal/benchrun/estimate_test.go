package benchrun

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/liveline"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
)

// tap keeps what a screen last showed: its status line and its last
// permanent line.
type tap struct {
	mu           sync.Mutex
	status, line string
}

func (w *tap) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := string(b)
	switch {
	case strings.HasPrefix(s, "\r\033[K"):
		w.status = strings.TrimPrefix(s, "\r\033[K")
	case strings.HasSuffix(s, "\n"):
		w.line = strings.TrimSuffix(s, "\n")
	}
	return len(b), nil
}

func (w *tap) last() (status, line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, w.line
}

// shownLeft reads the time-left figure of a line ("~1m30s left") in
// seconds; the bound of earlier versions ("≤ 2h44m left") is read alike.
var shownLeft = regexp.MustCompile(`(?:~|≤ )(\d+ s|\d+m\d\ds|\d+h\d\dm) left`)

func leftIn(line string) (float64, bool) {
	m := shownLeft.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	return clockSeconds(m[1]), true
}

// clockSeconds reads clockText's forms back.
func clockSeconds(s string) float64 {
	if n, ok := strings.CutSuffix(s, " s"); ok {
		v, _ := strconv.Atoi(n)
		return float64(v)
	}
	var a, b int
	if strings.HasSuffix(s, "s") {
		_, _ = fmt.Sscanf(s, "%dm%ds", &a, &b)
		return float64(a*60 + b)
	}
	_, _ = fmt.Sscanf(s, "%dh%dm", &a, &b)
	return float64(a*3600 + b*60)
}

// scriptedEngine is how a scripted llama-server answers a run: how long
// its first request waits before the prefill (the model loading), how long
// it reads a prompt of n tokens and writes each token after one, how much
// each request writes, and how many requests it serves at once.
type scriptedEngine struct {
	load   time.Duration
	prompt func(n int) time.Duration
	token  func(n int) time.Duration
	writes func(q protocol.Request) (n int, capped bool)
	slots  int
}

// sample is one estimate a screen showed: when, during which request
// (its position), and the figure in seconds.
type sample struct {
	at   time.Time
	pos  int
	left float64
}

// twoScreens drives a terminal's progress and a pipe's together, on one
// clock, and collects the terminal's estimates; at each request's end the
// pipe's line must show the terminal's figure.
type twoScreens struct {
	t          *testing.T
	clk        *fakeClock
	live, pipe *progress
	liveOut    *tap
	pipeOut    *tap
	samples    []sample
}

func (s *twoScreens) each(f func(p *progress)) { f(s.live); f(s.pipe) }

func (s *twoScreens) look(pos int) {
	st, _ := s.liveOut.last()
	if v, ok := leftIn(st); ok {
		s.samples = append(s.samples, sample{s.clk.now(), pos, v})
	}
}

// ended checks the pipe's line of a request that ended against the
// terminal's status line.
func (s *twoScreens) ended(id string) {
	st, _ := s.liveOut.last()
	_, line := s.pipeOut.last()
	for !strings.Contains(line, id) { // the pipe's last line may be a warning
		s.t.Fatalf("the pipe's last line is not %s's: %q", id, line)
	}
	lv, lok := leftIn(st)
	pv, pok := leftIn(line)
	if lok != pok || lv != pv {
		s.t.Errorf("%s: the pipe shows %q, the terminal %q", id, line, st)
	}
}

// outcome is a request's stream as the scripted engine ends it.
func (eng scriptedEngine) outcome(e *record.Request, wait time.Duration, n int, capped bool) (*record.Outcome, time.Duration, time.Duration) {
	input := e.Fixture.InputTokens
	pre := eng.prompt(input)
	dec := time.Duration(n) * eng.token(input)
	first := wait + pre + eng.token(input)
	stop := "stop"
	if capped {
		stop = "length"
	}
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d}`, input, n)
	timings := fmt.Sprintf(`{"cache_n":0,"prompt_n":%d,"prompt_ms":%.3f,"predicted_n":%d,"predicted_ms":%.3f,"predicted_per_second":%.6f}`,
		input, pre.Seconds()*1000, n, dec.Seconds()*1000, float64(n)/dec.Seconds())
	o := &record.Outcome{TTFT: f64(first.Seconds()), Total: (wait + pre + dec).Seconds(), FinishReason: &stop,
		Usage: []byte(usage), Timings: []byte(timings)}
	return o, first, wait + pre + dec
}

// one runs a request alone: dispatch, the prefill (after the load on the
// first), its tokens, its end.
func (s *twoScreens) one(eng scriptedEngine, e *record.Request, pos int, wait time.Duration) {
	s.each(func(p *progress) { p.Begin(e.Req.ID, 0, 0) })
	s.look(pos)
	n, capped := eng.writes(e.Req)
	o, first, total := eng.outcome(e, wait, n, capped)
	s.clk.add(first)
	s.look(pos)
	// A delta every 16 tokens: a terminal is drawn at most ten times a
	// second, and the estimate reads the engine's counts.
	tok := eng.token(e.Fixture.InputTokens)
	for i := 0; i < n; i += 16 {
		s.each(func(p *progress) { p.Event(e.Req.ID, record.EvAnswer) })
		s.clk.add(time.Duration(min(16, n-1-i)) * tok)
		s.look(pos)
	}
	s.clk.add(total - first - time.Duration(n-1)*tok)
	e.Outcome = o
	s.each(func(p *progress) { p.End(e.Req.ID, e) })
	s.ended(e.Req.ID)
	s.look(pos)
	s.each(func(p *progress) { p.Checked(e) })
}

// round runs a concurrency round: with one slot its requests queue and
// are answered one after another; with more, together, each at a third
// of the speed.
func (s *twoScreens) round(eng scriptedEngine, batch []*record.Request, pos int) {
	for _, e := range batch {
		s.each(func(p *progress) { p.Begin(e.Req.ID, 0, 0) })
	}
	s.look(pos)
	var longest time.Duration
	for i, e := range batch {
		n, capped := eng.writes(e.Req)
		o, _, total := eng.outcome(e, 0, n, capped)
		if eng.slots > 1 {
			total *= 3
			longest = max(longest, total)
			o.Total = total.Seconds()
			defer func() { // all end together
				e.Outcome = o
				s.each(func(p *progress) { p.End(e.Req.ID, e) })
				s.ended(e.Req.ID)
			}()
			continue
		}
		// Queued behind the ones before it: its client times count from
		// the round's release.
		o.TTFT = f64(*o.TTFT + float64(i)*total.Seconds())
		o.Total = float64(i+1) * total.Seconds()
		s.clk.add(total / 2)
		s.look(pos + i)
		s.clk.add(total - total/2)
		e.Outcome = o
		s.each(func(p *progress) { p.End(e.Req.ID, e) })
		s.ended(e.Req.ID)
	}
	s.clk.add(longest / 2)
	s.look(pos)
	s.clk.add(longest - longest/2)
}

// runScripted runs the whole schedule against eng on both screens and
// returns the terminal's estimates and when the run ended.
func runScripted(t *testing.T, eng scriptedEngine, optional bool) ([]sample, time.Time) {
	t.Helper()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	slots := int64(eng.slots)
	srv := record.Server{Slots: &slots, Dialect: contract.Dialect{Engine: string(dialect.LlamaCpp)}}
	s := &twoScreens{t: t, clk: clk, liveOut: &tap{}, pipeOut: &tap{}}
	s.live = newProgress(liveline.New(s.liveOut, true, func() int { return 300 }, nil), clk.now, nil, srv)
	s.pipe = newProgress(liveline.New(s.pipeOut, false, nil, nil), clk.now, nil, srv)
	plan := schedule(t, optional)
	s.each(func(p *progress) { p.Planned(plan) })
	stage := protocol.Phase("")
	for i := 0; i < len(plan); i++ {
		e := plan[i]
		if e.Req.Phase != stage {
			stage = e.Req.Phase
			s.each(func(p *progress) { p.Stage(stage, protocol.PlannedCount(stage, optional)) })
		}
		if stage == protocol.PhaseConcurrency {
			s.round(eng, plan[i:i+protocol.ConcurrencyClients], i+1)
			i += protocol.ConcurrencyClients - 1
			continue
		}
		wait := time.Duration(0)
		if i == 0 {
			wait = eng.load
		}
		s.one(eng, e, i+1, wait)
	}
	s.each(func(p *progress) { p.finish() })
	return s.samples, clk.now()
}

// perToken is a prefill whose every token costs base more the longer the
// prompt already is (attention), as an engine's does.
func perToken(rate float64) func(n int) time.Duration {
	return func(n int) time.Duration {
		return time.Duration(float64(n) / rate * (1 + float64(n)/16384) * float64(time.Second))
	}
}

// TestEstimateTracksTheRun: from the fifth request on, every estimate a
// terminal shows, E, and the time the run really had left, R, satisfy
// R/2 − 15 s ≤ E ≤ 2R + 15 s, for engines that answer short, that write
// to every cap, and that reason past the performance cap but stop before
// the sanity cap; and a pipe's line at each request's end shows the
// terminal's figure.
func TestEstimateTracksTheRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		eng      scriptedEngine
		optional bool
	}{
		{"a thinker on a CPU whose model loads on the first request", scriptedEngine{
			load: 40 * time.Second, prompt: perToken(2000), token: func(int) time.Duration { return 20 * time.Millisecond },
			writes: func(protocol.Request) (int, bool) { return 5, false }, slots: 1}, true},
		{"a slow model that writes to every cap", scriptedEngine{
			load: 5 * time.Second, prompt: perToken(300),
			token: func(n int) time.Duration {
				return time.Duration(float64(100*time.Millisecond) * (1 + float64(n)/32768))
			},
			writes: func(q protocol.Request) (int, bool) { return q.Cap, true }, slots: 1}, true},
		{"a slow model on four slots", scriptedEngine{
			prompt: perToken(300),
			token: func(n int) time.Duration {
				return time.Duration(float64(100*time.Millisecond) * (1 + float64(n)/32768))
			},
			writes: func(q protocol.Request) (int, bool) { return q.Cap, true }, slots: 4}, true},
		{"a reasoning model that stops before the sanity cap", scriptedEngine{
			prompt: perToken(800), token: func(int) time.Duration { return 50 * time.Millisecond },
			writes: func(q protocol.Request) (int, bool) {
				if q.Phase != protocol.PhaseSanity {
					return q.Cap, true
				}
				return map[byte]int{'I': 900, 'R': 1200, 'T': 800}[q.CaseID[0]], false
			}, slots: 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			samples, end := runScripted(t, c.eng, c.optional)
			checked, wrong := 0, 0
			var worst string
			for _, s := range samples {
				if s.pos < 5 {
					continue
				}
				checked++
				r := end.Sub(s.at).Seconds()
				if s.left < r/2-15 || s.left > 2*r+15 {
					wrong++
					if worst == "" {
						worst = fmt.Sprintf("during request %d, %s before the end, the estimate was %s", s.pos, clockText(r), clockText(s.left))
					}
				}
			}
			if checked < 20 {
				t.Fatalf("only %d estimates from the fifth request on", checked)
			}
			if wrong > 0 {
				t.Errorf("%d of %d estimates out of R/2 - 15 s ... 2R + 15 s; the first: %s", wrong, checked, worst)
			}
		})
	}
}

// TestEstimateLeft holds each part of the estimate on its own, with
// figures a reader can follow.
func TestEstimateLeft(t *testing.T) {
	t.Parallel()
	perf, sanity, conc := protocol.PhasePerformance, protocol.PhaseSanity, protocol.PhaseConcurrency
	// The warm-up read 30 tokens in 0.01 s and wrote 100 in 1 s, and its
	// client waited 40 s more: the model loaded.
	warmup := finished{phase: protocol.PhaseWarmup, input: 30, cap: 128, read: 30, promptS: 0.01, decoded: 100, decodeS: 1, wrote: 100, total: 41.01}
	// A short request read 30 tokens in 0.01 s and wrote 500 of its 512
	// in 5 s, the exchange taking 0.1 s; a 16K one read 16,000 tokens in
	// 8 s and wrote 512, to its cap, in 10.24 s.
	short := finished{phase: perf, input: 30, cap: 512, read: 30, promptS: 0.01, decoded: 500, decodeS: 5, wrote: 500, total: 5.11}
	long := finished{phase: perf, input: 16000, cap: 512, read: 16000, promptS: 8, decoded: 512, decodeS: 10.24, wrote: 512, capped: true, total: 18.34}
	i1 := finished{phase: sanity, caseID: "I1", cap: 2048, wrote: 2048, capped: true}
	t1 := finished{phase: sanity, caseID: "T1", cap: 2048, wrote: 100}
	for _, c := range []struct {
		name     string
		done     []finished
		todo     []waiting
		parallel float64
		want     timeLeft
		ok       bool
	}{
		{"nothing measured yet", nil, []waiting{{phase: perf, input: 30, cap: 512}}, 1, timeLeft{}, false},
		{"a request with no engine timers measures nothing", []finished{{phase: perf, input: 30, cap: 512, wrote: 5, total: 1}},
			[]waiting{{phase: perf, input: 30, cap: 512}}, 1, timeLeft{}, false},
		// 30/3000 s to read, 100 tokens at 100 tok/s (the warm-up wrote
		// 100 of a smaller cap by itself), and no exchange: the warm-up's
		// 40 s were the model loading.
		{"the engine's rates, not the warm-up's wait", []finished{warmup}, []waiting{{phase: perf, input: 30, cap: 512}}, 1,
			timeLeft{0.01 + 1, 0.01 + 5.12}, true},
		// Same stage: it wrote 500 on average, at 100 tok/s, 0.1 s exchange.
		{"what its stage wrote", []finished{warmup, short}, []waiting{{phase: perf, input: 30, cap: 512}}, 1,
			timeLeft{0.1 + 0.01 + 5, 0.1 + 0.01 + 5.12}, true},
		// Another stage: 500 (stopped by itself) and 512 capped under a
		// cap of 512 would be (512+2048)/2 = 1280 under 2,048; 890 on
		// average. The short prompt's rates apply to a 40-token prompt.
		{"before its stage has a finished request", []finished{short, long}, []waiting{{phase: sanity, input: 40, cap: 2048}}, 1,
			timeLeft{0.1 + 40.0/3000 + 890.0/100, 0.1 + 40.0/3000 + 2048.0/100}, true},
		// A tool call after one that wrote 100 tokens and an instruction
		// that wrote to its cap.
		{"what its sanity category wrote", []finished{short, i1, t1}, []waiting{{phase: sanity, caseID: "T2", input: 30, cap: 2048}}, 1,
			timeLeft{0.1 + 0.01 + 1, 0.1 + 0.01 + 20.48}, true},
		{"its stage's before its category has", []finished{short, i1, t1}, []waiting{{phase: sanity, caseID: "R1", input: 30, cap: 2048}}, 1,
			timeLeft{0.1 + 0.01 + 10.74, 0.1 + 0.01 + 20.48}, true},
		// A 16K prompt at the 16K request's rates (2,000 tok/s, 50 tok/s).
		{"the rates of the nearest prompt size", []finished{short, long}, []waiting{{phase: perf, input: 16384, cap: 512}}, 1,
			timeLeft{0.1 + 16384.0/2000 + 506.0/50, 0.1 + 16384.0/2000 + 512.0/50}, true},
		{"a request in flight has its elapsed time taken off", []finished{short},
			[]waiting{{phase: perf, input: 30, cap: 512, elapsed: 3}, {phase: perf, input: 30, cap: 512}}, 1,
			timeLeft{2.11 + 5.11, 2.23 + 5.23}, true},
		{"and none when it overran", []finished{short}, []waiting{{phase: perf, input: 30, cap: 512, elapsed: 6}}, 1,
			timeLeft{0, 0}, true},
		// Four requests of 5.11 s over the square root of four slots.
		{"a round before one was measured", []finished{short},
			[]waiting{{phase: conc, round: 1, input: 30, cap: 512}, {phase: conc, round: 1, input: 30, cap: 512}}, 4,
			timeLeft{2 * 5.11, 2 * 5.23}, true},
		{"a round after one was measured", append([]finished{short}, round(1, 7, 9)...),
			[]waiting{{phase: conc, round: 2, input: 30, cap: 512, elapsed: 1}, {phase: conc, round: 3, input: 30, cap: 512}}, 4,
			timeLeft{9 - 1 + 9, 2*5.23 - 1 + 2*5.23}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, ok := estimateLeft(c.done, c.todo, c.parallel)
			if ok != c.ok || !near(got.expected, c.want.expected) || !near(got.worst, c.want.worst) {
				t.Errorf("got %+v %v, want %+v %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// round is a finished concurrency round whose requests ended after
// first, first+1, ... and last seconds.
func round(r int, first, last float64) []finished {
	var out []finished
	for i := range protocol.ConcurrencyClients {
		total := first + float64(i)
		if i == protocol.ConcurrencyClients-1 {
			total = last
		}
		out = append(out, finished{phase: protocol.PhaseConcurrency, round: r, input: 30, cap: 512, wrote: 512, capped: true, total: total})
	}
	return out
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestLeftText: one figure; the worst case beside it only when it is
// within a request timeout and says more: a quarter more, and not the same
// text.
func TestLeftText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r                   timeLeft
		wantFigure, wantAlt string
	}{
		{timeLeft{90, 250}, "~1m30s left", ", up to 4m10s"},
		{timeLeft{90, 1800}, "~1m30s left", ", up to 30m00s"},
		{timeLeft{90, 1801}, "~1m30s left", ""},
		{timeLeft{90, 9840}, "~1m30s left", ""},
		{timeLeft{90, 112}, "~1m30s left", ""},
		{timeLeft{90, 113}, "~1m30s left", ", up to 1m53s"},
		{timeLeft{0.2, 0.4}, "~0 s left", ""},
	} {
		if f, w := leftText(c.r, 30*time.Minute); f != c.wantFigure || w != c.wantAlt {
			t.Errorf("leftText(%+v) = %q, %q; want %q, %q", c.r, f, w, c.wantFigure, c.wantAlt)
		}
	}
}

// TestWithoutEngineTimers: an engine that reports no timers is measured
// by the client (the prompt until the first token, the deltas after it),
// but not by the warm-up's first token, which may have waited for the
// model to load: after the warm-up the time left is still being measured,
// after the next request it is shown.
func TestWithoutEngineTimers(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	out := &tap{}
	p := newProgress(liveline.New(out, false, nil, nil), clk.now, nil, record.Server{})
	plan := schedule(t, false)
	p.Planned(plan)
	for i, want := range []string{"", "~"} {
		e := plan[i]
		p.Begin(e.Req.ID, 0, 0)
		clk.add(30 * time.Second)
		for range 10 {
			p.Event(e.Req.ID, record.EvAnswer)
			clk.add(100 * time.Millisecond)
		}
		stop := "stop"
		e.Outcome = &record.Outcome{TTFT: f64(30), Total: 31, FinishReason: &stop}
		p.End(e.Req.ID, e)
		if _, line := out.last(); (want == "") != !strings.Contains(line, "left)") || !strings.Contains(line, want) {
			t.Errorf("after %s: %q", e.Req.ID, line)
		}
	}
}
