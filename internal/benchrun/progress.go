package benchrun

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/liveline"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/result"
)

// progress shows the run as it goes. On a terminal the status line holds
// the overall position (n of 22 or 34), the stage, the request in flight
// with its phase (queued, prefill, reasoning, answer), its tokens so far
// and live rate, the elapsed time and an estimate of the time left; every
// finished request leaves one permanent line. Without a terminal only the
// permanent lines are written. A warning that changes the result's status
// (a refused request, a setting resolved otherwise, cache reuse, the length
// rule) is written when its request ends, with derive's words.
type progress struct {
	scr       *liveline.Screen
	now       func() time.Time
	maxShared map[string]int
	slots     int // the server's slots (0: unknown)
	dialect   dialect.Dialect

	mu     sync.Mutex
	start  time.Time
	stage  protocol.Phase
	plan   []planned
	index  map[string]int // request ID → position in plan
	active map[string]*inFlight
	begun  int // the highest position dispatched so far (1-based)
	done   []finished
	drawn  time.Time // when the status line was last drawn
	ticker *time.Ticker
	quit   chan struct{}
}

// planned is one request of the schedule: its size and cap, and whether it
// has ended.
type planned struct {
	id, caseID string
	phase      protocol.Phase
	round      int
	input, cap int
	ended      bool
}

type inFlight struct {
	pos          int
	began, first time.Time
	reasoning    int // reasoning deltas so far
	answer       int // answer and tool-call deltas so far
}

func newProgress(scr *liveline.Screen, now func() time.Time, maxShared map[string]int, srv record.Server) *progress {
	slots := srv.Slots
	p := &progress{scr: scr, now: now, maxShared: maxShared, dialect: dialect.Of(srv.Dialect), start: now(), index: map[string]int{}, active: map[string]*inFlight{}}
	if slots != nil && *slots > 0 {
		p.slots = int(*slots)
	}
	if scr.Live() {
		// The status line moves on its own during a long prefill, when no
		// event arrives to redraw it.
		p.ticker, p.quit = time.NewTicker(500*time.Millisecond), make(chan struct{})
		go func() {
			for {
				select {
				case <-p.ticker.C:
					p.mu.Lock()
					p.render()
					p.mu.Unlock()
				case <-p.quit:
					return
				}
			}
		}()
	}
	return p
}

func (p *progress) Planned(list []*record.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, e := range list {
		pl := planned{id: e.Req.ID, caseID: e.Req.CaseID, phase: e.Req.Phase, round: e.Req.Round, cap: e.Req.Cap,
			ended: e.SkipReason != ""}
		if e.Fixture != nil {
			pl.input = e.Fixture.InputTokens
		}
		p.plan = append(p.plan, pl)
		p.index[e.Req.ID] = i
	}
}

func (p *progress) Stage(phase protocol.Phase, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage = phase
	p.scr.Printf("== %s: %s", phase, humanize.Count(n, "request", "requests"))
	p.render()
}

func (p *progress) Begin(id string, _, _ int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pos := p.index[id] + 1
	p.active[id] = &inFlight{pos: pos, began: p.now()}
	p.begun = max(p.begun, pos)
	p.render()
}

func (p *progress) Event(id, kind string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.active[id]
	if l == nil {
		return
	}
	switch kind {
	case record.EvReasoning:
		l.reasoning++
	case record.EvAnswer, record.EvToolCall:
		l.answer++
	default:
		return
	}
	now := p.now()
	if l.first.IsZero() {
		l.first = now
	}
	// A terminal redrawn at every token would cost more than the line
	// tells: ten times a second is enough.
	if now.Sub(p.drawn) >= 100*time.Millisecond {
		p.render()
	}
}

