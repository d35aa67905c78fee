package power

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/probe"
)

// NVML is the part of NVIDIA's management library the sampler uses: an
// interface, so the tests need no stand-in library.
type NVML interface {
	// PowerW is the draw of the device at index, in watts.
	PowerW(index int) (float64, error)
	Close() error
}

// OpenNVML loads NVML (nil: this process loads none).
type OpenNVML func() (NVML, error)

// Inputs are what choosing a source needs to know of the machine.
type Inputs struct {
	// GPUs are the selected device indices; GPUSource is the probe's source
	// of them (which vendor's tool found them).
	GPUs      []int
	GPUSource string
	Runner    probe.Runner
	NVML      OpenNVML
	Interval  time.Duration
}

// Choose picks the first source that can measure this machine's GPUs:
// NVML, else nvidia-smi streaming, for NVIDIA; amd-smi for AMD;
// powermetrics on Apple silicon when it runs without a password. With
// none, it returns the reason, naming what was tried.
func Choose(ctx context.Context, in Inputs) (Source, string) {
	if in.Interval <= 0 {
		in.Interval = DefaultInterval
	}
	if len(in.GPUs) == 0 {
		return nil, "no GPU was probed, so there is no GPU power to sample"
	}
	switch vendor(in.GPUSource) {
	case "nvidia":
		return nvidia(in)
	case "amd":
		return amd(ctx, in)
	case "apple":
		return apple(ctx, in)
	}
	return nil, fmt.Sprintf("no power source reads the GPUs found by %s", in.GPUSource)
}

// vendor is whose GPUs the probe's source found ("" for none a power
// source reads).
func vendor(gpuSource string) string {
	switch {
	case strings.HasPrefix(gpuSource, "nvidia-smi"):
		return "nvidia"
	case strings.HasPrefix(gpuSource, "amd-smi"), strings.HasPrefix(gpuSource, "rocm-smi"):
		return "amd"
	case strings.HasPrefix(gpuSource, "sysctl"):
		return "apple"
	}
	return ""
}

// Sources are the names of the sources Choose may pick, sampling every
// interval, for the GPUs gpuSource found (every source strata has when
// gpuSource is "", as a folder that does not say where its GPUs came
// from): what a result's energy source may be.
func Sources(gpuSource string, interval time.Duration) []string {
	by := map[string][]string{
		"nvidia": {nvmlSource{}.Name(), (&smiStream{interval: interval}).Name()},
		"amd":    {amdSMI{}.Name()},
		"apple":  {(&powermetrics{interval: interval}).Name()},
	}
	if v := vendor(gpuSource); gpuSource != "" {
		return by[v]
	}
	return slices.Concat(by["nvidia"], by["amd"], by["apple"])
}

func nvidia(in Inputs) (Source, string) {
	var tried []string
	if in.NVML != nil {
		lib, err := in.NVML()
		if err == nil {
			return nvmlSource{lib: lib, gpus: in.GPUs}, ""
		}
		tried = append(tried, "NVML: "+err.Error())
	} else {
		tried = append(tried, "NVML: this process loads no NVML")
	}
	if st, ok := in.Runner.(probe.Streamer); ok {
		return &smiStream{st: st, interval: in.Interval}, ""
	}
	tried = append(tried, "nvidia-smi: this process streams no tool")
	return nil, "no NVIDIA power source: " + strings.Join(tried, "; ")
}

// --- NVML -----------------------------------------------------------------

type nvmlSource struct {
	lib  NVML
	gpus []int
}

func (nvmlSource) Name() string { return "NVML nvmlDeviceGetPowerUsage" }

func (n nvmlSource) Read(ctx context.Context, tick <-chan time.Time, emit func(int, float64)) error {
	// The readings are taken by the time NVML shuts down: its error
	// changes none of them.
	defer func() { _ = n.lib.Close() }()
	return poll(ctx, tick, func() error {
		for _, gpu := range n.gpus {
			w, err := n.lib.PowerW(gpu)
			if err != nil {
				return fmt.Errorf("NVML power of GPU %d: %w", gpu, err)
			}
			emit(gpu, w)
		}
		return nil
	})
}

// poll calls read once per tick until ctx ends or read fails.
func poll(ctx context.Context, tick <-chan time.Time, read func() error) error {
	for {
		if err := read(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
		}
	}
}

// --- nvidia-smi, streaming ---------------------------------------------------

type smiStream struct {
	st       probe.Streamer
	interval time.Duration
}

func (s *smiStream) args() []string {
	return []string{"--query-gpu=index,power.draw", "--format=csv,noheader,nounits", "-lms", strconv.FormatInt(max(1, s.interval.Milliseconds()), 10)}
}

func (s *smiStream) Name() string { return "nvidia-smi " + strings.Join(s.args(), " ") }

func (s *smiStream) Read(ctx context.Context, tick <-chan time.Time, emit func(int, float64)) error {
	return streamLines(ctx, s.st, "nvidia-smi", s.args(), tick, func(line string) error {
		if line == "" {
			return nil
		}
		gpu, w, err := smiLine(line)
		if err == nil {
			emit(gpu, w)
		}
		return err
	})
}

