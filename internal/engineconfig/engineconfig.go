// Package engineconfig fills the result's engine-option objects (kv_cache,
// expert_cache, offloading, prefill, mtp, calibration,
// experimental_options) from what the engine really runs with, keeping the
// engine's own option names and JSON values: for llama.cpp's server, the
// arguments of the command the runner started plus /props and /slots; for
// Strata's server, the args of the config file its command line names. An
// option that cannot be known is null
// with a reason; an empty object means the engine has no such options.
package engineconfig

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/record"
)

// Sources is what the runner learned.
type Sources struct {
	Props  json.RawMessage
	Slots  json.RawMessage
	Status json.RawMessage // GET /v1/status, when the server has it
	// StrataFile is the config file a Strata server's command line names,
	// as read (nil: not seen), and StrataFileErr why it could not be.
	StrataFile    *record.StrataFile
	StrataFileErr string
	// Args and Env are the engine's arguments and environment when the
	// runner started it or could read them from the local process (nil
	// Args: unknown); ArgsFrom says where they were read, EnvUnreadable why
	// the environment could not be.
	Args          []string
	Env           []string
	EnvUnreadable string
	ArgsFrom      string
	// Engine is where the engine's options are read (its dialect's
	// ConfigFrom).
	Engine dialect.ConfigFrom
}

// Options are the filled objects (nil: unknown) and the reasons.
type Options struct {
	Objects map[string]json.RawMessage
	Missing map[string]string // keyed by contract object name
	Source  string
	// Sources says, per object, where its values were read.
	Sources map[string]string
}

// kind is how llama-server reads an option's value (common/arg.cpp: the
// handler an option is declared with): a switch that takes none, a
// boolean with a negative form, an integer (std::stoi), a float
// (std::stof), a layer count that may also be a word, or text.
type kind int

const (
	switchOpt kind = iota
	boolOpt
	intOpt
	floatOpt
	layersOpt
	textOpt
)

// flag describes a llama-server option: its names, its negative names (a
// boolean's --no-… form), how its value is read, and the LLAMA_ARG_*
// variable that sets it (common/arg.cpp's set_env; llama-server --help at
// b10470 prints each as "(env: …)").
type flag struct {
	names []string
	neg   []string
	kind  kind
	env   string
}

