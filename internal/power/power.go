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
	"sync"
	"time"

	"github.com/strata-bench/strata/internal/clock"
)

// DefaultInterval is how often the GPUs are sampled: nvidia-smi's -lms 100.
const DefaultInterval = 100 * time.Millisecond

// Sample is one GPU's draw, stamped with the clock when it arrived.
type Sample struct {
	At  time.Time
	GPU int
	W   float64
}

// Source is one way of reading the GPUs' draw.
type Source interface {
	// Name is the source as the result names it (the command line, or
	// "NVML").
	Name() string
	// Read delivers readings through emit until ctx ends (nil) or the
	// source fails (the error says why). A polled source reads once per
	// tick; a streaming one ignores tick.
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

// Trace is what a sampler gathered.
type Trace struct {
	Source   string
	Interval time.Duration
	GPUs     []int
	Samples  []Sample
	// Stopped says why the source ended before it was stopped ("" when it
	// ran to the end).
	Stopped string
	// NotMeasured says why there is no source at all ("" when there is).
	NotMeasured string
}

// Sampler runs a source in the background.
type Sampler struct {
	src      Source
	now      clock.Func
	interval time.Duration
	gpus     []int
	cancel   context.CancelFunc
	done     chan struct{}
	// arrived is signalled (without blocking) on every reading.
	arrived chan struct{}

	mu      sync.Mutex
	samples []Sample
	stopped string
}

// Start begins sampling src every interval on the GPUs gpus (a reading of
// another device is dropped). tick nil: the runtime's ticker.
func Start(ctx context.Context, src Source, gpus []int, interval time.Duration, now clock.Func, tick Ticker) *Sampler {
	if tick == nil {
		tick = RealTicker
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{src: src, now: clock.Or(now), interval: interval, gpus: gpus, cancel: cancel,
		done: make(chan struct{}), arrived: make(chan struct{}, 1)}
	want := map[int]bool{}
	for _, g := range gpus {
		want[g] = true
	}
	go func() {
		defer close(s.done)
		c, stop := tick(interval)
		defer stop()
		err := src.Read(ctx, c, func(gpu int, w float64) {
			if !want[gpu] {
				return
			}
			at := s.now()
			s.mu.Lock()
			s.samples = append(s.samples, Sample{At: at, GPU: gpu, W: w})
			s.mu.Unlock()
			select {
			case s.arrived <- struct{}{}:
			default:
			}
		})
		if err != nil && ctx.Err() == nil {
			s.mu.Lock()
			s.stopped = err.Error()
			s.mu.Unlock()
		}
	}()
	return s
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
	per := map[int]int{}
	for _, x := range s.samples {
		per[x.GPU]++
	}
	least := -1
	for _, g := range s.gpus {
		if least < 0 || per[g] < least {
			least = per[g]
		}
	}
	return least
}

// StopAfter waits until every GPU has a reading at or after t (so the
// last window's end is covered), the source stopped, ctx ended or bound
// passed, then stops sampling and returns the trace.
func (s *Sampler) StopAfter(ctx context.Context, t time.Time, bound time.Duration) Trace {
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
	last := map[int]bool{}
	for _, x := range s.samples {
		if !x.At.Before(t) {
			last[x.GPU] = true
		}
	}
	for _, g := range s.gpus {
		if !last[g] {
			return false
		}
	}
	return true
}

// Stop ends sampling and returns the trace.
func (s *Sampler) Stop() Trace {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return Trace{Source: s.src.Name(), Interval: s.interval, GPUs: s.gpus, Samples: s.samples, Stopped: s.stopped}
}
