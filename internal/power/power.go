// Package power samples the selected GPUs' power draw while a run goes and
// turns the samples into energy: joules over a window (the trapezoid over
// the samples, the window's edges interpolated). A Source reads one kind
// of meter (NVML, a streaming nvidia-smi, amd-smi, Apple's powermetrics);
// the Sampler drives it with a context, stamps each reading with the
// injected clock and keeps the trace. Tools run through the probes'
// Runner and Streamer and the NVML library behind an interface, so the
// tests feed recorded outputs and nothing here touches the process.
package power

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/strata-bench/strata/internal/clock"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/record"
)

// DefaultInterval is how often the GPUs are sampled: nvidia-smi's -lms 100.
const DefaultInterval = 100 * time.Millisecond

// LinesPerTick is how many lines of a streaming tool are read per tick
// at most: an interval's lines several times over (nvidia-smi writes one
// per GPU, powermetrics a dozen a sample). Past them the reader waits for
// the next tick, and a tool that writes faster waits on its full pipe: a
// flood costs no core spent reading it.
const LinesPerTick = 64

// MaxW is the most one device is taken to draw: ten kilowatts, several
// times any accelerator's board power. A reading above it is no draw.
const MaxW = 10_000

// MaxReadings is how many readings of one GPU a trace keeps: 14.5 hours
// at the default interval, past the longest run the protocol allows (22
// requests and 3 concurrency rounds of at most 1,800 s each, 12.5 hours).
const MaxReadings = 1 << 19

// BurstReadings is how many readings of a GPU may arrive at once (a
// reader held up for a moment finds them waiting); past them, a GPU keeps
// two readings per interval on average.
const BurstReadings = 20

// Why a reading is dropped rather than kept.
const (
	DropNotFinite = "not a finite number"
	DropNegative  = "a negative draw"
	DropAboveMax  = "above 10000 W, more than any one device draws"
	DropRate      = "faster than two readings of a GPU per sampling interval"
	DropCap       = "past 524288 readings of a GPU"
)

// Source is one way of reading the GPUs' draw.
type Source interface {
	// Name is the source as the result names it (the command line, or
	// "NVML").
	Name() string
	// Read delivers readings through emit until ctx ends (nil) or the
	// source fails (the error says why). A polled source reads once per
	// tick; a streaming one reads LinesPerTick lines per tick at most.
	Read(ctx context.Context, tick <-chan time.Time, emit func(gpu int, w float64)) error
}

// Ticker makes a ticker of period d and its stop (injected, so a test
// ticks by hand).
type Ticker func(d time.Duration) (<-chan time.Time, func())

// RealTicker is the runtime's ticker.
func RealTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Sampler runs a source in the background.
type Sampler struct {
	src      Source
	now      clock.Func
	interval time.Duration
	gpus     []int
	cancel   context.CancelFunc
	done     chan struct{}
	// arrived is signalled (without blocking) on every reading kept.
	arrived chan struct{}

	mu      sync.Mutex
	samples []record.PowerSample
	per     map[int]*gpuState
	dropped map[string]int
	stopped string
}

// gpuState is what the sampler keeps of one GPU to bound its readings.
type gpuState struct {
	n    int       // readings kept
	last time.Time // the last kept reading's stamp
	// tokens is how many readings may arrive now (BurstReadings at most,
	// two more each interval), as of refilled.
	tokens   float64
	refilled time.Time
}

