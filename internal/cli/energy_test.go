package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/power"
	"github.com/strata-bench/strata/internal/probe"
	"github.com/strata-bench/strata/internal/probe/probetest"
	"github.com/strata-bench/strata/internal/procstate"
)

// powerMachine is a machine with two NVIDIA GPUs whose nvidia-smi streams
// a recorded power trace (the probes' stand-in).
func powerMachine(t *testing.T) probetest.Recorded {
	return probetest.Recorded{Dir: filepath.Join(repoRoot(t), "internal", "probe", "testdata"),
		Answers: map[string]string{"nvidia-smi --query-gpu": "nvidia-smi-query-2gpu.txt", "nvidia-smi": "nvidia-smi-header.txt"},
		Streams: map[string]string{"nvidia-smi --query-gpu=index,power.draw": "nvidia-smi-power-2gpu.txt"}}
}

// energyRun runs the protocol (with the concurrency stage) against the
// simulator in env and returns its folder and results.
func energyRun(t *testing.T, env procstate.State) (string, *contract.Results, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env.Stdout, env.Stderr = &out, &errb
	if code := Run(context.Background(), []string{"bench", "run", "--simulate", "--optional-concurrency"}, env); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(env.Dir, "bench-results", "*-standard-*"))
	if len(dirs) != 1 {
		t.Fatalf("result folders: %v", dirs)
	}
	data, err := os.ReadFile(filepath.Join(dirs[0], contract.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var res contract.Results
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Extensions.Energy == nil {
		t.Fatal("the run has no energy block")
	}
	return dirs[0], &res, out.String() + errb.String()
}

// TestRunRecordsEnergyFromTheStreamingStandIn: with the stand-in nvidia-smi
// streaming power, a simulated run records joules for every dispatched
// request (and one energy per concurrency round), names the source, keeps
// the samples, and report validates it; tampering with a reading fails.
func TestRunRecordsEnergyFromTheStreamingStandIn(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a simulated run at a tenth of real time")
	}
	work := t.TempDir()
	env := testEnv(t, work, strings.NewReader(""), nil, nil)
	env.Probe = powerMachine(t)
	// A run at a tenth of real time; its shortest request takes several
	// milliseconds, well over three 1 ms sampling intervals.
	env.SimulatorSpeed, env.PowerInterval = 10, time.Millisecond
	dir, res, said := energyRun(t, env)
	e := res.Extensions.Energy
	if want := "nvidia-smi --query-gpu=index,power.draw --format=csv,noheader,nounits -lms 1"; e.SourceName() != want || e.NotMeasured != "" {
		t.Fatalf("source %q (not measured %q), want %q", e.SourceName(), e.NotMeasured, want)
	}
	if !strings.Contains(said, "energy: sampling nvidia-smi") {
		t.Errorf("the run does not say what samples the power:\n%s", said)
	}
	if e.IntervalS == nil || *e.IntervalS != 0.001 || len(e.GPUs) != 2 || e.Samples != contract.PowerFile || e.SampleCount < 2*10 {
		t.Fatalf("head: interval %v gpus %v samples %q × %d", e.IntervalS, e.GPUs, e.Samples, e.SampleCount)
	}
	// The idle baseline is the mean of the readings before the warm-up: the
	// trace's two GPUs idle between 45 and 85 W together.
	if e.IdleW == nil || *e.IdleW < 45 || *e.IdleW > 110 {
		t.Errorf("idle baseline %v W", e.IdleW)
	}
	dispatched := 0
	for _, q := range res.Requests {
		if q.Status != contract.Skipped && q.Phase != "concurrency" {
			dispatched++
		}
	}
	if len(e.Requests) != dispatched || dispatched != 22 {
		t.Fatalf("%d energy requests for %d dispatched", len(e.Requests), dispatched)
	}
	for i, r := range e.Requests {
		if r.Joules == nil || *r.Joules <= 0 {
			t.Errorf("request %s: joules %v (%s)", r.RequestID, r.Joules, res.Missing[contract.Pointer("extensions", "energy", "requests", i, "joules")])
			continue
		}
		// Between the trace's lowest and highest total draw over the window.
		if w := *r.Joules / *r.WindowS; w < 15+13 || w > 85+23 {
			t.Errorf("request %s: mean draw %.1f W outside the trace's range", r.RequestID, w)
		}
		if r.DecodeTokensPerJoule == nil {
			t.Errorf("request %s: no decode tokens per joule", r.RequestID)
		}
	}
	if len(e.Rounds) != 3 {
		t.Fatalf("rounds %+v", e.Rounds)
	}
	for _, rd := range e.Rounds {
		if rd.Joules == nil || rd.OutputTokensPerJoule == nil {
			t.Errorf("round %d: %+v", rd.Round, rd)
		}
	}
	if s := e.Summary("prompt-16k", contract.MetricJoules); s == nil || s.N != 3 || s.Median == nil {
		t.Errorf("prompt-16k joules summary %+v", s)
	}
	rep := runIn(t, work, "", "bench", "report", dir)
	if rep.code != 0 || !strings.Contains(rep.stdout, "valid: ") {
		t.Fatalf("report: exit %d\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
	// The README shows the energy table beside the performance one.
	readme, _ := os.ReadFile(filepath.Join(dir, contract.ReadmeFile))
	_, section, _ := strings.Cut(string(readme), "## Energy (GPU power)")
	section, _, _ = strings.Cut(section, "\n### ")
	if !strings.Contains(string(readme), "## Performance") || !strings.Contains(section, "| prompt-16k | ") || !strings.Contains(section, "n=3) |") ||
		!strings.Contains(section, "| 3 | ") {
		t.Errorf("README energy section:\n%s", section)
	}
	t.Logf("README energy section:%s", section)
	// One changed reading: the artifact's hash and the derived joules both
	// say so.
	p := filepath.Join(dir, contract.PowerFile)
	b, _ := os.ReadFile(p)
	lines := strings.SplitN(string(b), "\n", 3)
	lines[1] = strings.Replace(lines[1], ",0,", ",1,", 1)
	mustWrite(t, p, strings.Join(lines, "\n"))
	rep = runIn(t, work, "", "bench", "report", "-q", dir)
	if rep.code != exitcode.Failed || !strings.Contains(rep.stdout, "changed after the run") || !strings.Contains(rep.stdout, "/extensions/energy/idle_w") {
		t.Fatalf("tampered power.csv: exit %d\n%s", rep.code, rep.stdout)
	}
}

// TestRunWithoutAPowerSourceRecordsWhy: a machine with no GPU tool records
// the energy block as not measured, with the reason on every null, and
// report validates it.
func TestRunWithoutAPowerSourceRecordsWhy(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a full simulated run")
	}
	work := t.TempDir()
	dir, res, said := energyRun(t, testEnv(t, work, strings.NewReader(""), nil, nil))
	e := res.Extensions.Energy
	if e.Source != nil || !strings.Contains(e.NotMeasured, "no GPU was probed") || e.Samples != "" || e.SampleCount != 0 {
		t.Fatalf("energy head %+v", e)
	}
	if !strings.Contains(said, "energy: not measured (no GPU was probed") {
		t.Errorf("the run does not say why energy is not measured:\n%s", said)
	}
	if len(e.Requests) != 22 || len(e.Rounds) != 3 {
		t.Fatalf("%d requests, %d rounds", len(e.Requests), len(e.Rounds))
	}
	for i, r := range e.Requests {
		why := res.Missing[contract.Pointer("extensions", "energy", "requests", i, "joules")]
		if r.Joules != nil || !strings.HasPrefix(why, "not measured: no GPU was probed") {
			t.Errorf("request %s: joules %v, reason %q", r.RequestID, r.Joules, why)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, contract.PowerFile)); err == nil {
		t.Error("a run without readings wrote power.csv")
	}
	rep := runIn(t, work, "", "bench", "report", dir)
	if rep.code != 0 || !strings.Contains(rep.stdout, "valid: ") || !strings.Contains(rep.stdout, "not measured: no GPU was probed") {
		t.Fatalf("report: exit %d\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
}

// energyRunOn runs the protocol on machine at a tenth of real time,
// sampling every millisecond, and returns its working folder, its result
// folder, its results and what it said.
func energyRunOn(t *testing.T, machine probe.Runner) (work, dir string, res *contract.Results, said string) {
	t.Helper()
	if testing.Short() {
		t.Skip("a simulated run at a tenth of real time")
	}
	work = t.TempDir()
	env := testEnv(t, work, strings.NewReader(""), nil, nil)
	env.Probe, env.SimulatorSpeed, env.PowerInterval = machine, 10, time.Millisecond
	dir, res, said = energyRun(t, env)
	return work, dir, res, said
}

// droppedSaid is the dropped counts of a run as its folder records them,
// and whether the run's output said how many readings it dropped.
func droppedSaid(t *testing.T, e *contract.Energy, said string) map[string]int {
	t.Helper()
	n, total := map[string]int{}, 0
	for _, d := range e.Dropped {
		n[d.Reason] += d.Count
		total += d.Count
	}
	if total == 0 || !strings.Contains(said, "energy: "+contract.DroppedText(e.Dropped)+"\n") {
		t.Errorf("the run dropped %d readings (%v) and said:\n%s", total, e.Dropped, said)
	}
	return n
}

// reportValid runs report on dir and fails unless it validates.
func reportValid(t *testing.T, work, dir string) {
	t.Helper()
	if rep := runIn(t, work, "", "bench", "report", dir); rep.code != 0 || !strings.Contains(rep.stdout, "valid: ") {
		t.Fatalf("report: exit %d\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
}

// TestRunKeepsItsResultThroughANaNReading: one "nan" in nvidia-smi's
// readings once lost the whole result ("results.json: json: unsupported
// value: NaN" after every request); it is dropped, counted in the folder
// and said, and report validates the folder.
func TestRunKeepsItsResultThroughANaNReading(t *testing.T) {
	t.Parallel()
	m := powerMachine(t)
	m.Streams = map[string]string{"nvidia-smi --query-gpu=index,power.draw": "nvidia-smi-power-nan.txt"}
	work, dir, res, said := energyRunOn(t, m)
	if n := droppedSaid(t, res.Extensions.Energy, said); n[power.DropNotFinite] == 0 {
		t.Errorf("dropped %v, want the NaN readings counted as %q", res.Extensions.Energy.Dropped, power.DropNotFinite)
	}
	reportValid(t, work, dir)
	readme, _ := os.ReadFile(filepath.Join(dir, contract.ReadmeFile))
	if want := contract.DroppedText(res.Extensions.Energy.Dropped) + "."; !strings.Contains(string(readme), want) {
		t.Errorf("the README does not say %q", want)
	}
}

// flood is an nvidia-smi that writes without pause, every value that is
// no draw among its readings, until it is stopped.
type flood struct{ probetest.Recorded }

func (flood) Stream(ctx context.Context, _ string, _ ...string) (io.ReadCloser, error) {
	return io.NopCloser(&floodReader{ctx: ctx}), nil
}

type floodReader struct {
	ctx  context.Context
	rest []byte
}

func (f *floodReader) Read(p []byte) (int, error) {
	if f.ctx.Err() != nil {
		return 0, io.EOF
	}
	if len(f.rest) == 0 {
		f.rest = []byte("0, nan\n1, inf\n0, 1e308\n1, -5\n0, 2e308\n" + strings.Repeat("0, 61.20\n1, 35.10\n", 64))
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// TestRunWithAFloodingPowerTool: an nvidia-smi that writes without pause
// (one drove strata to 4.4 GB and a power.csv report refused) and writes
// NaN, Inf, 1e308, 2e308 and negative draws among its readings: the run
// keeps a bounded rate of good readings, counts the rest by reason in the
// folder and says so, and report validates the folder.
func TestRunWithAFloodingPowerTool(t *testing.T) {
	t.Parallel()
	work, dir, res, said := energyRunOn(t, flood{powerMachine(t)})
	e := res.Extensions.Energy
	n := droppedSaid(t, e, said)
	for _, why := range []string{power.DropNotFinite, power.DropNegative, power.DropAboveMax, power.DropRate} {
		if n[why] == 0 {
			t.Errorf("no reading dropped as %q: %v", why, e.Dropped)
		}
	}
	reportValid(t, work, dir)
	// Each GPU kept two readings per interval at most, besides the burst.
	data, _ := os.ReadFile(filepath.Join(dir, contract.PowerFile))
	rs, err := power.ParseCSV(data)
	if err != nil {
		t.Fatal(err)
	}
	for g, gs := range power.ByGPU(rs) {
		span := gs[len(gs)-1].T - gs[0].T
		if most := power.BurstReadings + 1 + int(2*span / *e.IntervalS); len(gs) > most {
			t.Errorf("GPU %d kept %d readings over %.3f s, more than the %d the rate allows", g, len(gs), span, most)
		}
	}
}

// TestRunWithNegativeAMDPower: amd-smi reporting a negative socket power
// once gave negative joules in a folder strata's own report refused; the
// readings are dropped, counted and said, and the folder validates.
func TestRunWithNegativeAMDPower(t *testing.T) {
	t.Parallel()
	work, dir, res, said := energyRunOn(t, probetest.Recorded{Dir: filepath.Join(repoRoot(t), "internal", "probe", "testdata"),
		Answers: map[string]string{"amd-smi list": "amd-smi-list.json", "amd-smi static": "amd-smi-static-asic.json",
			"amd-smi metric --power": "amd-smi-metric-power-negative.json"}})
	e := res.Extensions.Energy
	if e.SourceName() != "amd-smi metric --power --json" || e.SampleCount != 0 {
		t.Errorf("source %q, %d readings kept", e.SourceName(), e.SampleCount)
	}
	if n := droppedSaid(t, e, said); n[power.DropNegative] == 0 {
		t.Errorf("dropped %v, want the negative readings counted", e.Dropped)
	}
	reportValid(t, work, dir)
}