// llamaFlags sorts llama-server's options into the contract's objects
// (names, kinds and variables from common/arg.cpp @34af94cd9, b10470;
// --draft-max, --draft-min, -cd and --spec-replace are older builds',
// which b10470 removed).
var llamaFlags = map[string][]flag{
	"kv_cache": {
		{names: []string{"-ctk", "--cache-type-k"}, kind: textOpt, env: "LLAMA_ARG_CACHE_TYPE_K"},
		{names: []string{"-ctv", "--cache-type-v"}, kind: textOpt, env: "LLAMA_ARG_CACHE_TYPE_V"},
		{names: []string{"-kvu", "--kv-unified"}, neg: []string{"-no-kvu", "--no-kv-unified"}, kind: boolOpt, env: "LLAMA_ARG_KV_UNIFIED"},
		{names: []string{"-kvo", "--kv-offload"}, neg: []string{"-nkvo", "--no-kv-offload"}, kind: boolOpt, env: "LLAMA_ARG_KV_OFFLOAD"},
		{names: []string{"--cache-reuse"}, kind: intOpt, env: "LLAMA_ARG_CACHE_REUSE"},
		{names: []string{"--swa-full"}, kind: switchOpt, env: "LLAMA_ARG_SWA_FULL"},
		{names: []string{"-cram", "--cache-ram"}, kind: intOpt, env: "LLAMA_ARG_CACHE_RAM"},
		{names: []string{"--context-shift"}, neg: []string{"--no-context-shift"}, kind: boolOpt, env: "LLAMA_ARG_CONTEXT_SHIFT"},
	},
	"offloading": {
		{names: []string{"-ngl", "--gpu-layers", "--n-gpu-layers"}, kind: layersOpt, env: "LLAMA_ARG_N_GPU_LAYERS"},
		{names: []string{"-ot", "--override-tensor"}, kind: textOpt, env: "LLAMA_ARG_OVERRIDE_TENSOR"},
		{names: []string{"-cmoe", "--cpu-moe"}, kind: switchOpt, env: "LLAMA_ARG_CPU_MOE"},
		{names: []string{"-ncmoe", "--n-cpu-moe"}, kind: intOpt, env: "LLAMA_ARG_N_CPU_MOE"},
		{names: []string{"-ts", "--tensor-split"}, kind: textOpt, env: "LLAMA_ARG_TENSOR_SPLIT"},
		{names: []string{"-sm", "--split-mode"}, kind: textOpt, env: "LLAMA_ARG_SPLIT_MODE"},
		{names: []string{"-mg", "--main-gpu"}, kind: intOpt, env: "LLAMA_ARG_MAIN_GPU"},
		{names: []string{"-dev", "--device"}, kind: textOpt, env: "LLAMA_ARG_DEVICE"},
		{names: []string{"--mlock"}, kind: switchOpt, env: "LLAMA_ARG_MLOCK"},
		{names: []string{"--mmap"}, neg: []string{"--no-mmap"}, kind: boolOpt, env: "LLAMA_ARG_MMAP"},
		{names: []string{"--numa"}, kind: textOpt, env: "LLAMA_ARG_NUMA"},
	},
	"prefill": {
		{names: []string{"-b", "--batch-size"}, kind: intOpt, env: "LLAMA_ARG_BATCH"},
		{names: []string{"-ub", "--ubatch-size"}, kind: intOpt, env: "LLAMA_ARG_UBATCH"},
		{names: []string{"-fa", "--flash-attn"}, kind: textOpt, env: "LLAMA_ARG_FLASH_ATTN"},
		{names: []string{"-t", "--threads"}, kind: intOpt, env: "LLAMA_ARG_THREADS"},
		{names: []string{"-tb", "--threads-batch"}, kind: intOpt},
	},
	"mtp": {
		{names: []string{"-md", "--model-draft", "--spec-draft-model"}, kind: textOpt, env: "LLAMA_ARG_SPEC_DRAFT_MODEL"},
		{names: []string{"--spec-draft-n-max"}, kind: intOpt, env: "LLAMA_ARG_SPEC_DRAFT_N_MAX"},
		{names: []string{"--spec-draft-n-min"}, kind: intOpt, env: "LLAMA_ARG_SPEC_DRAFT_N_MIN"},
		{names: []string{"--draft-max", "--draft", "--draft-n"}, kind: intOpt},
		{names: []string{"--draft-min", "--draft-n-min"}, kind: intOpt},
		{names: []string{"--draft-p-min", "--spec-draft-p-min"}, kind: floatOpt, env: "LLAMA_ARG_SPEC_DRAFT_P_MIN"},
		{names: []string{"-ngld", "--gpu-layers-draft", "--n-gpu-layers-draft", "--spec-draft-ngl"}, kind: layersOpt, env: "LLAMA_ARG_N_GPU_LAYERS_DRAFT"},
		{names: []string{"-cd", "--ctx-size-draft"}, kind: intOpt},
		{names: []string{"-devd", "--device-draft", "--spec-draft-device"}, kind: textOpt},
		{names: []string{"--spec-replace"}, kind: textOpt},
		{names: []string{"--spec-type"}, kind: textOpt, env: "LLAMA_ARG_SPEC_TYPE"},
	},
}

// lookupIn finds a flag of an engine's table by any of its names; positive
// is false for a negative name.
func lookupIn(table map[string][]flag, name string) (obj string, f flag, positive, ok bool) {
	for obj, flags := range table {
		for _, f := range flags {
			if slices.Contains(f.names, name) {
				return obj, f, true, true
			}
			if slices.Contains(f.neg, name) {
				return obj, f, false, true
			}
		}
	}
	return "", flag{}, false, false
}

// typed is a value as llama-server reads it: an integer or float where it
// parses one (a value it cannot parse stays text, as given), a layer count
// as a number unless it is a word ("auto", "all").
func typed(k kind, v string) any {
	switch k {
	case intOpt, layersOpt:
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			return n
		}
	case floatOpt:
		if f, err := strconv.ParseFloat(v, 32); err == nil {
			return f
		}
	}
	return v
}

// envValue is a LLAMA_ARG_* value as llama-server reads it
// (common_params_parse_ex): a switch is set by a truthy value and left
// alone otherwise, a boolean is truthy or falsey, the rest as on the
// command line.
func envValue(f flag, v string) (any, bool) {
	truthy := v == "on" || v == "enabled" || v == "true" || v == "1"
	falsey := v == "off" || v == "disabled" || v == "false" || v == "0"
	switch {
	case f.kind == switchOpt:
		return true, truthy
	case f.kind == boolOpt && (truthy || falsey):
		return truthy, true
	case f.kind == boolOpt:
		return v, true // the engine refuses it ("invalid boolean value"); kept as given
	}
	return typed(f.kind, v), true
}

