package benchrun

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/liveline"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func schedule(t *testing.T, optional bool) []*record.Request {
	t.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	var out []*record.Request
	for _, r := range protocol.Schedule(optional) {
		f, err := b.Fixture(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &record.Request{Req: r, Fixture: f})
	}
	return out
}

// status is the last status line drawn in out.
func status(out string) string {
	segs := strings.Split(out, "\r\033[K")
	last := segs[len(segs)-1]
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	return last
}

func f64(v float64) *float64 { return &v }

// finish ends a request as a stream of n deltas that took ttft then
// decode, which llama-server's timings report.
func finish(p *progress, clk *fakeClock, e *record.Request, ttft, decode time.Duration, n int) {
	p.Begin(e.Req.ID, 0, 0)
	clk.add(ttft)
	for range n {
		p.Event(e.Req.ID, record.EvAnswer)
		clk.add(decode / time.Duration(n))
	}
	stop := "stop"
	in := e.Fixture.InputTokens
	e.Outcome = &record.Outcome{TTFT: f64(ttft.Seconds()), Total: (ttft + decode).Seconds(), FinishReason: &stop,
		Usage: []byte(fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d}`, in, n)),
		Timings: []byte(fmt.Sprintf(`{"cache_n":0,"prompt_n":%d,"prompt_ms":%g,"predicted_n":%d,"predicted_ms":%g,"predicted_per_second":%g}`,
			in, ttft.Seconds()*1000, n, decode.Seconds()*1000, float64(n)/decode.Seconds()))}
	p.End(e.Req.ID, e)
}

func TestStatusLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	clk := &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	scr := liveline.New(&out, true, func() int { return 50 }, nil)
	one := int64(1)
	p := newProgress(scr, clk.now, nil, record.Server{Slots: &one})
	defer p.finish()
	plan := schedule(t, true)
	p.Planned(plan)
	p.Stage(protocol.PhaseWarmup, 1)
	p.Begin(plan[0].Req.ID, 1, 1)
	if s := status(out.String()); !strings.HasPrefix(s, "1/34 warmup · measuring · warmup prefill 30 tok") {
		t.Errorf("before any rate: %q", s)
	}
	clk.add(time.Second)
	finish(p, clk, plan[0], 200*time.Millisecond, time.Second, 128) // the warm-up ends (Begin again is harmless)

	p.Stage(protocol.PhasePerformance, 9)
	short := plan[1]
	p.Begin(short.Req.ID, 1, 9)
	clk.add(300 * time.Millisecond)
	s := status(out.String())
	// One figure, the expected time (the worst case beside it, within a
	// request timeout); on 50 cells the long words are shortened.
	if !regexp.MustCompile(`^2/34 perf · ~\d+(m\d+s| s)(–\d+(m\d+s| s))? · short r1 prefill 32 tok`).MatchString(s) {
		t.Errorf("position and time left: %q", s)
	}
	p.Event(short.Req.ID, record.EvReasoning)
	for range 40 {
		clk.add(25 * time.Millisecond)
		p.Event(short.Req.ID, record.EvReasoning)
	}
	if s := status(out.String()); !strings.Contains(s, "short r1 think 41 tok") {
		t.Errorf("reasoning: %q", s)
	}
	// The full line, on a wide terminal, has the live rate and the clock.
	var full bytes.Buffer
	p.scr = liveline.New(&full, true, func() int { return 200 }, nil)
	clk.add(200 * time.Millisecond)
	p.mu.Lock()
	p.render()
	p.mu.Unlock()
	if s := status(full.String()); !regexp.MustCompile(`short r1 reasoning 41 tok 33\.3 tok/s · run \d+ s$`).MatchString(s) {
		t.Errorf("wide line: %q", s)
	}
	p.scr = scr

	// Concurrency with one slot: one request in prefill, the rest queued.
	var conc []*record.Request
	for _, e := range plan {
		if e.Req.Phase == protocol.PhaseConcurrency && e.Req.Round == 1 {
			conc = append(conc, e)
		}
	}
	p.End(short.Req.ID, short)
	p.Stage(protocol.PhaseConcurrency, 12)
	var c bytes.Buffer
	p.scr = liveline.New(&c, true, func() int { return 200 }, nil)
	for _, e := range conc {
		p.Begin(e.Req.ID, 0, 0)
	}
	if s := status(c.String()); !strings.HasPrefix(s, "23–26/34 concurrency") || !strings.Contains(s, "c1 prefill 33 tok") || strings.Count(s, "queued") != 3 || !strings.Contains(s, "c4 queued") {
		t.Errorf("one slot, four clients: %q", s)
	}
	// Every status line drawn on the 50-cell screen fits it.
	for _, seg := range strings.Split(out.String(), "\r\033[K") {
		for _, row := range strings.Split(seg, "\n") {
			if w := runewidth.StringWidth(row); w >= 50 {
				t.Errorf("a %d-cell row on a 50-cell terminal: %q", w, row)
			}
		}
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    float64
		want string
	}{{0.4, "0 s"}, {42, "42 s"}, {185, "3m05s"}, {3720, "1h02m"}} {
		if got := clockText(c.s); got != c.want {
			t.Errorf("clockText(%g) = %q, want %q", c.s, got, c.want)
		}
	}
}

// TestLoadingStatus: while an engine loads, a terminal's status line
// counts up against the load timeout (with the hashing beside it); a pipe
// gets one line per change of state.
func TestLoadingStatus(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p, _ := newSession(procstate.State{Stderr: &out, TTY: true, Width: func() int { return 100 }, CacheDir: t.TempDir()})
	h := &prehash{}
	h.doneBytes.Store(3e9)
	h.totalBytes.Store(12e9)
	show := (&target{p: p}).loadingStatus(10*time.Minute, h)
	show("loading (/health answers 503)", 12*time.Second)
	show("loading (/health answers 503)", 13*time.Second)
	if s := status(out.String()); s != "engine loading (/health answers 503) · 13 s of 10m00s load timeout · hashing 25%" {
		t.Errorf("status %q", s)
	}
	out.Reset()
	p, _ = newSession(procstate.State{Stderr: &out, CacheDir: t.TempDir()})
	show = (&target{p: p}).loadingStatus(10*time.Minute, nil)
	show("waiting for the server to answer", 0)
	show("waiting for the server to answer", time.Second)
	show("loading (/health answers 503)", 2*time.Second)
	if got := out.String(); got != "  waiting for the server to answer after 0 s\n  loading (/health answers 503) after 2 s\n" {
		t.Errorf("plain lines %q", got)
	}
}