func (p *progress) End(id string, e *record.Request) {
	// What the request measured, as its record will hold it, before the
	// lock: a round's four requests end at once.
	var q contract.Request
	if e.Outcome != nil && e.Outcome.Error == nil {
		q, _, _ = result.RequestRecord(e, p.dialect)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.active[id]
	delete(p.active, id)
	i, known := p.index[id]
	if known {
		p.plan[i].ended = true
	}
	o := e.Outcome
	var status string
	switch {
	case o == nil:
		status = contract.Skipped
	case o.Error != nil:
		status = "failed (" + o.Error.Kind + ": " + escape.Line(o.Error.Message) + ")"
	case derive.RequestStatus(true, "", o.FinishReason) == contract.Truncated:
		status = "reached the cap"
	default:
		status = "completed (" + o.Finish() + ")"
	}
	if o != nil && o.Error == nil && l != nil && known {
		p.done = append(p.done, measured(p.plan[i], l, o, q))
	}
	total := 0.0
	if o != nil {
		total = o.Total
	}
	line := fmt.Sprintf("  [%d/%d] %s: %s, %s", i+1, len(p.plan), id, status, humanize.Seconds(total))
	if r, ok := p.left(); ok && !p.scr.Live() {
		figure, worst := leftText(r, protocol.RequestTimeout)
		line += " (" + figure + worst + ")"
	}
	p.scr.Println(line)
	p.render()
}

// Checked hears a request once its record is final (the settings checked):
// its warnings are the result's own reasons for that request.
func (p *progress) Checked(e *record.Request) {
	if e.Outcome == nil {
		return
	}
	for _, r := range result.RequestReasons(e, p.dialect, p.maxShared) {
		p.scr.Printf("  warning: the run will be nonconforming: %s", escape.Line(r.Text))
	}
}

// measured is what a finished request measured: the engine's counts and
// timers as its record holds them; for an engine that reports no timers,
// the client's (the prompt read until the first token, the deltas after it
// decoded in the rest of the request), but not the warm-up's first token,
// which may have waited for the model to load.
func measured(pl planned, l *inFlight, o *record.Outcome, q contract.Request) finished {
	f := finished{phase: pl.phase, caseID: pl.caseID, round: pl.round, input: pl.input, cap: pl.cap, total: o.Total,
		capped: q.Status == contract.Truncated, wrote: float64(l.reasoning + l.answer)}
	t, tm := q.Tokens, q.Timings
	if t.OutputTokens != nil {
		f.wrote = float64(*t.OutputTokens)
	}
	if t.ReadTokens != nil && tm.PromptS != nil {
		f.read, f.promptS = float64(*t.ReadTokens), *tm.PromptS
	} else if o.TTFT != nil && pl.phase != protocol.PhaseWarmup {
		f.read, f.promptS = float64(pl.input), *o.TTFT
	}
	if t.DecodeTokens != nil && tm.DecodeS != nil {
		f.decoded, f.decodeS = float64(*t.DecodeTokens), *tm.DecodeS
	} else if n := l.reasoning + l.answer; o.TTFT != nil && n > 1 {
		f.decoded, f.decodeS = float64(n-1), o.Total-*o.TTFT
	}
	return f
}

// left is the time the run is expected to take still, or false before a
// request has measured the engine's rates (the warm-up measures the
// first).
func (p *progress) left() (timeLeft, bool) {
	now := p.now()
	var todo []waiting
	for _, pl := range p.plan {
		if pl.ended {
			continue
		}
		w := waiting{phase: pl.phase, caseID: pl.caseID, round: pl.round, input: pl.input, cap: pl.cap}
		if l := p.active[pl.id]; l != nil {
			w.elapsed = now.Sub(l.began).Seconds()
		}
		todo = append(todo, w)
	}
	parallel := 1.0
	if p.slots > 1 {
		parallel = float64(min(p.slots, protocol.ConcurrencyClients))
	}
	return estimateLeft(p.done, todo, parallel)
}

// leftText says a time left as one figure, "~1m30s left", and the worst
// case to go beside it, ", up to 4m10s", when that says more (a quarter
// more at least) and is within timeout, the limit a request already holds
// the run to: beyond, it is a figure nobody would wait for ("": none).
func leftText(r timeLeft, timeout time.Duration) (figure, worst string) {
	figure = "~" + clockText(r.expected) + " left"
	if r.worst <= timeout.Seconds() && r.worst >= 1.25*r.expected && clockText(r.worst) != clockText(r.expected) {
		worst = ", up to " + clockText(r.worst)
	}
	return figure, worst
}

// clockText writes seconds as "42 s", "3m05s" or "1h02m".
func clockText(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// render draws the status line: position and time left first, so a narrow
// terminal keeps them, then the request in flight, then the run's clock.
func (p *progress) render() {
	if !p.scr.Live() || len(p.plan) == 0 {
		return
	}
	now := p.now()
	p.drawn = now
	pos := fmt.Sprint(max(p.begun, 1))
	if lo := p.lowestActive(); lo > 0 && lo < p.begun {
		pos = fmt.Sprintf("%d–%d", lo, p.begun) // a round in flight
	}
	head := fmt.Sprintf("%s/%d %s", pos, len(p.plan), p.stage)
	figure, worst := "time left: measuring", ""
	if r, ok := p.left(); ok {
		figure, worst = leftText(r, protocol.RequestTimeout)
	}
	parts := []string{head, figure + worst}
	ids := make([]string, 0, len(p.active))
	for id := range p.active {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return p.active[ids[i]].pos < p.active[ids[j]].pos })
	waiting := 0 // dispatched, no token yet, ahead of this one
	streaming := 0
	for _, id := range ids {
		if !p.active[id].first.IsZero() {
			streaming++
		}
	}
	var flights []string
	for _, id := range ids {
		l := p.active[id]
		pl := p.plan[l.pos-1]
		name := pl.caseID
		if rep := strings.TrimPrefix(id, string(pl.phase)+"-"+pl.caseID+"-"); rep != id {
			name += " " + rep
		}
		if len(ids) > 1 {
			// A round: each client by its own number.
			name = id[strings.LastIndexByte(id, '-')+1:]
		}
		flights = append(flights, strings.TrimSpace(name+" "+p.phaseOf(pl, l, now, &waiting, streaming)))
	}
	if len(flights) > 0 {
		parts = append(parts, strings.Join(flights, " | "))
	}
	line := strings.Join(append(parts, "run "+clockText(now.Sub(p.start).Seconds())), " · ")
	if runewidth.StringWidth(line) >= p.scr.Width() {
		line = strings.Join(parts, " · ") // the run's clock goes first
	}
	if runewidth.StringWidth(line) >= p.scr.Width() {
		parts[1] = figure // then the worst case
		line = strings.Join(parts, " · ")
	}
	if runewidth.StringWidth(line) >= p.scr.Width() {
		// Then the long words, so a narrow terminal keeps the phase.
		line = compact.Replace(line)
	}
	p.scr.Status(line)
}

// compact shortens the status line's long words for a narrow terminal.
var compact = strings.NewReplacer("performance", "perf", "concurrency", "conc", "prompt-16k", "16k", "prompt-4k", "4k",
	"reasoning", "think", "time left: measuring", "measuring", " left", "", " tok/s", "/s")

// lowestActive is the lowest position in flight (0: none).
func (p *progress) lowestActive() int {
	lo := 0
	for _, l := range p.active {
		if lo == 0 || l.pos < lo {
			lo = l.pos
		}
	}
	return lo
}

// phaseOf says where a request in flight is: queued (more requests wait for
// their first token than the server has free slots), prefill (with the
// prompt's size and time), reasoning or answer (tokens and live rate).
func (p *progress) phaseOf(pl planned, l *inFlight, now time.Time, waiting *int, streaming int) string {
	if l.first.IsZero() {
		*waiting++
		if p.slots > 0 && streaming+*waiting > p.slots {
			return "queued " + clockText(now.Sub(l.began).Seconds())
		}
		return fmt.Sprintf("prefill %s tok %s", humanize.Grouped(float64(pl.input), 0), clockText(now.Sub(l.began).Seconds()))
	}
	what, n := "answer", l.answer
	if l.answer == 0 {
		what, n = "reasoning", l.reasoning
	}
	s := fmt.Sprintf("%s %s tok", what, humanize.Grouped(float64(n), 0))
	if el := now.Sub(l.first).Seconds(); el > 0.2 && l.reasoning+l.answer > 1 {
		s += " " + humanize.Rate(float64(l.reasoning+l.answer-1)/el)
	}
	return s
}

func (p *progress) finish() {
	if p.ticker != nil {
		p.ticker.Stop()
		close(p.quit)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scr.Clear()
	p.scr.Printf("run finished in %s", clockText(p.now().Sub(p.start).Seconds()))
}