// ParseLlamaArgs sorts a llama-server command line and its environment
// into the objects, keyed by the option's first long name (the engine's own
// name), with typed values: an option's LLAMA_ARG_* variable first, the
// command line over it, as llama-server applies them.
func ParseLlamaArgs(args, env []string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, obj := range contract.EngineOptionObjects() {
		out[obj] = map[string]any{}
	}
	vars := LlamaEnv(env)
	for obj, flags := range llamaFlags {
		for _, f := range flags {
			if v, set := vars[f.env]; set && f.env != "" {
				if val, ok := envValue(f, v); ok {
					out[obj][longName(f)] = val
				}
			}
		}
	}
	for i := 0; i < len(args); i++ {
		name, val, hasEq := strings.Cut(args[i], "=")
		if strings.HasPrefix(name, "--") {
			name = strings.ReplaceAll(name, "_", "-") // llama-server reads --n_gpu_layers as --n-gpu-layers
		}
		obj, f, positive, ok := lookupIn(llamaFlags, name)
		if !ok {
			continue
		}
		key := longName(f)
		switch {
		case f.kind == switchOpt || f.kind == boolOpt:
			out[obj][key] = positive
		case hasEq:
			out[obj][key] = typed(f.kind, val)
		case i+1 < len(args):
			out[obj][key] = typed(f.kind, args[i+1])
			i++
		}
	}
	return out
}

// LlamaEnv are the LLAMA_ARG_* entries of an environment, by name.
func LlamaEnv(env []string) map[string]string {
	out := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "LLAMA_ARG_") {
			out[k] = v
		}
	}
	return out
}

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// Capture fills the objects.
func Capture(s Sources) Options {
	o := Options{Objects: map[string]json.RawMessage{}, Missing: map[string]string{}, Sources: map[string]string{}}
	objs := contract.EngineOptionObjects()
	switch s.Engine {
	case dialect.ConfigSimulator:
		o.Source = "strata's simulated engine, which has none of these options"
		for _, name := range objs {
			o.Objects[name] = json.RawMessage("{}")
		}
		return o.sourced()
	case dialect.ConfigStrataFile:
		return strataOptions(s, o).sourced()
	case dialect.ConfigLlamaArgs:
	default:
		o.Source = "unknown engine"
		for _, name := range objs {
			o.Missing[name] = "the engine is neither llama.cpp's server nor Strata's: its " + name + " options cannot be read"
		}
		return o.sourced()
	}
	// llama.cpp: no expert cache, calibration or experimental options.
	for _, name := range []string{"expert_cache", "calibration", "experimental_options"} {
		o.Objects[name] = json.RawMessage("{}")
	}
	if s.Args != nil {
		from := s.ArgsFrom
		if from == "" {
			from = "the llama-server command the runner started"
		}
		o.Source = "the arguments and LLAMA_ARG_* environment of " + from + ", /props and /slots"
		given := "the options given on the command line and as LLAMA_ARG_* variables of " + from +
			" (typed as llama-server reads them, common/arg.cpp); an option given in neither is at llama-server's default, which it does not report"
		if s.EnvUnreadable != "" {
			given = "the options given on the command line of " + from + " (typed as llama-server reads them, common/arg.cpp); its environment could not be read (" +
				s.EnvUnreadable + "), so an option set only by a LLAMA_ARG_* variable is not seen; an option given in neither is at llama-server's default, which it does not report"
		}
		parsed := ParseLlamaArgs(s.Args, s.Env)
		for _, name := range []string{"kv_cache", "offloading", "prefill", "mtp"} {
			o.Objects[name] = raw(parsed[name])
			o.Sources[name] = given
		}
	} else {
		o.Source = "/props and /slots (the runner did not start the engine, so its arguments are unknown)"
		for _, name := range []string{"kv_cache", "offloading", "prefill"} {
			o.Missing[name] = "llama.cpp's /props and /slots do not report its " + name + " options, and the runner neither started the engine nor found it listening on a local port (its command line and environment are not visible); run with --profile so the runner knows the command line"
		}
		o.Missing["mtp"] = "llama.cpp's /slots shows whether speculative decoding is on, not its options, and the runner did not start the engine"
	}
	// /slots says whether each slot decodes speculatively.
	var slots []struct {
		Speculative *bool `json:"speculative"`
	}
	if json.Unmarshal(s.Slots, &slots) == nil && len(slots) > 0 && slots[0].Speculative != nil {
		m := map[string]any{}
		if s.Args != nil {
			_ = json.Unmarshal(o.Objects["mtp"], &m)
		}
		m["speculative"] = *slots[0].Speculative
		o.Objects["mtp"] = raw(m)
		delete(o.Missing, "mtp")
		if o.Sources["mtp"] != "" {
			o.Sources["mtp"] += "; speculative from GET /slots (the engine's report)"
		} else {
			o.Sources["mtp"] = "speculative from GET /slots (the engine's report)"
		}
	}
	return o.sourced()
}

