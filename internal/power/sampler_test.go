package power

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/contract"
)

// fakeClock advances step (one millisecond when zero) per reading.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(cmp.Or(c.step, time.Millisecond))
	return c.t
}

// tool answers Run from answers (or fails with err) and streams the pipe
// the test writes to.
type tool struct {
	answers map[string]string
	err     error
	pr      *io.PipeReader
	streams []string
	mu      sync.Mutex
}

func (f *tool) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	key := strings.Join(append([]string{name}, args...), " ")
	if a, ok := f.answers[key]; ok {
		return []byte(a), nil
	}
	if f.err != nil {
		return nil, f.err
	}
	return nil, errors.New(name + ": not installed")
}

func (f *tool) Stream(ctx context.Context, name string, args ...string) (io.ReadCloser, error) {
	f.mu.Lock()
	f.streams = append(f.streams, strings.Join(append([]string{name}, args...), " "))
	f.mu.Unlock()
	go func() { <-ctx.Done(); f.pr.CloseWithError(ctx.Err()) }()
	return f.pr, nil
}

// TestNvidiaSmiStream: the stream's lines become readings of the selected
// GPUs, stamped by the clock; a line that is no reading stops the source
// with the line quoted.
func TestNvidiaSmiStream(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	tl := &tool{pr: pr}
	src, why := Choose(context.Background(), Inputs{GPUs: []int{0, 1}, GPUSource: "nvidia-smi --query-gpu", Runner: tl, Interval: 100 * time.Millisecond})
	if src == nil {
		t.Fatal(why)
	}
	if src.Name() != "nvidia-smi --query-gpu=index,power.draw --format=csv,noheader,nounits -lms 100" {
		t.Errorf("name %q", src.Name())
	}
	clk := &fakeClock{}
	s := Start(context.Background(), src, []int{0, 1}, 100*time.Millisecond, clk.now, nil)
	go func() {
		play(pw, "0, 61.20\n1, 35.10\n7, 99.00\n0, 62.00\n1, 36.00\n")
		play(pw, "0, [N/A]\n")
	}()
	s.WaitBaseline(context.Background(), 2, time.Hour)
	<-s.done
	tr := s.Stop()
	if len(tr.Samples) != 4 || tr.Samples[0].W != 61.2 || tr.Samples[1].GPU != 1 || tr.Samples[3].W != 36 {
		t.Fatalf("samples %+v", tr.Samples)
	}
	if !tr.Samples[1].At.After(tr.Samples[0].At) {
		t.Error("readings are stamped by the clock as they arrive")
	}
	if !strings.Contains(tr.Stopped, `"0, [N/A]"`) {
		t.Errorf("stopped %q", tr.Stopped)
	}
	if tl.streams[0] != "nvidia-smi "+strings.Join((&smiStream{interval: 100 * time.Millisecond}).args(), " ") {
		t.Errorf("streamed %v", tl.streams)
	}
}

type fakeNVML struct {
	w      map[int]float64
	closed bool
	mu     sync.Mutex
}

func (f *fakeNVML) PowerW(i int) (float64, error) {
	w, ok := f.w[i]
	if !ok {
		return 0, errors.New("nvmlDeviceGetHandleByIndex_v2 returned 2")
	}
	return w, nil
}

func (f *fakeNVML) Close() error { f.mu.Lock(); f.closed = true; f.mu.Unlock(); return nil }

// TestNVMLPolledPerTick: NVML comes first and is read once per tick of the
// injected ticker; the library is closed when sampling stops.
func TestNVMLPolledPerTick(t *testing.T) {
	t.Parallel()
	lib := &fakeNVML{w: map[int]float64{0: 70.5, 1: 40}}
	src, why := Choose(context.Background(), Inputs{GPUs: []int{0, 1}, GPUSource: "nvidia-smi --query-gpu", NVML: func() (NVML, error) { return lib, nil }})
	if src == nil || src.Name() != "NVML nvmlDeviceGetPowerUsage" {
		t.Fatalf("%v %q", src, why)
	}
	tick := make(chan time.Time)
	ticker := func(time.Duration) (<-chan time.Time, func()) { return tick, func() {} }
	clk := &fakeClock{}
	s := Start(context.Background(), src, []int{0, 1}, DefaultInterval, clk.now, ticker)
	tick <- time.Time{}
	tick <- time.Time{}
	s.WaitBaseline(context.Background(), 3, time.Hour)
	tr := s.Stop()
	if len(tr.Samples) != 6 || tr.Samples[4].W != 70.5 || tr.Samples[5].W != 40 || tr.Stopped != "" {
		t.Fatalf("trace %+v", tr)
	}
	lib.mu.Lock()
	defer lib.mu.Unlock()
	if !lib.closed {
		t.Error("NVML was not closed")
	}
}

