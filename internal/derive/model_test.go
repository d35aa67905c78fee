package derive

import (
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/protocol"
)

// TestCheckModel: the model rule of each profile on the metadata of real
// and hostile model files.
func TestCheckModel(t *testing.T) {
	t.Parallel()
	tiny := &ModelMetadata{Name: "tiny-qwen3-thinker", Architecture: "qwen3", TokenizerPre: "qwen2", Tokens: 151936}
	flash := &ModelMetadata{Name: "Qwen3.8 Flash Next", Architecture: "qwen35moe", TokenizerPre: "qwen35", Tokens: 248320,
		BaseModels: []string{"Qwen/Qwen3.8-Flash-Next"}}
	standIn, _ := protocol.Known().Lookup(protocol.StandInID)
	spec, _ := protocol.Known().Lookup(protocol.SpecID)
	for _, c := range []struct {
		name  string
		def   protocol.Definition
		md    *ModelMetadata
		state string
		says  []string
	}{
		{"the tiny thinker under the stand-in", standIn, tiny, contract.ModelAdmitted, nil},
		{"the tiny thinker under the spec", spec, tiny, contract.ModelOther, []string{`general.name "tiny-qwen3-thinker" names another model`, `tokenizer.ggml.pre "qwen2"`, "151936 tokens, not 248320", "Qwen/Qwen3.8-Flash-Next"}},
		{"Flash-Next under the spec", spec, flash, contract.ModelAdmitted, nil},
		{"Flash-Next under the stand-in", standIn, flash, contract.ModelOther, []string{"names another model (qwen38)", `general.architecture "qwen35moe"`}},
		{"a Coder", standIn, &ModelMetadata{Name: "Qwen3-Coder-30B-A3B", Architecture: "qwen3moe", TokenizerPre: "qwen2", Tokens: 151936}, contract.ModelOther, []string{"names a derivative (coder)"}},
		{"a fine-tune of Flash-Next", spec, &ModelMetadata{Name: "Flash Next Swift", Finetune: "swift", BaseModels: []string{"Qwen/Qwen3.8-Flash-Next"}}, contract.ModelOther, []string{"derivative (swift)"}},
		{"a quantizer's generic name", spec, &ModelMetadata{Name: "Model"}, contract.ModelUnverified, []string{"names no model"}},
		{"no metadata", spec, nil, contract.ModelUnverified, []string{"no GGUF metadata"}},
		{"another family", standIn, &ModelMetadata{Name: "Llama-3.1-8B-Instruct", Architecture: "llama"}, contract.ModelOther, []string{"names another model", `"llama"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := CheckModel(c.def.Models, c.def.Profile, c.md)
			if got.State != c.state {
				t.Fatalf("state %q (%s), want %q", got.State, got.Reason, c.state)
			}
			for _, s := range c.says {
				if !strings.Contains(got.Reason, s) {
					t.Errorf("reason %q lacks %q", got.Reason, s)
				}
			}
		})
	}
}
