package derive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/protocol"
)

// ModelMetadata is what the GGUF metadata of the run's first model file
// says about the model (extensions.gguf.metadata); zero values are
// absent.
type ModelMetadata struct {
	Name, Basename, Finetune, Architecture, TokenizerPre string
	Tokens                                               int64
	BaseModels                                           []string
}

// families are the names of model families: a model name that holds none
// of them says nothing about which model it is ("Model", "model-q4").
var families = []string{"qwen", "llama", "mistral", "mixtral", "gemma", "phi", "deepseek", "glm", "gpt", "falcon", "yi", "olmo", "granite", "command", "smol", "internlm", "minimax", "kimi"}

// nameParts are the parts of a name in lower case, split at spaces,
// dashes, underscores and slashes; a dot is part of a version
// ("Qwen3.8-Flash-Next" → "qwen3.8" "flash" "next", "Qwen3-8B" → "qwen3"
// "8b").
func nameParts(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		switch r {
		case ' ', '-', '_', '/':
			return true
		}
		return false
	})
}

// CheckModel holds what the metadata says to the profile's model rule.
// profile names the profile in the reason.
func CheckModel(rule protocol.ModelRule, profile string, md *ModelMetadata) contract.ModelCheck {
	c := contract.ModelCheck{Rule: fmt.Sprintf("%s admits %s", profile, rule.Model), Found: []string{}}
	if md == nil {
		c.State, c.Reason = contract.ModelUnverified, "the model files carry no GGUF metadata strata could read, so which model ran cannot be verified"
		return c
	}
	var other []string
	if md.Architecture != "" && len(rule.Architectures) > 0 && !slices.Contains(rule.Architectures, md.Architecture) {
		other = append(other, fmt.Sprintf("general.architecture %q is not %s", md.Architecture, strings.Join(rule.Architectures, " or ")))
	}
	if md.TokenizerPre != "" && rule.TokenizerPre != "" && md.TokenizerPre != rule.TokenizerPre {
		other = append(other, fmt.Sprintf("tokenizer.ggml.pre %q is another tokenizer than %q", md.TokenizerPre, rule.TokenizerPre))
	}
	if md.Tokens > 0 && rule.Tokens > 0 && md.Tokens != int64(rule.Tokens) {
		other = append(other, fmt.Sprintf("the vocabulary has %d tokens, not %d", md.Tokens, rule.Tokens))
	}
	named := false
	for _, n := range []struct{ key, v string }{{"general.name", md.Name}, {"general.basename", md.Basename}, {"general.finetune", md.Finetune}} {
		if n.v == "" {
			continue
		}
		c.Found = append(c.Found, fmt.Sprintf("%s %q", n.key, n.v))
		parts := nameParts(n.v)
		if d := derivative(parts, rule); d != "" {
			other = append(other, fmt.Sprintf("%s %q names a derivative (%s)", n.key, n.v, d))
			continue
		}
		switch {
		case n.key == "general.finetune":
		case otherModel(parts, rule) != "":
			other = append(other, fmt.Sprintf("%s %q names another model (%s)", n.key, n.v, otherModel(parts, rule)))
		case matchesName(parts, rule):
			named = true
		case namesFamily(parts):
			other = append(other, fmt.Sprintf("%s %q names another model", n.key, n.v))
		}
	}
	for _, b := range md.BaseModels {
		c.Found = append(c.Found, fmt.Sprintf("base model %q", b))
		parts := nameParts(b)
		switch {
		case derivative(parts, rule) != "":
			other = append(other, fmt.Sprintf("the base model %q is a derivative (%s)", b, derivative(parts, rule)))
		case otherModel(parts, rule) != "" || !matchesName(parts, rule) && namesFamily(parts):
			other = append(other, fmt.Sprintf("the base model %q is another model", b))
		case matchesName(parts, rule):
			named = true
		}
	}
	switch {
	case len(other) > 0:
		c.State = contract.ModelOther
		c.Reason = fmt.Sprintf("the model is not the profile's: %s; the profile %s admits %s (derivative and other models require a separate profile)",
			strings.Join(other, "; "), profile, rule.Model)
	case named:
		c.State, c.Reason = contract.ModelAdmitted, "the GGUF metadata names the profile's model"
	default:
		c.State, c.Reason = contract.ModelUnverified, "the GGUF metadata names no model, so which model ran is what the operator declared, not verified"
	}
	return c
}

func matchesName(parts []string, rule protocol.ModelRule) bool {
	return firstIn(parts, rule.Names) != ""
}

func derivative(parts []string, rule protocol.ModelRule) string {
	return firstIn(parts, rule.Derivatives)
}

// otherModel is the other model of the family a name names ("" none).
func otherModel(parts []string, rule protocol.ModelRule) string { return firstIn(parts, rule.Others) }

// firstIn is the first of names that some whole parts of a name spell: a
// run of the name's parts, joined, is the name's parts joined
// ("Qwen3.8 Flash-Next" and "Qwen3.8FlashNext" spell "qwen3.8-flash-next";
// "Qwen3-8B" spells "qwen3", not "qwen3.8").
func firstIn(parts, names []string) string {
	for _, n := range names {
		if spells(parts, strings.Join(nameParts(n), "")) {
			return n
		}
	}
	return ""
}

func spells(parts []string, want string) bool {
	for i := range parts {
		run := ""
		for _, p := range parts[i:] {
			if run += p; len(run) >= len(want) {
				break
			}
		}
		if run == want {
			return true
		}
	}
	return false
}

// namesFamily reports whether a name holds a family's name anywhere, not
// only in whole parts: families are spelled in many ways
// ("tiny-qwen3-thinker", "Llama3"), and finding one never admits a model.
func namesFamily(parts []string) bool {
	joined := strings.Join(parts, "")
	for _, f := range families {
		if strings.Contains(joined, f) {
			return true
		}
	}
	return false
}

// MetadataOf reads the GGUF metadata a result keeps (extensions.gguf),
// nil when it has none.
func MetadataOf(res *contract.Results) *ModelMetadata {
	g := res.Extensions.GGUF
	if g == nil || g.Metadata == nil {
		return nil
	}
	md := &ModelMetadata{Name: g.String("name"), Basename: g.String("basename"), Finetune: g.String("finetune"),
		Architecture: g.String("architecture"), TokenizerPre: g.String("tokenizer_pre")}
	switch n := g.Metadata["tokenizer_tokens"].Value.(type) {
	case float64:
		md.Tokens = int64(n)
	case uint64:
		md.Tokens = int64(n)
	case int:
		md.Tokens = int64(n)
	}
	switch v := g.Metadata["base_models"].Value.(type) {
	case []string:
		md.BaseModels = v
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				md.BaseModels = append(md.BaseModels, s)
			}
		}
	}
	return md
}

// ModelOf is the model check of a result: its GGUF metadata against the
// model rule of the protocol it names.
func ModelOf(res *contract.Results) (contract.ModelCheck, bool) {
	def, ok := protocol.Known().Lookup(res.Protocol.ID)
	if !ok {
		return contract.ModelCheck{}, false
	}
	return CheckModel(def.Models, def.Profile, MetadataOf(res)), true
}
