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
		{"Flash-Next under the stand-in", standIn, flash, contract.ModelOther, []string{"names another model (qwen3.8)", `general.architecture "qwen35moe"`}},
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

// TestModelNamesMatchWholeParts: a name rule matches whole parts of a
// name, so Qwen3-8B is Qwen3 (not Qwen3.8) and every Qwen3 size passes the
// stand-in, under both protocols of the table strata ships.
func TestModelNamesMatchWholeParts(t *testing.T) {
	t.Parallel()
	standIn, _ := protocol.Known().Lookup(protocol.StandInID)
	spec, _ := protocol.Known().Lookup(protocol.SpecID)
	qwen3 := func(name string) *ModelMetadata {
		return &ModelMetadata{Name: name, Architecture: "qwen3", TokenizerPre: "qwen2", Tokens: 151936}
	}
	flash := func(name string) *ModelMetadata {
		return &ModelMetadata{Name: name, Architecture: "qwen35moe", TokenizerPre: "qwen35", Tokens: 248320}
	}
	type want struct{ standIn, spec string }
	admitted, other := contract.ModelAdmitted, contract.ModelOther
	cases := []struct {
		name string
		md   *ModelMetadata
		want want
	}{
		{"Qwen3.8-Flash-Next", flash("Qwen3.8-Flash-Next"), want{other, admitted}},
		{"Qwen3.8 Flash Next", flash("Qwen3.8 Flash Next"), want{other, admitted}},
		{"Qwen3-Coder", qwen3("Qwen3-Coder-30B-A3B-Instruct"), want{other, other}},
		{"Qwen3-Next", qwen3("Qwen3-Next-80B-A3B"), want{other, other}},
		{"Qwen3.5", qwen3("Qwen3.5-27B"), want{other, other}},
		{"Qwen3.8FlashNext", flash("Qwen3.8FlashNext"), want{other, admitted}},
		{"Qwen3Coder in one part", qwen3("Qwen3Coder-30B"), want{other, other}},
		{"a fine-tuned Qwen3-8B", qwen3("Qwen3-8B-Fine-Tuned"), want{other, other}},
	}
	for _, n := range []string{"Qwen3-8B", "Qwen3 8B", "Qwen3-8B-Base", "Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-14B", "Qwen3-32B", "Qwen3-30B-A3B", "Qwen3-235B-A22B"} {
		cases = append(cases, struct {
			name string
			md   *ModelMetadata
			want want
		}{n, qwen3(n), want{admitted, other}})
	}
	for _, c := range cases {
		for _, p := range []struct {
			def  protocol.Definition
			want string
		}{{standIn, c.want.standIn}, {spec, c.want.spec}} {
			t.Run(c.name+" under "+p.def.Profile, func(t *testing.T) {
				t.Parallel()
				if got := CheckModel(p.def.Models, p.def.Profile, c.md); got.State != p.want {
					t.Errorf("state %q (%s), want %q", got.State, got.Reason, p.want)
				}
			})
		}
	}
}
