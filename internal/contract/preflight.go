package contract

import (
	"fmt"

	"github.com/strata-bench/strata/internal/protocol"
)

// PreflightFixture is one fixture's outcome of the preflight.
type PreflightFixture struct {
	RequestID string `json:"request_id"`
	// Agree is true when the rendering is identical and the count equals
	// the frozen one.
	Agree bool `json:"agree"`
	// RenderingAgrees is false when the bytes differ; FirstDifference is
	// then the byte offset, with a little of each side.
	RenderingAgrees bool `json:"rendering_agrees"`
	// RenderingUnchecked is set when the engine returns a count without
	// its rendering (vLLM's /tokenize): only the count is compared.
	RenderingUnchecked bool   `json:"rendering_unchecked,omitempty"`
	FirstDifference    *int   `json:"first_differing_byte,omitempty"`
	EngineText         string `json:"engine_text,omitempty"`
	StrataText         string `json:"strata_text,omitempty"`
	// EngineTokens is the engine's count of its own rendering; FrozenTokens
	// the bundle's input_tokens.
	EngineTokens *int `json:"engine_tokens,omitempty"`
	FrozenTokens int  `json:"frozen_tokens"`
	// LengthRule is set for a 4K/16K performance fixture the engine counts
	// outside the 2 % rule: the run will be nonconforming.
	LengthRule string `json:"length_rule,omitempty"`
	// Problem says why this fixture could not be checked; NoAnswer is set
	// when it is that a route did not answer at all.
	Problem  string `json:"problem,omitempty"`
	NoAnswer bool   `json:"-"`
}

// Preflight is the whole check (extensions.preflight): the engine's own
// chat template and tokenizer held to the bundle before the warm-up.
type Preflight struct {
	// Verifiable is false when the engine offers no way to render and
	// tokenize (Reason says why); then Fixtures is empty.
	Verifiable bool   `json:"verifiable"`
	Reason     string `json:"reason,omitempty"`
	// Stopped says why the check ended before its last fixture (a route
	// that did not answer, the overall deadline); the fixtures after it
	// are not checked.
	Stopped string `json:"stopped,omitempty"`
	Source  string `json:"source"`
	// OffChatPath is set when the check's route renders the bundle's
	// template otherwise than the engine's chat path (vLLM's /tokenize,
	// which leaves out reasoning_effort, with a template that reads it;
	// Source says how): what it shows to differ is said, and is no
	// evidence of another workload.
	OffChatPath bool `json:"off_chat_path,omitempty"`
	// The template the engine reports and the one the bundle was built with.
	EngineTemplateSHA256 string             `json:"engine_template_sha256,omitempty"`
	BundleTemplateSHA256 string             `json:"bundle_template_sha256"`
	TemplateAgrees       bool               `json:"template_agrees"`
	TemplateNote         string             `json:"template_note,omitempty"`
	Fixtures             []PreflightFixture `json:"fixtures"`
	Agree                int                `json:"agree"`
	Differ               int                `json:"differ"`
	// Context is what the engine's per-slot context means for the
	// fixtures (nil when the engine does not report it).
	Context *ContextFit `json:"context,omitempty"`
}

// ContextFit compares the per-slot context with the fixtures: a prompt
// longer than the context cannot run (llama.cpp answers 400
// exceed_context_size_error), and a prompt whose cap does not fit may stop
// early when the context fills (finish_reason length below the cap).
type ContextFit struct {
	Tokens  int64    `json:"per_slot_tokens"`
	TooLong []string `json:"prompt_exceeds_context"`
	MayFill []string `json:"prompt_plus_cap_exceeds_context"`
}

// The outcomes of a preflight fixture, in the words the terminal and a
// result's README both use.
const (
	OutcomeAgree      = "agree"
	OutcomeDiffer     = "differ"
	OutcomeNotChecked = "not checked"
)

// Outcome is what the check showed of the fixture: it agrees; it differs
// (the engine showed another rendering or count, or resolved the sampling
// otherwise); or it was not checked (a route failed before the engine
// showed a rendering or a count), which shows nothing either way. Differ
// counts the last two alike; people are told which.
func (f PreflightFixture) Outcome() string {
	switch {
	case f.Agree:
		return OutcomeAgree
	case f.FirstDifference != nil || f.EngineTokens != nil:
		return OutcomeDiffer
	}
	return OutcomeNotChecked
}

// ByOutcome lists the fixtures' request IDs by outcome, in check order.
func (r *Preflight) ByOutcome() map[string][]string {
	out := map[string][]string{}
	for _, f := range r.Fixtures {
		out[f.Outcome()] = append(out[f.Outcome()], f.RequestID)
	}
	return out
}