// TestChooseSaysWhyNot: each machine without a usable source gets the
// reason, naming what was tried.
func TestChooseSaysWhyNot(t *testing.T) {
	t.Parallel()
	failNVML := func() (NVML, error) { return nil, errors.New("load libnvidia-ml.so.1: not found") }
	noStream := &tool{}
	for _, c := range []struct {
		name string
		in   Inputs
		want string
	}{
		{"no GPU", Inputs{}, "no GPU was probed, so there is no GPU power to sample"},
		{"NVIDIA without NVML or a stream", Inputs{GPUs: []int{0}, GPUSource: "nvidia-smi --query-gpu", NVML: failNVML, Runner: runOnly{noStream}},
			"no NVIDIA power source: NVML: load libnvidia-ml.so.1: not found; nvidia-smi: this process streams no tool"},
		{"AMD without amd-smi", Inputs{GPUs: []int{0}, GPUSource: "rocm-smi --json", Runner: noStream}, "amd-smi metric --power: amd-smi: not installed"},
		{"Apple with a password", Inputs{GPUs: []int{0}, GPUSource: "sysctl (Apple silicon)", Runner: &tool{err: errors.New("sudo: a password is required")}},
			"powermetrics needs root and cannot run without a password (sudo -n): sudo: a password is required"},
		{"Windows", Inputs{GPUs: []int{0}, GPUSource: "the Windows display driver key", Runner: noStream}, "no power source reads the GPUs found by the Windows display driver key"},
	} {
		if src, why := Choose(context.Background(), c.in); src != nil || why != c.want {
			t.Errorf("%s: %v, %q\nwant %q", c.name, src, why, c.want)
		}
	}
}

// runOnly hides a tool's Stream: a Runner that cannot stream.
type runOnly struct{ r *tool }

func (o runOnly) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return o.r.Run(ctx, name, args...)
}

// TestAMDSMI: both shapes of amd-smi's socket power, polled per tick.
func TestAMDSMI(t *testing.T) {
	t.Parallel()
	answer := `[{"gpu": 0, "power": {"socket_power": {"value": 212, "unit": "W"}, "gfx_voltage": {"value": 800, "unit": "mV"}}},
	{"gpu": 1, "power": {"current_socket_power": 35.5}}]`
	tl := &tool{answers: map[string]string{"amd-smi metric --power --json": answer}}
	src, why := Choose(context.Background(), Inputs{GPUs: []int{0, 1}, GPUSource: "amd-smi list / static --asic", Runner: tl})
	if src == nil {
		t.Fatal(why)
	}
	tick := make(chan time.Time)
	s := Start(context.Background(), src, []int{0, 1}, time.Second, (&fakeClock{}).now, func(time.Duration) (<-chan time.Time, func()) { return tick, func() {} })
	s.WaitBaseline(context.Background(), 1, time.Hour)
	tr := s.Stop()
	if len(tr.Samples) != 2 || tr.Samples[0].W != 212 || tr.Samples[1].W != 35.5 {
		t.Fatalf("samples %+v", tr.Samples)
	}
	bad := &tool{answers: map[string]string{"amd-smi metric --power --json": `[{"gpu": 0, "power": {"socket_power": "N/A"}}]`}}
	if src, why := Choose(context.Background(), Inputs{GPUs: []int{0}, GPUSource: "amd-smi list", Runner: bad}); src != nil || why != "amd-smi metric --power: GPU 0 reports no socket power in watts" {
		t.Errorf("N/A socket power: %v %q", src, why)
	}
}

// TestPowermetricsWithoutPassword: powermetrics is used when sudo -n runs
// it; its "GPU Power: N mW" lines are GPU 0's draw in watts.
func TestPowermetricsWithoutPassword(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	tl := &tool{pr: pr, answers: map[string]string{"sudo -n powermetrics --samplers gpu_power -i 100 -n 1": "GPU Power: 1 mW\n"}}
	src, why := Choose(context.Background(), Inputs{GPUs: []int{0}, GPUSource: "sysctl (Apple silicon: one shared-memory GPU named after the chip)", Runner: tl})
	if src == nil || src.Name() != "sudo -n powermetrics --samplers gpu_power -i 100" {
		t.Fatalf("%v %q", src, why)
	}
	s := Start(context.Background(), src, []int{0}, DefaultInterval, (&fakeClock{}).now, nil)
	go play(pw, "*** Sampled system activity\n\n**** GPU usage ****\nGPU HW active frequency: 444 MHz\nGPU Power: 1234 mW\nGPU Power: 56 mW\n")
	s.WaitBaseline(context.Background(), 2, time.Hour)
	tr := s.Stop()
	if len(tr.Samples) != 2 || tr.Samples[0].W != 1.234 || tr.Samples[1].W != 0.056 || tr.Stopped != "" {
		t.Fatalf("trace %+v", tr)
	}
}

