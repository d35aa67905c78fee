package dialect

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// TestSimulatorTraces: each trace the simulator leaves is found alone,
// named where it is; a real engine's evidence has none.
func TestSimulatorTraces(t *testing.T) {
	t.Parallel()
	clean := contract.ServerEvidence{Props: raw(`{"build_info":"b10470-34af94cd9","model_path":"m.gguf"}`),
		Models: raw(`{"object":"list","data":[{"id":"m.gguf","owned_by":"llamacpp"}]}`), ServerHeader: "llama.cpp"}
	if got := SimulatorTraces(SimulatorEvidence{Server: clean, EngineVersion: "b10470-34af94cd9",
		ModelFiles: []ModelFile{{Path: "model-00001-of-00002.gguf", SHA256: strings.Repeat("ab", 32)}},
		GGUFName:   "Qwen3.8", Metrics: []string{"llamacpp:prompt_tokens_total"}}); len(got) != 0 {
		t.Errorf("a real engine's evidence shows %q", got)
	}
	with := func(edit func(*SimulatorEvidence)) SimulatorEvidence {
		ev := SimulatorEvidence{Server: clean}
		edit(&ev)
		return ev
	}
	for _, c := range []struct {
		ev   SimulatorEvidence
		says string
	}{
		{with(func(e *SimulatorEvidence) { e.Server.SimulatorHeader = "strata-simulator-0.1.0" }), "the X-Strata-Simulator response header"},
		{with(func(e *SimulatorEvidence) { e.Server.ServerHeader = "strata-simulator" }), `the Server header "strata-simulator"`},
		{with(func(e *SimulatorEvidence) { e.Server.Props = raw(`{"strata_simulator":true}`) }), "/props strata_simulator"},
		{with(func(e *SimulatorEvidence) { e.Server.Props = raw(`{"strata_simulator":false}`) }), "/props strata_simulator"},
		{with(func(e *SimulatorEvidence) { e.Server.Props = raw(`{"strata_simulator_version":"x"}`) }), "/props strata_simulator_version"},
		{with(func(e *SimulatorEvidence) { e.Server.Props = raw(`{"build_info":"strata-simulator-0.1.0"}`) }), "version in /props build_info"},
		{with(func(e *SimulatorEvidence) { e.Server.Status = raw(`{"engine_version":"strata-simulator-0.1.0"}`) }), "version in /v1/status"},
		// As Strata's server: its build_info "Strata <version>" and its
		// /v1/status engine (serve/server.py @452325a9).
		{with(func(e *SimulatorEvidence) { e.Server.Props = raw(`{"build_info":"Strata strata-simulator-0.1.0"}`) }), "version in /props build_info"},
		{with(func(e *SimulatorEvidence) {
			e.Server.Status = raw(`{"service":"strata","engine":"strata-simulator-0.1.0"}`)
		}), "version in /v1/status"},
		{with(func(e *SimulatorEvidence) { e.Server.Version = raw(`{"version":"strata-simulator-0.1.0"}`) }), "version in an engine's version route"},
		{with(func(e *SimulatorEvidence) {
			e.Server.Models = raw(`{"data":[{"id":"a","owned_by":"vllm"},{"id":"b","owned_by":"strata-simulator"}]}`)
		}), `owned_by "strata-simulator"`},
		{with(func(e *SimulatorEvidence) { e.EngineVersion = "strata-simulator-0.1.0 (speaking as llama.cpp b10470)" }), "software.engine_version"},
		{with(func(e *SimulatorEvidence) { e.ModelFiles = []ModelFile{{Path: "simulated-qwen3.gguf"}} }), "stand-in model file name"},
		{with(func(e *SimulatorEvidence) {
			e.ModelFiles = []ModelFile{{Path: "renamed.gguf", SHA256: SimulatorModelSHA256}}
		}), "the stand-in model's SHA-256"},
		{with(func(e *SimulatorEvidence) { e.RecordedSimulated = true }), "recording a simulated engine"},
		{with(func(e *SimulatorEvidence) {
			e.Metrics = []string{"strata_simulator:requests_total"}
		}), "/metrics counter"},
		{with(func(e *SimulatorEvidence) {
			e.GGUFName = "strata simulated Qwen3 (no weights)"
		}), "general.name"},
	} {
		got := SimulatorTraces(c.ev)
		if len(got) != 1 || !strings.Contains(got[0], c.says) {
			t.Errorf("%+v: traces %q, want one naming %q", c.ev, got, c.says)
		}
	}
	// Identification asks the same rule: any trace marks the dialect.
	for _, ev := range []contract.ServerEvidence{
		{Models: raw(`{"data":[{"owned_by":"strata-simulator"}]}`)},
		{Props: raw(`{"build_info":"b10470-34af94cd9","strata_simulator_version":"x"}`)},
		{ServerHeader: "strata-simulator"},
	} {
		if d := Identify(ev); !d.Simulated {
			b, _ := json.Marshal(ev)
			t.Errorf("%s is not identified as the simulator", b)
		}
	}
}
