package benchrun

import (
	"context"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/power"
	"github.com/strata-bench/strata/internal/record"
)

// powerRun is the GPUs' power sampler of one run, or why there is none.
type powerRun struct {
	s        *power.Sampler
	interval time.Duration
	none     record.PowerTrace
	out      Printer
}

// startPower starts sampling the run's GPUs and waits for the idle
// baseline: the readings before the warm-up, with the engine loaded and
// nothing sent. A machine without a power source is said once, with why.
func (b *bench) startPower(ctx context.Context) *powerRun {
	p := b.p
	var gpus []int
	for _, g := range b.facts.Hardware.GPUs {
		gpus = append(gpus, g.DeviceIndex)
	}
	interval := p.PowerInterval
	if interval <= 0 {
		interval = power.DefaultInterval
	}
	src, why := power.Choose(ctx, power.Inputs{GPUs: gpus, GPUSource: b.facts.Extensions.MachineSources["gpus"],
		Runner: p.Probe, NVML: p.NVML, Interval: interval})
	if src == nil {
		p.out.Line("energy: not measured (%s)", why)
		return &powerRun{none: record.PowerTrace{GPUs: gpus, Interval: interval, NotMeasured: why}}
	}
	p.out.Line("energy: sampling %s; idle baseline first", src.Name())
	s := power.Start(ctx, src, gpus, interval, p.Clock, nil)
	// Thirty intervals (3 s at the default) for ten readings: a source that
	// stalls delays the warm-up no longer.
	s.WaitBaseline(ctx, power.BaselineReadings, 3*power.BaselineReadings*interval)
	return &powerRun{s: s, interval: interval, out: p.out}
}

// stop ends sampling once a reading follows the run's end (bounded by ten
// intervals, for a source that stalls), says how many readings were
// dropped and why, and returns the trace.
func (r *powerRun) stop(ctx context.Context, end time.Time) *record.PowerTrace {
	if r.s == nil {
		return &r.none
	}
	tr := r.s.StopAfter(ctx, end, 10*r.interval)
	if said := contract.DroppedText(tr.Dropped); said != "" {
		r.out.Line("energy: %s", said)
	}
	return &tr
}