// TestStopAfterWaitsForTheRunsEnd: stopping waits for a reading at or
// after the run's end, so the last window's end is covered.
func TestStopAfterWaitsForTheRunsEnd(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	tl := &tool{pr: pr}
	src, _ := Choose(context.Background(), Inputs{GPUs: []int{0}, GPUSource: "nvidia-smi", Runner: tl})
	clk := &fakeClock{}
	s := Start(context.Background(), src, []int{0}, DefaultInterval, clk.now, nil)
	play(pw, "0, 10\n")
	s.WaitBaseline(context.Background(), 1, time.Hour)
	end := clk.now()
	go play(pw, "0, 20\n")
	tr := s.StopAfter(context.Background(), end, time.Hour)
	if len(tr.Samples) != 2 || tr.Samples[1].At.Before(end) {
		t.Fatalf("samples %+v, end %v", tr.Samples, end)
	}
}

// play writes what the tool prints into the pipe that stands for its
// output. Once the source has stopped (a line that is no reading stops it)
// nothing reads the pipe and a write fails, as the real tool's would; the
// tests read the trace, not the writes.
func play(w io.Writer, text string) { _, _ = io.WriteString(w, text) }

// silent is a source that never reads and never ends.
type silent struct{}

func (silent) Name() string { return "silent" }
func (silent) Read(ctx context.Context, _ <-chan time.Time, _ func(int, float64)) error {
	<-ctx.Done()
	return nil
}

// TestWaitBaselineIsBounded: a source that never answers holds the run no
// longer than the bound.
func TestWaitBaselineIsBounded(t *testing.T) {
	t.Parallel()
	s := Start(context.Background(), silent{}, []int{0}, DefaultInterval, (&fakeClock{}).now, nil)
	s.WaitBaseline(context.Background(), BaselineReadings, time.Millisecond)
	if tr := s.Stop(); len(tr.Samples) != 0 || tr.Stopped != "" {
		t.Errorf("trace %+v", tr)
	}
}

// TestNvidiaSmiReadingsOutOfRangeAreDropped: a draw that is no finite
// number within [0, MaxW] is left out and counted by reason, and sampling
// goes on (one NaN among the readings once made results.json unwritable).
func TestNvidiaSmiReadingsOutOfRangeAreDropped(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	src, why := Choose(context.Background(), Inputs{GPUs: []int{0}, GPUSource: "nvidia-smi --query-gpu", Runner: &tool{pr: pr}})
	if src == nil {
		t.Fatal(why)
	}
	s := Start(context.Background(), src, []int{0}, DefaultInterval, (&fakeClock{t: time.Unix(0, 0)}).now, nil)
	go play(pw, "0, 61.20\n0, nan\n0, NaN\n0, inf\n0, -Inf\n0, 2e308\n0, -5\n0, 1e308\n0, 10000.5\n0, 10000\n0, 0\n0, [N/A]\n")
	<-s.done
	tr := s.Stop()
	var got []float64
	for _, x := range tr.Samples {
		got = append(got, x.W)
	}
	if want := []float64{61.2, 10000, 0}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	want := []contract.DroppedReadings{{Reason: DropNotFinite, Count: 5}, {Reason: DropNegative, Count: 1}, {Reason: DropAboveMax, Count: 2}}
	if !slices.Equal(tr.Dropped, want) {
		t.Errorf("dropped %+v, want %+v", tr.Dropped, want)
	}
	if !strings.Contains(tr.Stopped, `"0, [N/A]"`) {
		t.Errorf("stopped %q, want the [N/A] line that is no reading", tr.Stopped)
	}
}

// answerOnce answers amd-smi twice (the choice's check and the first
// poll), then hangs until ctx ends.
type answerOnce struct {
	answer string
	mu     sync.Mutex
	n      int
}