// Tally counts the fixtures by outcome: "34 fixtures: 30 agree, 2 differ,
// 2 not checked" (not checked only when there are).
func (r *Preflight) Tally() string {
	by := r.ByOutcome()
	s := fmt.Sprintf("%d fixtures: %d %s, %d %s", len(r.Fixtures), len(by[OutcomeAgree]), OutcomeAgree, len(by[OutcomeDiffer]), OutcomeDiffer)
	if n := len(by[OutcomeNotChecked]); n > 0 {
		s += fmt.Sprintf(", %d %s", n, OutcomeNotChecked)
	}
	return s
}

// TemplateLine says whether the engine's chat template is the bundle's,
// for people.
func (r *Preflight) TemplateLine() string {
	switch {
	case r.EngineTemplateSHA256 == "":
		return "template: " + r.TemplateNote
	case r.TemplateAgrees:
		return fmt.Sprintf("template: the engine's chat template is the bundle's (SHA-256 %s)", r.EngineTemplateSHA256)
	}
	return fmt.Sprintf("template: DIFFERS: the engine's chat template hashes to %s, the bundle was built with %s", r.EngineTemplateSHA256, r.BundleTemplateSHA256)
}

// LengthProblems lists the fixtures the engine counts outside the 2 % rule.
func (r *Preflight) LengthProblems() []string {
	var out []string
	for _, f := range r.Fixtures {
		if f.LengthRule != "" {
			out = append(out, f.RequestID+": "+f.LengthRule)
		}
	}
	return out
}

// OK reports whether every fixture was verified and agrees, and the
// engine's template, where it reveals one, is the bundle's.
func (r *Preflight) OK() bool {
	templateOK := r.TemplateAgrees || r.EngineTemplateSHA256 == ""
	return r.Verifiable && templateOK && r.Stopped == "" && r.Differ == 0 && r.Agree == len(r.Fixtures)
}

// Differing are the fixtures the engine showed to become another prompt
// than the bundle's: its rendering differs, or its count of a rendering it
// showed equal is not the frozen one (its tokenizer), or it counts a
// fixture without tools otherwise. A count alone of a tool case is not
// among them: a server may hand the template its own shape of the tools,
// which the engine's chat path then runs as it does for everyone: SGLang
// renders item.model_dump() of its Tool model, "strict" and
// "defer_loading" added (sgl-project/sglang python/sglang/srt/entrypoints/
// openai/serving_chat.py _process_messages and protocol.py @004c82e0; its
// later builds hand a template that reads the flat shape
// item.function.model_dump()), Strata the inner function object (Niko1221/Strata
// serve/frontend.py openai_to_messages, the version beside server.py
// @452325a9 that internal/simengine/strata.go cites). A fixture that could not be checked (a route that
// failed) shows nothing, and a check off the chat path nothing of the
// workload.
func (r *Preflight) Differing() []PreflightFixture {
	if r.OffChatPath {
		return nil
	}
	var out []PreflightFixture
	for _, f := range r.Fixtures {
		counted := f.EngineTokens != nil && *f.EngineTokens != f.FrozenTokens
		if f.FirstDifference != nil || counted && (f.RenderingAgrees || !CarriesTools(f.RequestID)) {
			out = append(out, f)
		}
	}
	return out
}

// CountsAloneDiffer reports whether every fixture that did not agree was
// answered and counted, and only its count differs (no route that failed,
// no rendering that differs): with Differing empty, such a preflight
// showed nothing of the workload.
func (r *Preflight) CountsAloneDiffer() bool {
	for _, f := range r.Fixtures {
		if f.Agree {
			continue
		}
		if f.Problem != "" || f.NoAnswer || f.FirstDifference != nil || f.EngineTokens == nil || *f.EngineTokens == f.FrozenTokens {
			return false
		}
	}
	return true
}

// ShowsToolRendering reports whether the check saw the engine's chat path
// render a tool case, equal to the bundle's or not.
func (r *Preflight) ShowsToolRendering() bool {
	if r == nil || r.OffChatPath {
		return false
	}
	for _, f := range r.Fixtures {
		if CarriesTools(f.RequestID) && (f.RenderingAgrees || f.FirstDifference != nil) {
			return true
		}
	}
	return false
}

// CarriesTools reports whether a request offers tools (the tool-call cases).
func CarriesTools(id string) bool {
	q, ok := protocol.Lookup(id)
	if !ok || q.Phase != protocol.PhaseSanity {
		return false
	}
	c, err := protocol.SanityCategory(q.CaseID)
	return err == nil && c == protocol.CategoryToolCall
}

// CountOnly reports whether the preflight compared counts only: the engine
// returned no rendering (vLLM's /tokenize), so the template itself was not
// held to the bundle's.
func (r *Preflight) CountOnly() bool {
	for _, f := range r.Fixtures {
		if f.RenderingUnchecked {
			return true
		}
	}
	return false
}
