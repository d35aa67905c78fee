package dialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
)

// The traces strata's simulator (internal/simengine) leaves, whatever
// engine it speaks as and whatever a scenario says: a run or a saved
// folder that shows any of them comes from the simulator. The simulator
// takes its names from here, and its tests hold its stand-in model to the
// name and hash below.
const (
	// SimulatorHeaderName is the response header the simulator sends on
	// every answer, its version as the value.
	SimulatorHeaderName = "X-Strata-Simulator"
	// SimulatorOwner is its Server header and its /v1/models owned_by.
	SimulatorOwner = "strata-simulator"
	// SimulatorModelFile, SimulatorModelSHA256 and SimulatorModelName are
	// the stand-in GGUF's file name, its SHA-256 (its content is fixed:
	// metadata only, no weights) and its general.name.
	SimulatorModelFile   = "simulated-qwen3.gguf"
	SimulatorModelSHA256 = "fd748de4fe3cd5081e86d3b6ca746a2c20ca57b1210b85083d4b23da72542f04"
	SimulatorModelName   = "strata simulated Qwen3 (no weights)"
	// SimulatorMetricPrefix starts the name of the simulator's /metrics
	// counter.
	SimulatorMetricPrefix = "strata_simulator:"
)

// Evidence keys of /props that only the simulator serves.
const (
	simulatorPropsMarker  = "strata_simulator"
	simulatorPropsVersion = "strata_simulator_version"
)

// simulatorPrefix starts every version string strata's simulator reports.
const simulatorPrefix = "strata-simulator"

// IsSimulatorVersion reports whether an engine version is strata's
// simulator's. It is one of the traces SimulatorTraces reads; a rule asks
// SimulatorTraces, never this alone.
func IsSimulatorVersion(v string) bool { return strings.HasPrefix(v, simulatorPrefix) }

// ModelFile is a model file as a result records it.
type ModelFile struct {
	Path   string
	SHA256 string // "" when unhashed
}

// SimulatorEvidence is everything a run, or its saved folder, holds that
// can show strata's simulator: what the server served about itself
// (config.json keeps it), the recorded engine version and model files, and
// the result's extensions (the recorded dialect, the engine's counters
// before the run, the GGUF metadata).
type SimulatorEvidence struct {
	Server        contract.ServerEvidence
	EngineVersion string
	ModelFiles    []ModelFile
	// What a result's extensions record: the dialect marked simulated, the
	// names of the /metrics counters seen before the run, and the model's
	// GGUF general.name.
	RecordedSimulated bool
	Metrics           []string
	GGUFName          string
}

// SimulatorTraces names every trace of strata's simulator in the evidence,
// in a fixed order ("" values and absent blocks are no trace). It is the
// one rule by which a run and a saved result are known to come from the
// simulator: the run's identification, its status and the validator all
// ask it. The phrases name where each trace is, never a value a redactor
// could rewrite, so the run and the saved folder give the same words.
func SimulatorTraces(ev SimulatorEvidence) []string {
	out := serverTraces(ev.Server)
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if IsSimulatorVersion(ev.EngineVersion) {
		add("a %s engine version (software.engine_version)", simulatorPrefix)
	}
	for _, f := range ev.ModelFiles {
		if path.Base(f.Path) == SimulatorModelFile {
			add("the stand-in model file name %s", SimulatorModelFile)
			break
		}
	}
	for _, f := range ev.ModelFiles {
		if f.SHA256 == SimulatorModelSHA256 {
			add("a model file with the stand-in model's SHA-256")
			break
		}
	}
	if ev.RecordedSimulated {
		add("extensions.engine_dialect recording a simulated engine")
	}
	for _, k := range ev.Metrics {
		if strings.HasPrefix(k, SimulatorMetricPrefix) {
			add("the simulator's /metrics counter (extensions.engine.served_before_run)")
			break
		}
	}
	if ev.GGUFName == SimulatorModelName {
		add("the stand-in model's GGUF general.name (extensions.gguf)")
	}
	return out
}

// serverTraces are the traces in what the server served about itself: its
// headers, /props, /v1/status, its version routes and its model lists.
func serverTraces(s contract.ServerEvidence) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if s.SimulatorHeader != "" {
		add("the %s response header", SimulatorHeaderName)
	}
	if s.ServerHeader == SimulatorOwner {
		add("the Server header %q", SimulatorOwner)
	}
	out = append(out, propsTraces(s.Props)...)
	var st struct { // Strata's /v1/status calls it engine (Service.v1_status)
		Version       any `json:"version"`
		EngineVersion any `json:"engine_version"`
		Engine        any `json:"engine"`
	}
	if isObject(s.Status) && json.Unmarshal(s.Status, &st) == nil && (isSimString(st.Version) || isSimString(st.EngineVersion) || isSimString(st.Engine)) {
		add("a %s version in /v1/status", simulatorPrefix)
	}
	for _, raw := range []json.RawMessage{s.Version, s.OllamaVersion, s.ServerInfo} {
		var v struct {
			Version any `json:"version"`
		}
		if isObject(raw) && json.Unmarshal(raw, &v) == nil && isSimString(v.Version) {
			add("a %s version in an engine's version route", simulatorPrefix)
			break
		}
	}
	for _, raw := range []json.RawMessage{s.Models, s.LMStudioModels} {
		if ownedBySimulator(raw) {
			add("a model list saying owned_by %q", SimulatorOwner)
		}
	}
	return out
}

// propsTraces are the simulator's own /props keys and a simulator version
// in its build_info.
func propsTraces(raw json.RawMessage) []string {
	var props map[string]json.RawMessage
	if !isObject(raw) || json.Unmarshal(raw, &props) != nil {
		return nil
	}
	var out []string
	for _, k := range []string{simulatorPropsMarker, simulatorPropsVersion} {
		if _, ok := props[k]; ok {
			out = append(out, fmt.Sprintf("/props %s", k))
		}
	}
	var bi string
	if json.Unmarshal(props["build_info"], &bi) == nil && IsSimulatorVersion(strings.TrimPrefix(bi, strataBuildPrefix)) {
		out = append(out, fmt.Sprintf("a %s version in /props build_info", simulatorPrefix))
	}
	return out
}

// ownedBySimulator reports whether a model list names the simulator as a
// model's owner.
func ownedBySimulator(raw json.RawMessage) bool {
	var m struct {
		Data []struct {
			OwnedBy any `json:"owned_by"`
		} `json:"data"`
	}
	if !isObject(raw) || json.Unmarshal(raw, &m) != nil {
		return false
	}
	for _, d := range m.Data {
		if d.OwnedBy == SimulatorOwner {
			return true
		}
	}
	return false
}

func isSimString(v any) bool {
	s, ok := v.(string)
	return ok && IsSimulatorVersion(s)
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}
