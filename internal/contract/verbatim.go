package contract

import "strconv"

// verbatim is where results.json keeps values as another party gave them:
// the engine's own answers about its configuration, the options and the
// LLAMA_ARG_* environment it was given, a device selection as set, the
// model file's GGUF metadata. An empty string there is that party's value,
// not an unknown one strata wrote as "" ("*" is any name or index; a nil
// subtree is everything below).
var verbatim = owned{
	"configuration": {"kv_cache": all, "expert_cache": all, "offloading": all, "prefill": all, "mtp": all,
		"calibration": all, "experimental_options": all},
	"extensions": {
		"engine_config":    {"reported": {"*": {"values": all}}, "given": {"llama_arg_env": all}},
		"selected_devices": {"settings": {"*": {"value": all}}},
		"gguf":             {"metadata": {"*": {"value": all}}},
	},
}

// Verbatim reports whether the string at a path of results.json is a value
// another party gave, kept as given (so an empty one is no unknown value).
func Verbatim(path []string) bool { return verbatim.owns(path) }

// EmptyStrings are the JSON Pointers of the empty strings of a decoded
// results.json (encoding/json's generic values) outside the Verbatim
// places, in document order of arrays and any order of names: the spec
// writes an unavailable value as null with a reason, "not zero, empty
// strings, or "N/A"".
func EmptyStrings(doc any) []string {
	var out []string
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		switch x := v.(type) {
		case string:
			if x == "" && !Verbatim(path) {
				tokens := make([]any, len(path))
				for i, p := range path {
					tokens[i] = p
				}
				out = append(out, Pointer(tokens...))
			}
		case map[string]any:
			for k, c := range x {
				walk(append(path[:len(path):len(path)], k), c)
			}
		case []any:
			for i, c := range x {
				walk(append(path[:len(path):len(path)], strconv.Itoa(i)), c)
			}
		}
	}
	walk(nil, doc)
	return out
}
