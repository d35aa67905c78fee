package benchrun

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/derive"
	"github.com/strata-bench/strata/internal/display"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/runner"
)

// progress shows the run: on a terminal a live status line (stage, request
// i of N, streamed deltas, elapsed), otherwise one plain line per request.
type progress struct {
	w      io.Writer
	tty    bool
	mu     sync.Mutex
	stage  protocol.Phase
	active map[string]*live
	start  time.Time
	last   time.Time
}

type live struct {
	index, total int
	deltas       int
	began        time.Time
}

func newProgress(w io.Writer, tty bool) *progress {
	return &progress{w: w, tty: tty, active: map[string]*live{}, start: time.Now()}
}

func (p *progress) Stage(phase protocol.Phase, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLine()
	p.stage = phase
	fmt.Fprintf(p.w, "== %s: %d request(s)\n", phase, n)
}

func (p *progress) Begin(id string, i, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active[id] = &live{index: i, total: n, began: time.Now()}
	p.render(id)
}

func (p *progress) Event(id, kind string) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.active[id]
	if l == nil {
		return
	}
	switch kind {
	case client.EvReasoning, client.EvAnswer, client.EvToolCall:
		l.deltas++
	}
	if time.Since(p.last) > 100*time.Millisecond {
		p.render(id)
	}
}

func (p *progress) End(id string, e *runner.Executed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.active[id]
	delete(p.active, id)
	p.clearLine()
	o := e.Outcome
	var status string
	switch {
	case o == nil:
		status = contract.Skipped
	case o.Error != nil:
		status = "failed (" + o.Error.Kind + ": " + display.Line(o.Error.Message) + ")"
	case derive.RequestStatus(true, "", o.FinishReason) == contract.Truncated:
		status = "reached the cap"
	default:
		status = "completed (" + o.Finish() + ")"
	}
	idx := ""
	if l != nil {
		idx = fmt.Sprintf("[%d/%d] ", l.index, l.total)
	}
	total := 0.0
	if o != nil {
		total = o.Total
	}
	fmt.Fprintf(p.w, "  %s%s: %s, %.2f s\n", idx, id, status, total)
}

func (p *progress) render(id string) {
	if !p.tty {
		return
	}
	l := p.active[id]
	if l == nil {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\r\033[K  [%s %d/%d] %s  %d deltas streamed  %.1f s (run %.0f s)",
		p.stage, l.index, l.total, id, l.deltas, time.Since(l.began).Seconds(), time.Since(p.start).Seconds())
}

func (p *progress) clearLine() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLine()
	fmt.Fprintf(p.w, "run finished in %.1f s\n", time.Since(p.start).Seconds())
}
