package engineconfig

import (
	"fmt"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
)

// Strata's engine flags, from the args of its config file
// (record.StrataFile; Niko1221/Strata serve/server.py @452325a9 main,
// engine_args; setup.py @021ef858 step 7).

// Flag values of the config's args that are read for what they are, not
// as options: the model files (hashed) and the context (context_tokens).
const (
	strataNative     = "--native"
	strataPLE        = "--ple-gguf"
	strataPack       = "--pack"
	strataMaxContext = "--max-context"
)

// strataFlags sorts the engine's flags into the contract's objects, with
// Strata's own names. Switches take no value. A flag not listed here is
// kept under experimental_options, so no option of the file is lost.
var strataFlags = map[string][]flag{
	"kv_cache": {{names: []string{"--kv"}, kind: textOpt}, {names: []string{"--kv-resident"}, kind: textOpt}},
	"expert_cache": {
		{names: []string{"--expert-cache"}, kind: textOpt}, {names: []string{"--expert-profile"}, kind: textOpt}, {names: []string{"--resident-experts"}, kind: switchOpt},
		{names: []string{"--mmap-experts"}, kind: switchOpt}, {names: []string{"--resident-budget-gib"}, kind: textOpt},
		{names: []string{"--expert-profile-save"}, kind: textOpt}, {names: []string{"--expert-profile-save-every"}, kind: textOpt},
	},
	"offloading": {
		{names: []string{"--vram-reserve-mib"}, kind: textOpt}, {names: []string{"--layer-split"}, kind: textOpt}, {names: []string{"--split-skip-if-fits"}, kind: switchOpt},
		{names: []string{"--vram-elastic"}, kind: switchOpt}, {names: []string{"--vram-segment-mib"}, kind: textOpt}, {names: []string{"--ple-io"}, kind: textOpt},
		{names: []string{"--peer-device"}, kind: textOpt},
	},
	"prefill":     {{names: []string{"--prefill"}, kind: textOpt}, {names: []string{"--batch"}, kind: textOpt}, {names: []string{"--batch-groups"}, kind: textOpt}},
	"mtp":         {{names: []string{"--mtp"}, kind: textOpt}, {names: []string{"--spec"}, kind: textOpt}, {names: []string{"--spec-min-p"}, kind: textOpt}},
	"calibration": {{names: []string{"--pcie-frac"}, kind: textOpt}, {names: []string{"--pool-workers"}, kind: textOpt}},
}

// strataRead are the flags with a value read elsewhere.
var strataRead = map[string]bool{strataNative: true, strataPLE: true, strataPack: true, strataMaxContext: true}

// ParseStrataArgs sorts a config file's args into the objects, keyed by
// Strata's flag name with its value as the JSON string the file holds (or
// true for a switch). A flag strata does not know is kept under
// experimental_options the same way: with a value when the next arg is
// not a flag.
func ParseStrataArgs(args []string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, obj := range contract.EngineOptionObjects() {
		out[obj] = map[string]any{}
	}
	for i := 0; i < len(args); i++ {
		name, val, hasEq := strings.Cut(args[i], "=")
		if !strings.HasPrefix(name, "--") {
			continue
		}
		takesValue := hasEq || i+1 < len(args) && !strings.HasPrefix(args[i+1], "--")
		obj := "experimental_options"
		switch o, f, _, known := lookupIn(strataFlags, name); {
		case strataRead[name]:
			obj = ""
		case known:
			obj, takesValue = o, f.kind != switchOpt && (hasEq || i+1 < len(args))
		}
		var v any = true
		switch {
		case takesValue && hasEq:
			v = val
		case takesValue:
			v = args[i+1]
			i++
		}
		if obj != "" {
			out[obj][name] = v
		}
	}
	return out
}

// StrataModelFiles are the GGUF files a config file's args name: the
// --native model (every shard of it is hashed) and the --ple-gguf shard.
func StrataModelFiles(args []string) []string {
	var out []string
	for _, n := range []string{strataNative, strataPLE} {
		if v := dialect.FlagValue(args, n); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// StrataContext is the --max-context of the args (0 when absent or not a
// positive whole number).
func StrataContext(args []string) int64 {
	var n int64
	if _, err := fmt.Sscanf(dialect.FlagValue(args, strataMaxContext), "%d", &n); err != nil || n <= 0 {
		return 0
	}
	return n
}
