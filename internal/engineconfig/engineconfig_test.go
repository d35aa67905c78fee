package engineconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

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
				"offloading":   `{"--gpu-layers":"99","--mlock":true,"--n-cpu-moe":"12","--override-tensor":"exps=CPU"}`,
				"prefill":      `{"--batch-size":"4096","--flash-attn":"on","--ubatch-size":"1024"}`,
				"mtp":          `{"--draft-max":"16","--model-draft":"/m/draft.gguf","speculative":false}`,
				"expert_cache": `{}`, "calibration": `{}`, "experimental_options": `{}`,
			}},
		{name: "llama.cpp already serving (arguments unknown)",
			src:     Sources{Engine: "llama.cpp", Props: props, Slots: slotsNP4},
			objects: map[string]string{"mtp": `{"speculative":false}`, "expert_cache": `{}`, "calibration": `{}`, "experimental_options": `{}`},
			missing: []string{"kv_cache", "offloading", "prefill"}},
		{name: "llama.cpp with default options",
			src:     Sources{Engine: "llama.cpp", Props: props, Slots: slots, Args: []string{"-m", "/m/q.gguf", "--port", "8080"}},
			objects: map[string]string{"kv_cache": `{}`, "offloading": `{}`, "prefill": `{}`, "mtp": `{"speculative":false}`}},
		{name: "Strata-style /v1/status",
			src:     Sources{Status: json.RawMessage(`{"version":"0.2.1","configuration":{"kv_cache":{"type_k":"q8_0"},"expert_cache":{"gib":24,"policy":"lru"},"offloading":{},"prefill":{"chunk":2048},"mtp":{"enabled":true,"depth":2},"calibration":null,"experimental_options":{}}}`)},
			objects: map[string]string{"kv_cache": `{"type_k":"q8_0"}`, "expert_cache": `{"gib":24,"policy":"lru"}`, "mtp": `{"enabled":true,"depth":2}`, "offloading": `{}`},
			missing: []string{"calibration"}},
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
		})
	}
}
