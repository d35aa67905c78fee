package protocol

import (
	"fmt"
	"sort"
	"strings"
)

// The protocols strata knows, as data. Everything else reads a protocol's
// ID, profile, corpus SHA-256, bundle source, template and model rule from
// here; nothing else names an ID or a corpus SHA. Both share the spec's
// construction, stages, caps, seeds, settings and scoring (the rest of this
// package); they differ in the corpus and in the models they admit.
const (
	// SpecID is the spec's own protocol: the bundle in a Strata checkout's
	// bench/prompts/standard-v1, built from a Flash-Next pack's tokenizer
	// and Strata's serve/chat_template.jinja (BENCHMARK_PROTOCOL.md).
	SpecID = "strata-qwen38-thinking-v1-draft.1"
	// StandInID is strata's stand-in: the spec's construction with the
	// Qwen3 tokenizer and chat template of ../shared/tokenizer/qwen3, whose
	// bundle strata embeds. Its counts differ from the spec's (a different
	// tokenizer and template), so by the spec's own rule ("changes to
	// prompts … require a new protocol ID") it is another protocol.
	StandInID = "strata-qwen3-thinking-v1-draft.1"
)

// BundleSource is where a protocol's bundle comes from.
type BundleSource string

const (
	// BundleEmbedded is the bundle is in the strata binary.
	BundleEmbedded BundleSource = "embedded"
	// BundleCheckout is the bundle is read from a Strata checkout's
	// bench/prompts/<BundleName> (or --bundle DIR) and verified byte for
	// byte before anything is sent.
	BundleCheckout BundleSource = "checkout"
)

// ModelRule is which models a profile admits, as GGUF metadata can show
// them: a model that names another model, family, tokenizer or vocabulary
// is not the profile's; one whose metadata cannot tell is declared, not
// verified.
type ModelRule struct {
	// Model names the admitted model in words.
	Model string
	// Names are the model's names in lower case, their parts joined by
	// dashes, one of which whole parts of general.name or general.basename
	// must spell ("qwen3" is in "Qwen3-8B", "qwen3.8" is not).
	Names []string
	// Architectures are the admitted general.architecture values (empty:
	// any).
	Architectures []string
	// TokenizerPre and Tokens are the model's tokenizer.ggml.pre and the
	// length of tokenizer.ggml.tokens (its vocabulary).
	TokenizerPre string
	Tokens       int
	// Derivatives are names (as Names) that make another model of the
	// family (a Coder, a fine-tune): "require a separate profile". Others
	// are the names of other models whose names begin with the admitted
	// one ("qwen3.5", "qwen3-next" begin with "qwen3").
	Derivatives, Others []string
	// Source says where the rule's facts come from.
	Source string
}

// Definition is one protocol.
type Definition struct {
	ID           string
	Profile      string
	CorpusSHA256 string
	Bundle       BundleSource
	// BundleName is the bundle's name (its build.json names it, and a
	// checkout's bundle is the folder of that name under bench/prompts).
	BundleName string
	// Template names the chat template the bundle was built with.
	Template string
	Models   ModelRule
	// About says what the protocol is, for help texts and READMEs.
	About string
}

// Spec reports whether d is the spec's own protocol.
func (d Definition) Spec() bool { return d.ID == SpecID }

// Table is the protocols a strata knows. Tests may inject another (a
// bundle built under the spec's ID, with its corpus SHA).
type Table []Definition

// derivatives are the name parts of Qwen models that are not the base
// model: "Fine-tuned, Coder, Swift, or other derivative models require a
// separate profile".
var derivatives = []string{"coder", "swift", "abliterated", "uncensored", "distill", "distilled", "fine-tune", "fine-tuned", "merge", "merged"}

// Known is the table strata ships.
func Known() Table {
	return Table{
		{
			ID: SpecID, Profile: "qwen3.8-flash-next-thinking",
			CorpusSHA256: "e75eff8b9feea04f745520b392c4c17d97aefc1ba185e222aa6740efa8f68407",
			Bundle:       BundleCheckout, BundleName: BundleName, Template: "serve/chat_template.jinja of the Strata checkout",
			Models: ModelRule{
				Model: "Qwen/Qwen3.8-Flash-Next (the original weights and their quantizations)",
				Names: []string{"qwen3.8-flash-next"}, TokenizerPre: "qwen35", Tokens: 248320,
				Derivatives: derivatives,
				Source:      "the spec's profile; vocabulary and pre-tokenizer from tools/strata_tokenizer.py (Niko1221/Strata @29257720: 248,320 tokens, pre qwen35)",
			},
			About: "the spec's protocol: the bundle of a Strata checkout (Flash-Next pack tokenizer, Strata's template)",
		},
		{
			ID: StandInID, Profile: "qwen3-thinking",
			CorpusSHA256: standInCorpusSHA256,
			Bundle:       BundleEmbedded, BundleName: StandInBundleName, Template: "chat_template.jinja of ../shared/tokenizer/qwen3 (bench/prompts/template)",
			Models: ModelRule{
				Model: "Qwen3 models that think (the Qwen3 tokenizer and vocabulary)",
				Names: []string{"qwen3"}, Architectures: []string{"qwen3", "qwen3moe"}, TokenizerPre: "qwen2", Tokens: 151936,
				Derivatives: derivatives, Others: []string{"qwen3.5", "qwen3.6", "qwen3.7", "qwen3.8", "qwen3-next", "qwen3-vl", "qwen3-omni", "qwen3-embedding", "qwen3-reranker"},
				Source: "../shared/tokenizer/qwen3 and the Qwen3 GGUFs of ../shared/engines/llama.cpp: llama.cpp's converter names the pre-tokenizer qwen2 and pads the vocabulary to the model's 151,936 embedding rows",
			},
			About: "strata's stand-in: the spec's construction with the Qwen3 tokenizer and template, embedded",
		},
	}
}

// StandInBundleName is the stand-in's bundle (bench/prompts/ of this
// repository, embedded). It is not named standard-v1, so that strata's
// own checkout is not taken for a Strata checkout holding the spec's
// bundle.
const StandInBundleName = "qwen3-standard-v1"

// standInCorpusSHA256 is the SHA-256 of the embedded bundle's
// MANIFEST.sha256 (README.md, "The frozen bundle").
const standInCorpusSHA256 = "538a81cc45cba15d22ea3a0819493b8198ef57fd1348db31c8c8d143fd35d8ec"

// Lookup returns the protocol with that ID.
func (t Table) Lookup(id string) (Definition, bool) {
	for _, d := range t {
		if d.ID == id {
			return d, true
		}
	}
	return Definition{}, false
}

// Must returns the protocol with that ID or an error naming the known ones.
func (t Table) Must(id string) (Definition, error) {
	if d, ok := t.Lookup(id); ok {
		return d, nil
	}
	return Definition{}, fmt.Errorf("unknown protocol %q (strata knows %s)", id, strings.Join(t.IDs(), ", "))
}

// IDs lists the table's protocol IDs, sorted.
func (t Table) IDs() []string {
	var out []string
	for _, d := range t {
		out = append(out, d.ID)
	}
	sort.Strings(out)
	return out
}

// WithCorpus returns the table with one protocol's corpus SHA-256
// replaced (tests build a bundle under an ID and inject its SHA).
func (t Table) WithCorpus(id, sha string) Table {
	out := append(Table(nil), t...)
	for i := range out {
		if out[i].ID == id {
			out[i].CorpusSHA256 = sha
		}
	}
	return out
}

// StandIn is the stand-in's definition in the table strata ships.
func StandIn() Definition {
	d, _ := Known().Lookup(StandInID)
	return d
}