// Start begins sampling src every interval on the GPUs gpus (a reading of
// another device is ignored). tick nil: the runtime's ticker.
func Start(ctx context.Context, src Source, gpus []int, interval time.Duration, now clock.Func, tick Ticker) *Sampler {
	if tick == nil {
		tick = RealTicker
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{src: src, now: clock.Or(now), interval: interval, gpus: gpus, cancel: cancel,
		done: make(chan struct{}), arrived: make(chan struct{}, 1), per: map[int]*gpuState{}, dropped: map[string]int{}}
	for _, g := range gpus {
		s.per[g] = &gpuState{}
	}
	go func() {
		defer close(s.done)
		c, stop := tick(interval)
		defer stop()
		err := src.Read(ctx, c, s.take)
		if err != nil && ctx.Err() == nil {
			s.mu.Lock()
			s.stopped = err.Error()
			s.mu.Unlock()
		}
	}()
	return s
}

// take keeps one reading of gpu, or counts why it is dropped: a value
// that is no draw, one that comes faster than the rate, or one past the
// GPU's MaxReadings (a tool that floods cannot grow the trace without
// bound).
func (s *Sampler) take(gpu int, w float64) {
	g, ok := s.per[gpu]
	if !ok {
		return
	}
	if why := checkDraw(w); why != "" {
		s.mu.Lock()
		s.dropped[why]++
		s.mu.Unlock()
		return
	}
	at := s.now()
	s.mu.Lock()
	why := s.admit(g, at)
	if why != "" {
		s.dropped[why]++
	} else {
		s.samples = append(s.samples, record.PowerSample{At: at, GPU: gpu, W: w})
	}
	s.mu.Unlock()
	if why == "" {
		select {
		case s.arrived <- struct{}{}:
		default:
		}
	}
}

// admit takes a token of g's bucket for a reading at at ("") or says why
// the reading is dropped. A reading not after the GPU's last one is too
// fast however full the bucket: a GPU has one reading an instant.
func (s *Sampler) admit(g *gpuState, at time.Time) string {
	if g.n == 0 {
		g.tokens = BurstReadings
	} else {
		g.tokens = min(BurstReadings, g.tokens+2*float64(at.Sub(g.refilled))/float64(max(s.interval, time.Nanosecond)))
	}
	g.refilled = at
	switch {
	case g.n > 0 && !at.After(g.last), g.tokens < 1:
		return DropRate
	case g.n >= MaxReadings:
		return DropCap
	}
	g.tokens--
	g.n++
	g.last = at
	return ""
}

// checkDraw is the rule for a reading's value: "" when w is a draw (a finite
// number of watts within [0, MaxW]), else why it is dropped.
func checkDraw(w float64) string {
	switch {
	case math.IsNaN(w), math.IsInf(w, 0):
		return DropNotFinite
	case w < 0:
		return DropNegative
	case w > MaxW:
		return DropAboveMax
	}
	return ""
}

// DropReasons are the reasons a reading is dropped, in the order a trace
// counts them.
func DropReasons() []string {
	return []string{DropNotFinite, DropNegative, DropAboveMax, DropRate, DropCap}
}

// BaselineReadings is how many readings of each GPU the idle baseline
// waits for (one second at the default interval).
const BaselineReadings = 10

// WaitBaseline waits until every GPU has n readings, the source stopped,
// ctx ended or bound passed (a source that never answers cannot hold the
// run): the idle baseline taken before the warm-up.
func (s *Sampler) WaitBaseline(ctx context.Context, n int, bound time.Duration) {
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		if s.readingsEach() >= n {
			return
		}
		select {
		case <-s.arrived:
		case <-s.done:
			return
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}

// readingsEach is the fewest readings any GPU has.
func (s *Sampler) readingsEach() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	least := -1
	for _, g := range s.gpus {
		if n := s.per[g].n; least < 0 || n < least {
			least = n
		}
	}
	return least
}

// StopAfter waits until every GPU has a reading at or after t (so the
// last window's end is covered), the source stopped, ctx ended or bound
// passed, then stops sampling and returns the trace.
func (s *Sampler) StopAfter(ctx context.Context, t time.Time, bound time.Duration) record.PowerTrace {
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for !s.coveredAfter(t) {
		select {
		case <-s.arrived:
		case <-s.done:
			return s.Stop()
		case <-ctx.Done():
			return s.Stop()
		case <-timer.C:
			return s.Stop()
		}
	}
	return s.Stop()
}

// coveredAfter says every GPU has a reading at or after t.
func (s *Sampler) coveredAfter(t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.gpus {
		if st := s.per[g]; st.n == 0 || st.last.Before(t) {
			return false
		}
	}
	return true
}

// Stop ends sampling and returns the trace.
func (s *Sampler) Stop() record.PowerTrace {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	var dropped []contract.DroppedReadings
	for _, why := range DropReasons() {
		if n := s.dropped[why]; n > 0 {
			dropped = append(dropped, contract.DroppedReadings{Reason: why, Count: n})
		}
	}
	return record.PowerTrace{Source: s.src.Name(), Interval: s.interval, GPUs: s.gpus, Samples: s.samples, Stopped: s.stopped, Dropped: dropped}
}
