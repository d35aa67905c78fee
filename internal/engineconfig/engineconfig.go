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
	"encoding/json"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
)

// Sources is what the runner learned.
type Sources struct {
	Props  json.RawMessage
	Slots  json.RawMessage
	Status json.RawMessage // GET /v1/status, when the server has it
	// StrataFile is the config file a Strata server's command line names,
	// as read (nil: not seen), and StrataFileErr why it could not be.
	StrataFile    *dialect.StrataFile
	StrataFileErr string
	// Args are the engine's arguments when the runner started it or could
	// read them from the local process (nil: unknown); ArgsFrom says where
	// they were read.
	Args     []string
	ArgsFrom string
	// Engine is where the engine's options are read (its dialect's
	// ConfigFrom).
	Engine dialect.ConfigFrom
}

// Options are the filled objects (nil: unknown) and the reasons.
type Options struct {
	Objects map[string]json.RawMessage
	Missing map[string]string // keyed by contract object name
	Source  string
}

// flag describes a llama-server option: its names and whether it takes a
// value.
type flag struct {
	names []string
	value bool
}

// llamaFlags sorts llama-server's options into the contract's objects.
var llamaFlags = map[string][]flag{
	"kv_cache": {
		{[]string{"-ctk", "--cache-type-k"}, true}, {[]string{"-ctv", "--cache-type-v"}, true},
		{[]string{"-kvu", "--kv-unified"}, false}, {[]string{"-nkvo", "--no-kv-offload"}, false},
		{[]string{"--cache-reuse"}, true}, {[]string{"--swa-full"}, false}, {[]string{"-cram", "--cache-ram"}, true},
		{[]string{"--no-context-shift"}, false}, {[]string{"--context-shift"}, false},
	},
	"offloading": {
		{[]string{"-ngl", "--gpu-layers", "--n-gpu-layers"}, true}, {[]string{"-ot", "--override-tensor"}, true},
		{[]string{"-cmoe", "--cpu-moe"}, false}, {[]string{"-ncmoe", "--n-cpu-moe"}, true},
		{[]string{"-ts", "--tensor-split"}, true}, {[]string{"-sm", "--split-mode"}, true}, {[]string{"-mg", "--main-gpu"}, true},
		{[]string{"-dev", "--device"}, true}, {[]string{"--mlock"}, false}, {[]string{"--no-mmap"}, false}, {[]string{"--numa"}, true},
	},
	"prefill": {
		{[]string{"-b", "--batch-size"}, true}, {[]string{"-ub", "--ubatch-size"}, true}, {[]string{"-fa", "--flash-attn"}, true},
		{[]string{"-t", "--threads"}, true}, {[]string{"-tb", "--threads-batch"}, true},
	},
	"mtp": {
		{[]string{"-md", "--model-draft"}, true}, {[]string{"--draft-max", "--draft", "--draft-n"}, true},
		{[]string{"--draft-min", "--draft-n-min"}, true}, {[]string{"--draft-p-min"}, true},
		{[]string{"-ngld", "--gpu-layers-draft", "--n-gpu-layers-draft"}, true}, {[]string{"-cd", "--ctx-size-draft"}, true},
		{[]string{"-devd", "--device-draft"}, true}, {[]string{"--spec-replace"}, true},
	},
}

// lookupIn finds a flag of an engine's table by any of its names.
func lookupIn(table map[string][]flag, name string) (string, flag, bool) {
	for obj, flags := range table {
		for _, f := range flags {
			for _, n := range f.names {
				if n == name {
					return obj, f, true
				}
			}
		}
	}
	return "", flag{}, false
}

// ParseLlamaArgs sorts a llama-server command line into the objects, keyed
// by the option's first long name (the engine's own name), with its value as a JSON string (or true for a switch).
func ParseLlamaArgs(args []string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, obj := range contract.EngineOptionObjects() {
		out[obj] = map[string]any{}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasEq := strings.Cut(a, "=")
		obj, f, ok := lookupIn(llamaFlags, name)
		if !ok {
			continue
		}
		key := longName(f)
		switch {
		case !f.value:
			out[obj][key] = true
		case hasEq:
			out[obj][key] = val
		case i+1 < len(args):
			out[obj][key] = args[i+1]
			i++
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
	o := Options{Objects: map[string]json.RawMessage{}, Missing: map[string]string{}}
	objs := contract.EngineOptionObjects()
	switch s.Engine {
	case dialect.ConfigSimulator:
		o.Source = "strata's simulated engine, which has none of these options"
		for _, name := range objs {
			o.Objects[name] = json.RawMessage("{}")
		}
		return o
	case dialect.ConfigStrataFile:
		return strataOptions(s, o)
	case dialect.ConfigLlamaArgs:
	default:
		o.Source = "unknown engine"
		for _, name := range objs {
			o.Missing[name] = "the engine is neither llama.cpp's server nor Strata's: its " + name + " options cannot be read"
		}
		return o
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
		o.Source = "the arguments of " + from + ", /props and /slots"
		parsed := ParseLlamaArgs(s.Args)
		for _, name := range []string{"kv_cache", "offloading", "prefill", "mtp"} {
			o.Objects[name] = raw(parsed[name])
		}
	} else {
		o.Source = "/props and /slots (the runner did not start the engine, so its arguments are unknown)"
		for _, name := range []string{"kv_cache", "offloading", "prefill"} {
			o.Missing[name] = "llama.cpp's /props and /slots do not report its " + name + " options and the runner did not start the engine; run with --profile so the runner knows the command line"
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
	}
	return o
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