// streamLines runs a streaming tool and hands each trimmed line to line,
// LinesPerTick per tick at most, until ctx ends (nil), line fails, or the
// tool stops on its own (a sampler that stops is an error: the run is not
// over).
func streamLines(ctx context.Context, st probe.Streamer, name string, args []string, tick <-chan time.Time, line func(string) error) error {
	out, err := st.Stream(ctx, name, args...)
	if err != nil {
		return err
	}
	// Closing stops the tool on purpose: what it says then is nothing
	// the readings depend on.
	defer func() { _ = out.Close() }()
	sc := bufio.NewScanner(out)
	for n := 1; sc.Scan(); n++ {
		if n > LinesPerTick {
			select {
			case <-ctx.Done():
				return nil
			case <-tick:
				n = 1
			}
		}
		if err := line(strings.TrimSpace(sc.Text())); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return fmt.Errorf("%s stopped sampling", name)
}

// smiLine reads "0, 61.20". A line that says otherwise ([N/A], [Not
// Supported]) stops the source: a reading it cannot take is no reading.
// A number that is no draw (nan, -5, 1e999) is the sampler's to drop.
func smiLine(line string) (int, float64, error) {
	idx, draw, ok := strings.Cut(line, ",")
	gpu, err1 := strconv.Atoi(strings.TrimSpace(idx))
	w, ok2 := number(strings.TrimSpace(draw))
	if !ok || err1 != nil || !ok2 {
		return 0, 0, fmt.Errorf("nvidia-smi wrote %q where an index and a power.draw in watts belong", line)
	}
	return gpu, w, nil
}

// number reads a tool's number; one beyond float64 is ±Inf (the sampler
// drops it, counted, rather than the source stopping).
func number(s string) (float64, bool) {
	w, err := strconv.ParseFloat(s, 64)
	return w, err == nil || errors.Is(err, strconv.ErrRange)
}

// --- AMD -------------------------------------------------------------------

type amdSMI struct{ r probe.Runner }

func (amdSMI) Name() string { return "amd-smi metric --power --json" }

func amd(ctx context.Context, in Inputs) (Source, string) {
	if in.Runner == nil {
		return nil, "amd-smi: this process runs no tools"
	}
	if _, err := amdPower(ctx, in.Runner); err != nil {
		return nil, "amd-smi metric --power: " + err.Error()
	}
	return amdSMI{r: in.Runner}, ""
}

func (a amdSMI) Read(ctx context.Context, tick <-chan time.Time, emit func(int, float64)) error {
	return poll(ctx, tick, func() error {
		got, err := amdPower(ctx, a.r)
		// A tool cut short because the run ended is no failure of the
		// source: it reads nothing more, and poll ends at ctx's end.
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("amd-smi metric --power: %w", err)
		}
		for _, g := range got {
			emit(g.gpu, g.w)
		}
		return nil
	})
}

type reading struct {
	gpu int
	w   float64
}

// amdPower reads one answer of amd-smi metric --power --json: per GPU its
// socket power, as a number or as {"value", "unit": "W"} (ROCm 6 and 7
// write either; some name it current_ or average_socket_power).
func amdPower(ctx context.Context, r probe.Runner) ([]reading, error) {
	out, err := r.Run(ctx, "amd-smi", "metric", "--power", "--json")
	if err != nil {
		return nil, err
	}
	var doc []struct {
		GPU   int                        `json:"gpu"`
		Power map[string]json.RawMessage `json:"power"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("the answer is not the expected JSON list: %w", err)
	}
	var got []reading
	for _, d := range doc {
		w, ok := socketPower(d.Power)
		if !ok {
			return nil, fmt.Errorf("GPU %d reports no socket power in watts", d.GPU)
		}
		got = append(got, reading{d.GPU, w})
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("the answer lists no GPU")
	}
	return got, nil
}

func socketPower(p map[string]json.RawMessage) (float64, bool) {
	for _, k := range []string{"socket_power", "current_socket_power", "average_socket_power"} {
		raw, ok := p[k]
		if !ok {
			continue
		}
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return number(n.String())
		}
		var v struct {
			Value *json.Number `json:"value"`
			Unit  string       `json:"unit"`
		}
		if json.Unmarshal(raw, &v) == nil && v.Value != nil && v.Unit == "W" {
			return number(v.Value.String())
		}
	}
	return 0, false
}

// --- Apple silicon ------------------------------------------------------------

type powermetrics struct {
	st       probe.Streamer
	interval time.Duration
}

func (p *powermetrics) args() []string {
	return []string{"-n", "powermetrics", "--samplers", "gpu_power", "-i", strconv.FormatInt(max(1, p.interval.Milliseconds()), 10)}
}

func (p *powermetrics) Name() string { return "sudo " + strings.Join(p.args(), " ") }

// apple admits powermetrics only when it runs without a password: sudo
// -n fails at once instead of asking.
func apple(ctx context.Context, in Inputs) (Source, string) {
	if in.Runner == nil {
		return nil, "powermetrics: this process runs no tools"
	}
	pm := &powermetrics{interval: in.Interval}
	if _, err := in.Runner.Run(ctx, "sudo", append(pm.args(), "-n", "1")...); err != nil {
		return nil, "powermetrics needs root and cannot run without a password (sudo -n): " + err.Error()
	}
	st, ok := in.Runner.(probe.Streamer)
	if !ok {
		return nil, "powermetrics: this process streams no tool"
	}
	pm.st = st
	return pm, ""
}

// Read takes each "GPU Power: 1234 mW" line as GPU 0's draw (Apple silicon
// has one GPU).
func (p *powermetrics) Read(ctx context.Context, tick <-chan time.Time, emit func(int, float64)) error {
	return streamLines(ctx, p.st, "sudo", p.args(), tick, func(line string) error {
		rest, ok := strings.CutPrefix(line, "GPU Power:")
		if !ok {
			return nil // powermetrics writes headers and other samplers' lines between readings
		}
		mw, cut := strings.CutSuffix(strings.TrimSpace(rest), "mW")
		w, ok := number(strings.TrimSpace(mw))
		if !cut || !ok {
			return fmt.Errorf("powermetrics wrote %q where a GPU power in mW belongs", line)
		}
		emit(0, w/1000)
		return nil
	})
}