func (a *answerOnce) Run(ctx context.Context, _ string, _ ...string) ([]byte, error) {
	a.mu.Lock()
	a.n++
	n := a.n
	a.mu.Unlock()
	if n <= 2 {
		return []byte(a.answer), nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestAMDSMIReadingsOutOfRangeAreDropped: amd-smi's negative socket power
// (which made negative joules that report then refused) and one beyond
// any device are dropped and counted; the GPU reading a draw is kept.
func TestAMDSMIReadingsOutOfRangeAreDropped(t *testing.T) {
	t.Parallel()
	tl := &answerOnce{answer: `[{"gpu": 0, "power": {"socket_power": -12}}, {"gpu": 1, "power": {"socket_power": {"value": 1e308, "unit": "W"}}},
	{"gpu": 2, "power": {"socket_power": 1e309}}, {"gpu": 3, "power": {"socket_power": 212}}]`}
	src, why := Choose(context.Background(), Inputs{GPUs: []int{0, 1, 2, 3}, GPUSource: "amd-smi list", Runner: tl})
	if src == nil {
		t.Fatal(why)
	}
	never := func(time.Duration) (<-chan time.Time, func()) { return nil, func() {} }
	s := Start(context.Background(), src, []int{0, 1, 2, 3}, time.Second, (&fakeClock{}).now, never)
	<-s.arrived // GPU 3's reading, the last of the poll
	tr := s.Stop()
	if len(tr.Samples) != 1 || tr.Samples[0].GPU != 3 || tr.Samples[0].W != 212 || tr.Stopped != "" {
		t.Errorf("trace %+v", tr)
	}
	want := []contract.DroppedReadings{{Reason: DropNotFinite, Count: 1}, {Reason: DropNegative, Count: 1}, {Reason: DropAboveMax, Count: 1}}
	if !slices.Equal(tr.Dropped, want) {
		t.Errorf("dropped %+v, want %+v", tr.Dropped, want)
	}
}

// burst is a source that emits n readings of GPU 0 as fast as it can, then
// stops.
type burst struct{ n int }

func (burst) Name() string { return "burst" }
func (b burst) Read(_ context.Context, _ <-chan time.Time, emit func(int, float64)) error {
	for range b.n {
		emit(0, 50)
	}
	return errors.New("done")
}

// TestSamplerBoundsTheRate: a tool that writes without pause (one once
// drove strata to 4.4 GB) keeps no more than the rate allows; the rest is
// counted as dropped for the rate.
func TestSamplerBoundsTheRate(t *testing.T) {
	t.Parallel()
	const n = 1000
	clk := &fakeClock{}
	s := Start(context.Background(), burst{n}, []int{0}, DefaultInterval, clk.now, nil)
	<-s.done
	tr := s.Stop()
	// n readings over n ms: the burst allowance, then two per interval.
	if most := BurstReadings + 2*n/int(DefaultInterval/time.Millisecond); len(tr.Samples) > most || len(tr.Samples) < BurstReadings {
		t.Errorf("kept %d of %d readings, want between %d and %d", len(tr.Samples), n, BurstReadings, most)
	}
	want := []contract.DroppedReadings{{Reason: DropRate, Count: n - len(tr.Samples)}}
	if !slices.Equal(tr.Dropped, want) {
		t.Errorf("dropped %+v, want %+v", tr.Dropped, want)
	}
}

// TestSamplerDropsAReadingAtTheSameInstant: a GPU's readings are each
// after the one before (power.csv holds one row per GPU and instant); a
// second reading of the GPU at the same instant is dropped for the rate,
// another GPU's is kept.
func TestSamplerDropsAReadingAtTheSameInstant(t *testing.T) {
	t.Parallel()
	at := time.Unix(100, 0)
	src := emits(func(emit func(int, float64)) { emit(0, 10); emit(0, 11); emit(1, 12) })
	s := Start(context.Background(), src, []int{0, 1}, DefaultInterval, func() time.Time { return at }, nil)
	<-s.done
	tr := s.Stop()
	if len(tr.Samples) != 2 || tr.Samples[0].W != 10 || tr.Samples[1].W != 12 {
		t.Errorf("kept %+v, want GPU 0's first reading and GPU 1's", tr.Samples)
	}
	if want := []contract.DroppedReadings{{Reason: DropRate, Count: 1}}; !slices.Equal(tr.Dropped, want) {
		t.Errorf("dropped %+v, want %+v", tr.Dropped, want)
	}
}

// emits is a source that makes its readings once and stops.
type emits func(emit func(int, float64))

func (emits) Name() string { return "emits" }
func (e emits) Read(_ context.Context, _ <-chan time.Time, emit func(int, float64)) error {
	e(emit)
	return errors.New("done")
}

// TestSamplerCapsTheReadings: however long a run, a GPU's trace holds at
// most MaxReadings; the readings past it are counted as dropped.
func TestSamplerCapsTheReadings(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{step: DefaultInterval}
	s := Start(context.Background(), burst{MaxReadings + 3}, []int{0}, DefaultInterval, clk.now, nil)
	<-s.done
	tr := s.Stop()
	if len(tr.Samples) != MaxReadings {
		t.Errorf("kept %d readings, want %d", len(tr.Samples), MaxReadings)
	}
	if want := []contract.DroppedReadings{{Reason: DropCap, Count: 3}}; !slices.Equal(tr.Dropped, want) {
		t.Errorf("dropped %+v, want %+v", tr.Dropped, want)
	}
	// The reasons name the bounds they are dropped for.
	if !strings.Contains(DropCap, fmt.Sprint(MaxReadings)) || !strings.Contains(DropAboveMax, fmt.Sprint(MaxW)) {
		t.Errorf("%q and %q do not name %d readings and %d W", DropCap, DropAboveMax, MaxReadings, MaxW)
	}
}

// TestSourcesNameWhatChooseChooses: every source Choose picks is among the
// names a result's energy source is held to, for the GPUs' probe source
// and for a folder that does not name one.
func TestSourcesNameWhatChooseChooses(t *testing.T) {
	t.Parallel()
	lib := func() (NVML, error) { return &fakeNVML{}, nil }
	amdAnswer := map[string]string{"amd-smi metric --power --json": `[{"gpu": 0, "power": {"socket_power": 5}}]`}
	for _, c := range []struct {
		gpuSource string
		in        Inputs
	}{
		{"nvidia-smi --query-gpu", Inputs{NVML: lib}},
		{"nvidia-smi --query-gpu", Inputs{Runner: &tool{}}},
		{"rocm-smi --json", Inputs{Runner: &tool{answers: amdAnswer}}},
		{"sysctl (Apple silicon)", Inputs{Runner: &tool{answers: map[string]string{"sudo -n powermetrics --samplers gpu_power -i 250 -n 1": ""}}}},
	} {
		c.in.GPUs, c.in.GPUSource, c.in.Interval = []int{0}, c.gpuSource, 250*time.Millisecond
		src, why := Choose(context.Background(), c.in)
		if src == nil {
			t.Fatalf("%s: %s", c.gpuSource, why)
		}
		for _, gs := range []string{c.gpuSource, ""} {
			if names := Sources(gs, 250*time.Millisecond); !slices.Contains(names, src.Name()) {
				t.Errorf("%q is not among the sources for %q: %v", src.Name(), gs, names)
			}
		}
	}
	if names := Sources("the Windows display driver key", time.Second); len(names) != 0 {
		t.Errorf("GPUs no source reads have sources %v", names)
	}
}

// lineByLine is a streaming tool that writes "0, 61.2" without end, one
// line per read, until it is stopped, and closes overrun once it has
// written past limit lines.
type lineByLine struct {
	mu      sync.Mutex
	ctx     context.Context
	n       int
	limit   int
	overrun chan struct{}
}

func (l *lineByLine) Run(context.Context, string, ...string) ([]byte, error) {
	return nil, errors.New("not run")
}

func (l *lineByLine) Stream(ctx context.Context, _ string, _ ...string) (io.ReadCloser, error) {
	l.mu.Lock()
	l.ctx = ctx
	l.mu.Unlock()
	return io.NopCloser(l), nil
}

func (l *lineByLine) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return 0, io.EOF
	}
	if l.n++; l.n == l.limit+1 {
		close(l.overrun)
	}
	return copy(p, "0, 61.2\n"), nil
}

// TestStreamReadsABoundedNumberOfLinesPerTick: a tool that writes without
// pause is read at most LinesPerTick lines per tick, then waits for the
// next (it blocks on its full pipe), so a flood costs no core spent
// reading it.
func TestStreamReadsABoundedNumberOfLinesPerTick(t *testing.T) {
	t.Parallel()
	tl := &lineByLine{limit: LinesPerTick + 10, overrun: make(chan struct{})}
	src, why := Choose(context.Background(), Inputs{GPUs: []int{0}, GPUSource: "nvidia-smi --query-gpu", Runner: tl})
	if src == nil {
		t.Fatal(why)
	}
	tick := make(chan time.Time)
	s := Start(context.Background(), src, []int{0}, DefaultInterval, (&fakeClock{}).now, func(time.Duration) (<-chan time.Time, func()) { return tick, func() {} })
	select {
	case <-tl.overrun:
		t.Fatalf("read %d lines without a tick", tl.limit+1)
	case tick <- time.Time{}:
	}
	s.Stop()
	// One tick: the lines before it and the ones of that tick, no more.
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.n > 2*LinesPerTick+1 {
		t.Errorf("read %d lines on one tick, want at most %d", tl.n, 2*LinesPerTick+1)
	}
}
