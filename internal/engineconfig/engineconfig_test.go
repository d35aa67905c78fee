package engineconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/sharedpath"
)

func capture(t *testing.T, name string) json.RawMessage {
	b, err := os.ReadFile(filepath.Join(sharedpath.Path(t, "wire", "llama-server", "captures"), name+".resp.body"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCapture(t *testing.T) {
	t.Parallel()
	props, slots, slotsNP4 := capture(t, "get-props"), capture(t, "get-slots-busy"), capture(t, "get-slots-np4-idle")
	cases := []struct {
		name    string
		src     Sources
		objects map[string]string // object -> exact JSON
		missing []string
	}{
		{name: "llama.cpp started by the runner",
			src: Sources{Engine: "llama.cpp", Props: props, Slots: slots, Args: []string{
				"-m", "/m/q.gguf", "--host", "127.0.0.1", "-c", "20480", "-np", "1", "--jinja",
				"-ctk", "q8_0", "--cache-type-v=q8_0", "-ngl", "99", "-ot", "exps=CPU", "--n-cpu-moe", "12", "-fa", "on",
				"-b", "4096", "-ub", "1024", "--mlock", "-kvu", "--draft-max", "16", "-md", "/m/draft.gguf"}},
			objects: map[string]string{
				"kv_cache":     `{"--cache-type-k":"q8_0","--cache-type-v":"q8_0","--kv-unified":true}`,
				"offloading":   `{"--gpu-layers":99,"--mlock":true,"--n-cpu-moe":12,"--override-tensor":"exps=CPU"}`,
				"prefill":      `{"--batch-size":4096,"--flash-attn":"on","--ubatch-size":1024}`,
				"mtp":          `{"--draft-max":16,"--model-draft":"/m/draft.gguf","speculative":false}`,
				"expert_cache": `{}`, "calibration": `{}`, "experimental_options": `{}`,
			}},
		// The engine's own reading (common/arg.cpp common_params_parse_ex):
		// LLAMA_ARG_* first, the command line over it; a switch's variable
		// sets it only when truthy; a boolean's negative form is false; a
		// layer count may be a word; --n_gpu_layers is --n-gpu-layers.
		{name: "llama.cpp's environment and command line",
			src: Sources{Engine: "llama.cpp", Props: props, Slots: slots, Args: []string{"-m", "q.gguf", "--no-mmap", "-nkvo", "--n_gpu_layers", "all", "-t", "8"},
				Env: []string{"PATH=/usr/bin", "LLAMA_ARG_THREADS=4", "LLAMA_ARG_CACHE_TYPE_K=q4_0", "LLAMA_ARG_CONTEXT_SHIFT=off",
					"LLAMA_ARG_SWA_FULL=0", "LLAMA_ARG_CPU_MOE=true", "LLAMA_ARG_SPEC_DRAFT_P_MIN=0.75", "LLAMA_ARG_BATCH=lots"}},
			objects: map[string]string{
				"kv_cache":   `{"--cache-type-k":"q4_0","--context-shift":false,"--kv-offload":false}`,
				"offloading": `{"--cpu-moe":true,"--gpu-layers":"all","--mmap":false}`,
				"prefill":    `{"--batch-size":"lots","--threads":8}`,
				"mtp":        `{"--draft-p-min":0.75,"speculative":false}`,
			}},
		{name: "llama.cpp already serving (arguments unknown)",
			src:     Sources{Engine: "llama.cpp", Props: props, Slots: slotsNP4},
			objects: map[string]string{"mtp": `{"speculative":false}`, "expert_cache": `{}`, "calibration": `{}`, "experimental_options": `{}`},
			missing: []string{"kv_cache", "offloading", "prefill"}},
		{name: "llama.cpp with default options",
			src:     Sources{Engine: "llama.cpp", Props: props, Slots: slots, Args: []string{"-m", "/m/q.gguf", "--port", "8080"}},
			objects: map[string]string{"kv_cache": `{}`, "offloading": `{}`, "prefill": `{}`, "mtp": `{"speculative":false}`}},
		// Strata's config file as setup writes it (setup.py @021ef858 step 7)
		// and the server adds to it (serve/server.py @452325a9 engine_args):
		// every flag under an object with Strata's names, the model files
		// and --max-context left to model.files and context_tokens, an
		// unknown flag kept under experimental_options.
		{name: "Strata's config file",
			src: Sources{Engine: dialect.ConfigStrataFile, StrataFile: &record.StrataFile{Name: "strata-iq3_xxs.json", Args: []string{
				"--pack", "packs/iq3_xxs", "--native", "model-00001-of-00002.gguf", "--ple-gguf", "model-00002-of-00002.gguf",
				"--expert-profile", "data/expert-profile.bin", "--expert-cache", "auto", "--prefill", "auto", "--spec", "4", "--spec-min-p", "0.5",
				"--mtp", "mtp/rt", "--max-context", "32768", "--kv", "q8_0", "--vram-reserve-mib", "512", "--batch", "2",
				"--resident-experts", "--pcie-frac=0.4", "--rope-scaling", "yarn", "--future-switch"}}},
			objects: map[string]string{
				"kv_cache":             `{"--kv":"q8_0"}`,
				"expert_cache":         `{"--expert-cache":"auto","--expert-profile":"data/expert-profile.bin","--resident-experts":true}`,
				"offloading":           `{"--vram-reserve-mib":"512"}`,
				"prefill":              `{"--batch":"2","--prefill":"auto"}`,
				"mtp":                  `{"--mtp":"mtp/rt","--spec":"4","--spec-min-p":"0.5"}`,
				"calibration":          `{"--pcie-frac":"0.4"}`,
				"experimental_options": `{"--future-switch":true,"--rope-scaling":"yarn"}`,
			}},
		{name: "Strata's server whose command line is not seen",
			src:     Sources{Engine: dialect.ConfigStrataFile, Status: json.RawMessage(`{"service":"strata"}`)},
			missing: []string{"kv_cache", "expert_cache", "offloading", "prefill", "mtp", "calibration", "experimental_options"}},
		{name: "unknown engine",
			src:     Sources{Props: json.RawMessage(`{}`)},
			missing: []string{"kv_cache", "expert_cache", "offloading", "prefill", "mtp", "calibration", "experimental_options"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Capture(c.src)
			for name, want := range c.objects {
				if got := string(o.Objects[name]); got != want {
					t.Errorf("%s = %s, want %s", name, got, want)
				}
			}
			for _, name := range c.missing {
				if o.Objects[name] != nil || o.Missing[name] == "" {
					t.Errorf("%s: %s, reason %q; want null with a reason", name, o.Objects[name], o.Missing[name])
				}
			}
			for name := range o.Objects {
				if o.Missing[name] != "" {
					t.Errorf("%s is both set and missing", name)
				}
			}
			if o.Source == "" {
				t.Errorf("source %q", o.Source)
			}
			for _, name := range contract.EngineOptionObjects() {
				if o.Sources[name] == "" {
					t.Errorf("%s has no source", name)
				}
			}
			if c.src.Env != nil && !strings.Contains(o.Sources["kv_cache"], "LLAMA_ARG_*") {
				t.Errorf("kv_cache's source %q does not name the environment", o.Sources["kv_cache"])
			}
		})
	}
}

// TestReportedKeepsTheEngineTypes: the engine's own report of its
// configuration (the real llama-server's /props and /slots) is kept as it
// sent it: its defaults' numbers and booleans are JSON numbers and
// booleans, and /slots keeps each slot's own settings, not its last task.
func TestReportedKeepsTheEngineTypes(t *testing.T) {
	t.Parallel()
	got := Reported(capture(t, "get-props"), capture(t, "get-slots-np4-idle"), nil)
	by := map[string]json.RawMessage{}
	for _, r := range got {
		by[r.Source] = r.Values
	}
	var defaults struct {
		NCtx   any            `json:"n_ctx"`
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(by["GET /props default_generation_settings"], &defaults); err != nil {
		t.Fatalf("defaults: %v (%s)", err, by["GET /props default_generation_settings"])
	}
	if _, ok := defaults.NCtx.(float64); !ok {
		t.Errorf("n_ctx %#v is not a number", defaults.NCtx)
	}
	if _, ok := defaults.Params["temperature"].(float64); !ok {
		t.Errorf("params.temperature %#v is not a number", defaults.Params["temperature"])
	}
	if _, ok := defaults.Params["ignore_eos"].(bool); !ok {
		t.Errorf("params.ignore_eos %#v is not a boolean", defaults.Params["ignore_eos"])
	}
	if string(by["GET /props total_slots"]) == "" {
		t.Error("total_slots is not reported")
	}
	var slots []map[string]any
	if err := json.Unmarshal(by["GET /slots"], &slots); err != nil || len(slots) != 4 {
		t.Fatalf("slots %s: %v", by["GET /slots"], err)
	}
	if _, ok := slots[0]["params"]; ok || slots[0]["n_ctx"] == nil {
		t.Errorf("slot 0: %v", slots[0])
	}
}

// TestStrataArgsHelpers: the model files and the context a config file's
// args name, in both flag forms.
func TestStrataArgsHelpers(t *testing.T) {
	t.Parallel()
	args := []string{"--native=m-00001-of-00002.gguf", "--ple-gguf", "m-00002-of-00002.gguf", "--max-context", "32768"}
	if got := StrataModelFiles(args); len(got) != 2 || got[0] != "m-00001-of-00002.gguf" || got[1] != "m-00002-of-00002.gguf" {
		t.Errorf("model files %q", got)
	}
	if n := StrataContext(args); n != 32768 {
		t.Errorf("context %d", n)
	}
	if n := StrataContext([]string{"--max-context", "auto"}); n != 0 {
		t.Errorf("a context that is not a number: %d", n)
	}
}