// sourced names the one source for the objects that have none of their
// own.
func (o Options) sourced() Options {
	for _, name := range contract.EngineOptionObjects() {
		if o.Sources[name] == "" {
			o.Sources[name] = o.Source
		}
	}
	return o
}

// Reported is what the engine itself reported of its configuration, as it
// sent it, by route: llama.cpp's /props default_generation_settings (the
// sampling a request that sets nothing gets: the engine's own defaults,
// and n_ctx) and total_slots, and each /slots entry's own settings (its
// context, whether it decodes speculatively; its params are its last
// task's, which the settings check reads); Strata's /v1/status.
func Reported(props, slots, status json.RawMessage) []contract.EngineReport {
	out := []contract.EngineReport{}
	var p map[string]json.RawMessage
	if json.Unmarshal(props, &p) == nil {
		if d, ok := p["default_generation_settings"]; ok {
			out = append(out, contract.EngineReport{Source: "GET /props default_generation_settings",
				What: "the engine's defaults: what a request that sets nothing gets (params), and the per-slot context (n_ctx)", Values: d})
		}
		if n, ok := p["total_slots"]; ok {
			out = append(out, contract.EngineReport{Source: "GET /props total_slots", What: "the number of slots the server runs", Values: n})
		}
	}
	var entries []map[string]json.RawMessage
	if json.Unmarshal(slots, &entries) == nil && len(entries) > 0 {
		own := []map[string]json.RawMessage{}
		for _, e := range entries {
			m := map[string]json.RawMessage{}
			for _, k := range []string{"id", "n_ctx", "speculative"} {
				if v, ok := e[k]; ok {
					m[k] = v
				}
			}
			own = append(own, m)
		}
		out = append(out, contract.EngineReport{Source: "GET /slots", What: "each slot's own settings before the run (its params are its last task's)", Values: raw(own)})
	}
	// Strata's /v1/status: of its status (Service.v1_status) the parts that
	// are configuration — the context, the concurrency it serves, the cache
	// size and the VRAM mode — not its activity or machine readings.
	var st map[string]json.RawMessage
	if json.Unmarshal(status, &st) == nil && len(st) > 0 {
		m := map[string]json.RawMessage{}
		for _, k := range []string{"context", "concurrency", "cache_max_tokens", "vram"} {
			if v, ok := st[k]; ok {
				m[k] = v
			}
		}
		if len(m) > 0 {
			out = append(out, contract.EngineReport{Source: "GET /v1/status", What: "the server's context, concurrency, cache size and VRAM mode as it reported them", Values: raw(m)})
		}
	}
	// A null in an engine's answer is the engine's, not a value strata
	// failed to learn: it is left out here (config.json keeps every answer
	// whole), so every null of results.json still has its reason.
	for i := range out {
		out[i].Values = withoutNulls(out[i].Values)
	}
	return out
}

// withoutNulls drops the null members of a JSON value, at any depth.
func withoutNulls(v json.RawMessage) json.RawMessage {
	// Numbers are kept as the engine wrote them (json.Number).
	var x any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&x) != nil {
		return v
	}
	var drop func(any) any
	drop = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, c := range t {
				if c == nil {
					delete(t, k)
					continue
				}
				t[k] = drop(c)
			}
		case []any:
			kept := t[:0]
			for _, c := range t {
				if c != nil {
					kept = append(kept, drop(c))
				}
			}
			return kept
		}
		return x
	}
	b, err := json.Marshal(drop(x))
	if err != nil {
		return v
	}
	return b
}

// longName is the first long form of an option: one stable name for -ctk
// and --cache-type-k alike, so runs compare.
func longName(f flag) string {
	for _, n := range f.names {
		if strings.HasPrefix(n, "--") {
			return n
		}
	}
	return f.names[0]
}

// strataOptions fills the objects from a Strata config file's args.
func strataOptions(s Sources, o Options) Options {
	if s.StrataFile == nil {
		why := s.StrataFileErr
		if why == "" {
			why = "the runner could not see the server's command line (it neither started the server nor found it listening on a local port), so the config file (--config strata-<model>.json) that holds the engine's flags is unknown"
		}
		o.Source = "Strata's /props and /v1/status (" + why + ")"
		for _, name := range contract.EngineOptionObjects() {
			o.Missing[name] = "Strata's server keeps its " + name + " options in its config file's args: " + why
		}
		return o
	}
	o.Source = "the args of Strata's config file " + s.StrataFile.Name + " (its model files are hashed and --max-context is the context, so neither is repeated here)"
	parsed := ParseStrataArgs(s.StrataFile.Args)
	for _, name := range contract.EngineOptionObjects() {
		o.Objects[name] = raw(parsed[name])
	}
	return o
}
