package derive

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/protocol"
)

// Model check states.
const (
	// ModelAdmitted: the metadata names the profile's model, and nothing
	// in it names another.
	ModelAdmitted = "admitted"
	// ModelOther: the metadata names another model, family, tokenizer or
	// vocabulary: the run is nonconforming ("derivative models require a
	// separate profile").
	ModelOther = "another model"
	// ModelUnverified: the metadata cannot tell; the model is what the
	// operator declared, not verified (not nonconforming on that ground).
	ModelUnverified = "declared, not verified"
)

// ModelCheck is the model held to its profile's rule.
type ModelCheck struct {
	State  string   `json:"state"`
	Rule   string   `json:"rule"`
	Found  []string `json:"found"`
	Reason string   `json:"reason"`
}

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

// normalName is a name in lower case without spaces, dots, dashes or
// underscores ("Qwen3.8-Flash-Next" → "qwen38flashnext").
func normalName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', '-', '_', '/':
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// CheckModel holds what the metadata says to the profile's model rule.
// profile names the profile in the reason.
func CheckModel(rule protocol.ModelRule, profile string, md *ModelMetadata) ModelCheck {
	c := ModelCheck{Rule: fmt.Sprintf("%s admits %s", profile, rule.Model), Found: []string{}}
	if md == nil {
		c.State, c.Reason = ModelUnverified, "the model files carry no GGUF metadata strata could read, so which model ran cannot be verified"
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
		norm := normalName(n.v)
		if d := derivative(norm, rule); d != "" {
			other = append(other, fmt.Sprintf("%s %q names a derivative (%s)", n.key, n.v, d))
			continue
		}
		switch {
		case n.key == "general.finetune":
		case otherModel(norm, rule) != "":
			other = append(other, fmt.Sprintf("%s %q names another model (%s)", n.key, n.v, otherModel(norm, rule)))
		case matchesName(norm, rule):
			named = true
		case namesFamily(norm):
			other = append(other, fmt.Sprintf("%s %q names another model", n.key, n.v))
		}
	}
	for _, b := range md.BaseModels {
		c.Found = append(c.Found, fmt.Sprintf("base model %q", b))
		norm := normalName(b)
		switch {
		case derivative(norm, rule) != "":
			other = append(other, fmt.Sprintf("the base model %q is a derivative (%s)", b, derivative(norm, rule)))
		case otherModel(norm, rule) != "" || !matchesName(norm, rule) && namesFamily(norm):
			other = append(other, fmt.Sprintf("the base model %q is another model", b))
		case matchesName(norm, rule):
			named = true
		}
	}
	switch {
	case len(other) > 0:
		c.State = ModelOther
		c.Reason = fmt.Sprintf("the model is not the profile's: %s; the profile %s admits %s (derivative and other models require a separate profile)",
			strings.Join(other, "; "), profile, rule.Model)
	case named:
		c.State, c.Reason = ModelAdmitted, "the GGUF metadata names the profile's model"
	default:
		c.State, c.Reason = ModelUnverified, "the GGUF metadata names no model, so which model ran is what the operator declared, not verified"
	}
	return c
}

func matchesName(norm string, rule protocol.ModelRule) bool {
	for _, n := range rule.Names {
		if strings.Contains(norm, n) {
			return true
		}
	}
	return false
}

func derivative(norm string, rule protocol.ModelRule) string { return firstIn(norm, rule.Derivatives) }

// other2 is the other model of the family a name names ("" none).
func otherModel(norm string, rule protocol.ModelRule) string { return firstIn(norm, rule.Others) }

func firstIn(norm string, parts []string) string {
	for _, d := range parts {
		if strings.Contains(norm, d) {
			return d
		}
	}
	return ""
}

func namesFamily(norm string) bool {
	for _, f := range families {
		if strings.Contains(norm, f) {
			return true
		}
	}
	return false
}

// MetadataOf reads the GGUF metadata a result keeps (extensions.gguf),
// nil when it has none.
func MetadataOf(res *contract.Results) *ModelMetadata {
	var ext struct {
		GGUF *struct {
			Metadata map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"metadata"`
		} `json:"gguf"`
	}
	if json.Unmarshal(res.Extensions, &ext) != nil || ext.GGUF == nil || ext.GGUF.Metadata == nil {
		return nil
	}
	m := ext.GGUF.Metadata
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(m[k].Value, &s)
		return s
	}
	md := &ModelMetadata{Name: str("name"), Basename: str("basename"), Finetune: str("finetune"),
		Architecture: str("architecture"), TokenizerPre: str("tokenizer_pre")}
	_ = json.Unmarshal(m["tokenizer_tokens"].Value, &md.Tokens)
	_ = json.Unmarshal(m["base_models"].Value, &md.BaseModels)
	return md
}

// ModelOf is the model check of a result: its GGUF metadata against the
// model rule of the protocol it names.
func ModelOf(res *contract.Results) (ModelCheck, bool) {
	def, ok := protocol.Known().Lookup(res.Protocol.ID)
	if !ok {
		return ModelCheck{}, false
	}
	return CheckModel(def.Models, def.Profile, MetadataOf(res)), true
}
