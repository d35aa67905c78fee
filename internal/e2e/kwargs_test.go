package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/simengine"
)

// TestTheKwargsRecordedAreTheKwargsSent: configuration.chat_template_kwargs
// holds every key the request bodies carried in chat_template_kwargs, as
// sent: on llama.cpp the profile's effort beside the thinking flags, on
// vLLM the flags alone, and on Ollama's /api/chat, which has no such field
// (Ollama derives the template's flags from think), nothing was sent, so
// it is null with why.
func TestTheKwargsRecordedAreTheKwargsSent(t *testing.T) {
	t.Parallel()
	flags := map[string]any{"enable_thinking": true, "preserve_thinking": true}
	withEffort := map[string]any{"enable_thinking": true, "preserve_thinking": true, "reasoning_effort": "xhigh"}
	for _, c := range []struct {
		name, dialect string
		want          map[string]any // nil: null
		why           string         // the null's reason holds it
	}{
		{"llama.cpp", "", withEffort, ""},
		{"vLLM", simengine.DialectVLLM, flags, ""},
		{"Ollama", simengine.DialectOllama, nil, "Ollama's /api/chat has no chat_template_kwargs field: Ollama derives the template's enable_thinking (true) and reasoning_effort (\"max\") from think \"max\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := harness{}
			if c.dialect != "" {
				h.sim = func(cfg *simengine.Config) { cfg.Dialect = c.dialect }
			}
			o := h.run(t)
			o.mustBeValid(t)
			data, err := os.ReadFile(filepath.Join(o.dir, contract.ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Configuration struct {
					Kwargs map[string]any `json:"chat_template_kwargs"`
				} `json:"configuration"`
				Missing map[string]string `json:"missing"`
			}
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			if got := res.Configuration.Kwargs; !reflect.DeepEqual(got, c.want) {
				t.Errorf("configuration.chat_template_kwargs %v, want %v", got, c.want)
			}
			if why := res.Missing[contract.PtrConfigurationChatTemplateKwargs]; !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
				t.Errorf("the reason for a null chat_template_kwargs %q, want %q", why, c.why)
			}
			for id, out := range o.outs {
				var body struct {
					Kwargs map[string]any `json:"chat_template_kwargs"`
				}
				if err := json.Unmarshal(out.Request, &body); err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				if string(out.Request) != "null" && !reflect.DeepEqual(body.Kwargs, c.want) {
					t.Errorf("%s carried chat_template_kwargs %v, want %v", id, body.Kwargs, c.want)
				}
			}
		})
	}
}
