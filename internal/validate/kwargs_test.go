package validate

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// TestTheKwargsAreTheBodies: configuration.chat_template_kwargs is what
// every request body carried in chat_template_kwargs, the profile's effort
// among it where the dialect sends it there; a configuration that says
// less than was sent, or more, is a violation.
func TestTheKwargsAreTheBodies(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	for _, c := range []struct {
		name string
		set  func(kw map[string]any)
	}{
		{"the effort left out", func(kw map[string]any) { delete(kw, "reasoning_effort") }},
		{"a key never sent", func(kw map[string]any) { kw["thinking_budget"] = "none" }},
		{"another effort", func(kw map[string]any) { kw["reasoning_effort"] = "high" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fsys := folder(t, "baseline")
			editJSON(t, fsys, contract.ResultsFile, func(doc map[string]any) {
				kw := at(doc, "configuration", "chat_template_kwargs")
				if kw["reasoning_effort"] != "xhigh" {
					t.Fatalf("the committed folder's chat_template_kwargs %v do not hold the effort its bodies carry", kw)
				}
				c.set(kw)
			})
			mustCatch(t, fsys, b, contract.PtrConfigurationChatTemplateKwargs, "every request body carried")
		})
	}
	t.Run("null while the bodies carry it", func(t *testing.T) {
		t.Parallel()
		fsys := folder(t, "baseline")
		editJSON(t, fsys, contract.ResultsFile, func(doc map[string]any) {
			at(doc, "configuration")["chat_template_kwargs"] = nil
			at(doc, "missing")[contract.PtrConfigurationChatTemplateKwargs] = "not sent"
		})
		mustCatch(t, fsys, b, contract.PtrConfigurationChatTemplateKwargs, "every request body carried")
	})
	t.Run("kwargs while no request was sent", func(t *testing.T) {
		t.Parallel()
		fsys := folder(t, "aborted")
		var out []byte
		for _, line := range bytes.SplitAfter(fsys[contract.OutputsFile].Data, []byte("\n")) {
			var o map[string]json.RawMessage
			if len(line) == 0 {
				continue
			}
			if err := json.Unmarshal(line, &o); err != nil {
				t.Fatal(err)
			}
			o["request"] = json.RawMessage("null")
			b, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			out = append(append(out, b...), '\n')
		}
		fsys[contract.OutputsFile].Data = out
		mustCatch(t, fsys, b, contract.PtrConfigurationChatTemplateKwargs, "no request was sent")
	})
	t.Run("as sent", func(t *testing.T) {
		t.Parallel()
		mustBeClean(t, folder(t, "baseline"))
	})
}
