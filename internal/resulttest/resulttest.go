// Package resulttest produces real result folders for tests of the packages
// that read them (manifest, site, compare): the runner against the
// simulated engine, the writer and the redactor, exactly as a run does.
package resulttest

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/folder"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/runner"
	"github.com/strata-bench/strata/internal/simengine"
)

// Kind is the outcome a folder should have.
type Kind int

// The kinds of folder Folder writes.
const (
	Complete      Kind = iota // a conforming, complete run (the engine looks like llama.cpp: Unmarked)
	Partial                   // the engine dies mid-run
	Nonconforming             // the simulator as it is: it says what it is
	Aborted                   // the warm-up fails: every later request is skipped (a small folder)
)

// Options shape a folder.
type Options struct {
	Kind    Kind
	GPU     string // the GPU name recorded
	Quant   string
	Track   string
	Command string // the recorded command (tests plant markup here)
	// TrackNotes and Model (the name the engine reports) are recorded when
	// set; tests plant markup in them too.
	TrackNotes string
	Model      string
	// DecodeTPS sets the simulated speed (different runs, different numbers).
	DecodeTPS float64
	Optional  bool
	// PowerW, when set, records a power trace of GPU 0 drawing about that
	// many watts (a synthetic trace sampled every 0.2 ms, named as NVML is), so
	// the folder has measured energy.
	PowerW float64
	// EngineLog keeps an engine log with the records' timer lines
	// (LlamaLog), as a run keeps the output of the engine it started.
	EngineLog bool
}

// powerTrace is a synthetic trace of GPU 0 around w watts, every 0.2 ms
// from 5 ms before the run's first dispatch to 1 ms after its last end.
func powerTrace(rec *record.Run, w float64) *record.PowerTrace {
	var first, last time.Time
	for _, e := range rec.Requests {
		if e.Outcome == nil {
			continue
		}
		if first.IsZero() || e.Start.Before(first) {
			first = e.Start
		}
		if e.End.After(last) {
			last = e.End
		}
	}
	const every = 200 * time.Microsecond
	tr := &record.PowerTrace{Source: "NVML nvmlDeviceGetPowerUsage", Interval: every, GPUs: []int{0}}
	for i, at := 0, first.Add(-5*time.Millisecond); !at.After(last.Add(time.Millisecond)); i, at = i+1, at.Add(every) {
		tr.Samples = append(tr.Samples, record.PowerSample{At: at, GPU: 0, W: math.Round((w+w/4*math.Sin(float64(i)/7))*100) / 100})
	}
	return tr
}

// Folder writes a result folder under root and returns its path.
func Folder(tb testing.TB, root string, o Options) string {
	tb.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		tb.Fatal(err)
	}
	sc := &simengine.Scenario{Props: map[string]json.RawMessage{"build_info": json.RawMessage(`"b9928-81ff7ab"`)}}
	switch o.Kind {
	case Partial:
		sc.Requests = map[string]simengine.Behaviour{"sanity-R1": {Die: true}}
	case Nonconforming:
		sc.Props = nil
	case Aborted:
		sc.Requests = map[string]simengine.Behaviour{"warmup": {HTTPStatus: 500, ErrorMessage: "the backend is not ready"}}
	}
	if o.DecodeTPS == 0 {
		o.DecodeTPS = 2e5
	}
	if o.Model == "" {
		o.Model = "Qwen3-8B-Q4_K_M.gguf"
	}
	tmpl, _, err := prompts.Template(b)
	if err != nil {
		tb.Fatal(err)
	}
	sim := simengine.New(simengine.Config{PromptTPS: 5e6, DecodeTPS: o.DecodeTPS, ReasoningTokens: 40, Accuracy: 0.85, Slots: 1,
		Template: string(tmpl), ContextTokens: 32768, ModelPath: o.Model, Bundle: b, Scenario: sc})
	var url string
	if o.Kind == Nonconforming {
		var err error
		if url, err = sim.Start("127.0.0.1:0"); err != nil {
			tb.Fatal(err)
		}
		defer func() {
			if err := sim.Close(); err != nil {
				tb.Error(err)
			}
		}()
	} else {
		url = Unmarked(tb, sim)
	}
	rec := runner.Execute(context.Background(), runner.Config{Client: client.New(client.Options{BaseURL: url}), Bundle: b, Optional: o.Optional})
	commit := strings.Repeat("ab", 20)
	sha := strings.Repeat("cd", 32)
	kind := "source"
	gpu := o.GPU
	if gpu == "" {
		gpu = "NVIDIA GeForce RTX 3060"
	}
	mem := int64(12 << 30)
	dedicated := "dedicated"
	facts := record.Facts{
		Protocol:     b.Protocol,
		StrataCommit: &commit, RunnerCommit: &commit, BuildKind: &kind,
		Hardware:   contract.Hardware{GPUs: []contract.GPU{{DeviceIndex: 0, Name: gpu, MemoryBytes: &mem, MemoryKind: &dedicated}}},
		ModelFiles: []contract.ModelFile{{Path: "Qwen3-8B-Q4_K_M.gguf", SHA256: &sha}},
		Missing: map[string]string{"/hardware/gpus/0/power_limit_w": "test", "/hardware/cpu": "test", "/hardware/ram_bytes": "test",
			"/hardware/storage": "test", "/software/os": "test", "/software/drivers": "test", "/software/runtime": "test"},
	}
	id := record.Identity{Track: "custom", Command: "strata bench run --url " + url}
	if o.Track != "" {
		id.Track = o.Track
	}
	if o.Quant != "" {
		id.Quantization = &o.Quant
	}
	if o.Command != "" {
		id.Command = o.Command
	}
	if o.TrackNotes != "" {
		id.TrackNotes = &o.TrackNotes
	}
	if o.PowerW > 0 {
		rec.Power = powerTrace(rec, o.PowerW)
	}
	if o.EngineLog {
		facts.EngineLog = LlamaLog(rec)
	}
	maxShared := b.MaxShared()
	red := result.Redactor(redact.Machine{}, b)
	a, err := result.Assemble(rec, id, facts, maxShared, red)
	if err != nil {
		tb.Fatal(err)
	}
	dir, err := folder.Write(root, a, red, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}
