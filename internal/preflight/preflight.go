// Package preflight holds the engine's own chat template and tokenizer to
// the frozen bundle before any benchmark request is sent (the spec's
// activation checklist: "verify against a real engine that the shipped chat
// template matches the pinned upstream behavior, tool formatting
// included"). Every fixture is rendered by the engine (POST /apply-template
// with the exact chat body the run will send) and tokenized by it (POST
// /tokenize); the rendering is compared byte for byte with strata's
// rendering of the same fixture with the template the bundle was built
// with, the count with the fixture's frozen input_tokens, and the engine's
// template (/props chat_template) with the SHA-256 in the bundle's
// build.json. Nothing here changes the engine's state: no completion is
// requested.
package preflight

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/corpus"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/display"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/quantity"
)

// Endpoints the check uses (llama.cpp's server and servers built on it).
const (
	ApplyTemplate = "/apply-template"
	Tokenize      = "/tokenize"
)

// Fixture is one fixture's outcome.
type Fixture struct {
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

// Result is the whole check.
type Result struct {
	// Verifiable is false when the engine offers no way to render and
	// tokenize (Reason says why); then Fixtures is empty.
	Verifiable bool   `json:"verifiable"`
	Reason     string `json:"reason,omitempty"`
	// Stopped says why the check ended before its last fixture (a route
	// that did not answer, the overall deadline); the fixtures after it
	// are not checked.
	Stopped string `json:"stopped,omitempty"`
	Source  string `json:"source"`
	// The template the engine reports and the one the bundle was built with.
	EngineTemplateSHA256 string    `json:"engine_template_sha256,omitempty"`
	BundleTemplateSHA256 string    `json:"bundle_template_sha256"`
	TemplateAgrees       bool      `json:"template_agrees"`
	TemplateNote         string    `json:"template_note,omitempty"`
	Fixtures             []Fixture `json:"fixtures"`
	Agree                int       `json:"agree"`
	Differ               int       `json:"differ"`
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

// FitContext checks every fixture against a per-slot context of n tokens.
func FitContext(b *fixtures.Bundle, n int64) *ContextFit {
	c := &ContextFit{Tokens: n, TooLong: []string{}, MayFill: []string{}}
	for _, id := range scheduleIDs(b) {
		f := b.Fixtures[id]
		switch {
		case int64(f.InputTokens) > n:
			c.TooLong = append(c.TooLong, id)
		case int64(f.InputTokens+f.MaxTokens) > n:
			c.MayFill = append(c.MayFill, id)
		}
	}
	return c
}

// Warnings are the context's consequences in plain words.
func (c *ContextFit) Warnings() []string {
	var out []string
	if len(c.TooLong) > 0 {
		out = append(out, fmt.Sprintf("%s prompts longer than the engine's per-slot context of %d tokens and will fail: %s", quantity.Count(len(c.TooLong), "request has", "requests have"), c.Tokens, strings.Join(c.TooLong, ", ")))
	}
	if len(c.MayFill) > 0 {
		out = append(out, fmt.Sprintf("%s stop before their cap because prompt plus cap exceed the per-slot context of %d tokens: %s", quantity.Count(len(c.MayFill), "request may", "requests may"), c.Tokens, strings.Join(c.MayFill, ", ")))
	}
	return out
}

// OK reports whether every fixture was verified and agrees, and the
// engine's template, where it reveals one, is the bundle's.
func (r *Result) OK() bool {
	templateOK := r.TemplateAgrees || r.EngineTemplateSHA256 == ""
	return r.Verifiable && templateOK && r.Stopped == "" && r.Differ == 0 && r.Agree == len(r.Fixtures)
}

// Input is what the check needs.
type Input struct {
	Client  *client.Client
	Dialect dialect.Dialect
	Bundle  *fixtures.Bundle
	// Template is the bundle's template and its SHA-256.
	Template       *chattemplate.Template
	TemplateSHA256 string
	// EngineTemplate is /props chat_template ("" when not revealed).
	EngineTemplate string
	// ContextTokens is the engine's per-slot context (nil: not reported).
	ContextTokens *int64
	// Progress, when set, is told about each fixture as it is checked.
	Progress func(done, total int, f Fixture)
	// Timeout bounds each request of the check (0: RouteTimeout) and
	// Deadline the whole check (0: Deadline).
	Timeout, Deadline time.Duration
}

// The preflight's bounds: rendering or counting one fixture takes an
// engine milliseconds, so a route that does not answer in RouteTimeout
// will not answer the next fixture either, and the whole check never
// holds the run back longer than Deadline.
const (
	RouteTimeout = 10 * time.Second
	Deadline     = 90 * time.Second
)

// Check runs the preflight over every fixture of the bundle in schedule
// order (the 22 required requests, then the 12 optional ones).
func Check(ctx context.Context, in Input) *Result {
	if in.Timeout <= 0 {
		in.Timeout = RouteTimeout
	}
	if in.Deadline <= 0 {
		in.Deadline = Deadline
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, in.Deadline)
	defer cancel()
	r := &Result{Source: "POST " + ApplyTemplate + " with each request's exact body, then POST " + Tokenize + " of the engine's rendering",
		BundleTemplateSHA256: in.TemplateSHA256, Fixtures: []Fixture{}}
	if in.ContextTokens != nil {
		r.Context = FitContext(in.Bundle, *in.ContextTokens)
	}
	switch {
	case in.EngineTemplate == "":
		r.TemplateNote = "the engine does not reveal its chat template (/props chat_template)"
	default:
		sum := sha256.Sum256([]byte(in.EngineTemplate))
		r.EngineTemplateSHA256 = hex.EncodeToString(sum[:])
		r.TemplateAgrees = r.EngineTemplateSHA256 == in.TemplateSHA256
		if !r.TemplateAgrees {
			r.TemplateNote = "the engine's template (/props chat_template) is not the one the bundle was built with"
		}
	}
	if why := unverifiable(in.Dialect); why != "" {
		r.Verifiable, r.Reason = false, why
		return r
	}
	if in.Dialect.Engine == dialect.VLLM {
		r.Source = "POST " + Tokenize + " with each request's exact body (vLLM renders the messages with its template and counts them; it returns no rendering, so only the count is compared)"
	}
	ids := scheduleIDs(in.Bundle)
	for i, id := range ids {
		if parent.Err() != nil {
			r.Verifiable, r.Reason = false, "the check was interrupted"
			return r
		}
		if ctx.Err() != nil {
			r.Stopped = fmt.Sprintf("the check stopped before %s: it had taken its whole %s; %s not checked", id, in.Deadline, quantity.Count(len(ids)-i, "fixture was", "fixtures were"))
			return r
		}
		f := in.Bundle.Fixtures[id]
		out, fatal := checkOne(ctx, in, f)
		if fatal != "" && i == 0 {
			// The first fixture tells whether the engine can be checked at all.
			r.Verifiable, r.Reason = false, fatal
			return r
		}
		if out.NoAnswer {
			// A route that did not answer will not answer the next fixture:
			// one wait, not one per fixture.
			r.Verifiable = true
			r.Differ++
			r.Fixtures = append(r.Fixtures, out)
			r.Stopped = fmt.Sprintf("the check stopped at %s: %s; %s not checked", id, out.Problem, quantity.Count(len(ids)-i-1, "fixture was", "fixtures were"))
			return r
		}
		r.Verifiable = true
		if out.Agree {
			r.Agree++
		} else {
			r.Differ++
		}
		r.Fixtures = append(r.Fixtures, out)
		if in.Progress != nil {
			in.Progress(i+1, len(ids), out)
		}
	}
	return r
}

// scheduleIDs lists the bundle's fixtures in run order.
func scheduleIDs(b *fixtures.Bundle) []string {
	var ids []string
	for _, q := range protocol.Schedule(true) {
		if _, ok := b.Fixtures[q.ID]; ok {
			ids = append(ids, q.ID)
		}
	}
	if len(ids) != len(b.Fixtures) { // fixtures outside the schedule, for completeness
		var extra []string
		for id := range b.Fixtures {
			if !contains(ids, id) {
				extra = append(extra, id)
			}
		}
		sort.Strings(extra)
		ids = append(ids, extra...)
	}
	return ids
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// checkOne checks a fixture. fatal is set when the endpoints are missing,
// which on the first fixture makes the whole check not verifiable.
func checkOne(ctx context.Context, in Input, f *fixtures.Fixture) (Fixture, string) {
	out := Fixture{RequestID: f.RequestID, FrozenTokens: f.InputTokens}
	want, err := corpus.Render(in.Template, f)
	if err != nil {
		out.Problem = "strata cannot render the fixture with the bundle's template: " + err.Error()
		return out, ""
	}
	body, err := in.Dialect.Body(f)
	if err != nil {
		out.Problem = err.Error()
		return out, ""
	}
	if in.Dialect.Engine == dialect.VLLM {
		return countOnly(ctx, in, f, body, out)
	}
	got, p := post[struct {
		Prompt *string `json:"prompt"`
	}](ctx, in, ApplyTemplate, body)
	if p.text != "" {
		out.Problem, out.NoAnswer = p.text, p.noAnswer
		return out, fatalText(p)
	}
	if got.Prompt == nil {
		out.Problem = "POST " + ApplyTemplate + " answered without a prompt"
		return out, "the engine's " + ApplyTemplate + " answers without a rendered prompt"
	}
	engine := *got.Prompt
	out.RenderingAgrees = engine == want
	if !out.RenderingAgrees {
		at := firstDifference(engine, want)
		out.FirstDifference = &at
		out.EngineText, out.StrataText = around(engine, at), around(want, at)
	}
	req, _ := json.Marshal(map[string]any{"content": engine, "add_special": true, "parse_special": true})
	tok, p := post[struct {
		Tokens []json.RawMessage `json:"tokens"`
	}](ctx, in, Tokenize, req)
	if p.text != "" {
		out.Problem, out.NoAnswer = p.text, p.noAnswer
		return out, ""
	}
	n := len(tok.Tokens)
	out.EngineTokens = &n
	if target, ok := protocol.TargetTokens(f.CaseID); ok && f.Phase == protocol.PhasePerformance && !protocol.WithinLengthRule(n, target) {
		out.LengthRule = fmt.Sprintf("the engine counts %d tokens, not within %d%% of %d: the run will be nonconforming", n, protocol.LengthTolerancePercent, target)
	}
	out.Agree = out.RenderingAgrees && n == f.InputTokens && out.Problem == ""
	return out, ""
}

// unverifiable says why an engine's own rendering and count cannot be
// had ("" when they can).
func unverifiable(d dialect.Dialect) string {
	switch d.Engine {
	case dialect.SGLang:
		return "SGLang's /v1/tokenize takes a prompt, not chat messages (python/sglang/srt/entrypoints/openai/serving_tokenize.py @0351c1f), so the engine's rendering of the fixtures cannot be checked; usage.prompt_tokens of each request is the only count"
	case dialect.Ollama:
		return "Ollama has no tokenize endpoint (only _debug_render_only, which returns a rendering without a count), so the engine's count of the fixtures cannot be checked before the run"
	case dialect.LMStudio:
		return "LM Studio documents no tokenize endpoint, so the engine's rendering and count of the fixtures cannot be checked before the run"
	case dialect.TabbyAPI:
		return "TabbyAPI's /v1/token/encode renders messages without the generation prompt and without template_vars (endpoints/core/router.py @03189bc), so its count is not the chat request's and cannot be checked"
	}
	return ""
}

// countOnly is vLLM's check: POST /tokenize takes the chat body (messages,
// chat_template_kwargs, tools) and answers the count of its rendering
// (vllm/entrypoints/serve/tokenize/protocol.py @343baca).
func countOnly(ctx context.Context, in Input, f *fixtures.Fixture, body []byte, out Fixture) (Fixture, string) {
	tok, p := post[struct {
		Count *int `json:"count"`
	}](ctx, in, Tokenize, body)
	if p.text != "" {
		out.Problem, out.NoAnswer = p.text, p.noAnswer
		return out, fatalText(p)
	}
	if tok.Count == nil {
		out.Problem = "POST " + Tokenize + " answered without a count"
		return out, "the engine's " + Tokenize + " answers without a count"
	}
	n := *tok.Count
	out.EngineTokens = &n
	out.RenderingUnchecked = true
	if target, ok := protocol.TargetTokens(f.CaseID); ok && f.Phase == protocol.PhasePerformance && !protocol.WithinLengthRule(n, target) {
		out.LengthRule = fmt.Sprintf("the engine counts %d tokens, not within %d%% of %d: the run will be nonconforming", n, protocol.LengthTolerancePercent, target)
	}
	out.Agree = n == f.InputTokens
	return out, ""
}

// problem is what went wrong with one request of the check ("" text: nothing).
type problem struct {
	text string
	// fatal: the route does not exist or did not answer (on the first
	// fixture, the engine cannot be checked at all); noAnswer: it did not
	// answer.
	fatal, noAnswer bool
}

// post sends one request and decodes the answer.
func post[T any](ctx context.Context, in Input, path string, body []byte) (T, problem) {
	var v T
	status, data, err := in.Client.Post(ctx, path, body, in.Timeout)
	switch {
	case err != nil:
		return v, problem{text: "POST " + path + " did not answer: " + err.Error(), fatal: true, noAnswer: true}
	case status == 404 || status == 405 || status == 501:
		return v, problem{text: fmt.Sprintf("the engine has no POST %s (HTTP %d)", path, status), fatal: true}
	case status != 200:
		return v, problem{text: fmt.Sprintf("POST %s answered HTTP %d: %s", path, status, clip(string(data)))}
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, problem{text: fmt.Sprintf("POST %s did not answer the expected JSON: %v", path, err)}
	}
	return v, problem{}
}

// fatalText is the problem's text when it makes the first fixture's check
// fatal ("" otherwise).
func fatalText(p problem) string {
	if p.fatal {
		return p.text
	}
	return ""
}

func firstDifference(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// around is a little of s from a few bytes before at, for the message.
func around(s string, at int) string {
	lo, hi := max(0, at-16), min(len(s), at+24)
	return strings.ToValidUTF8(s[lo:hi], "\uFFFD")
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// Line is one fixture's line for the terminal.
func (f Fixture) Line() string {
	var parts []string
	switch {
	case f.Problem != "" && f.EngineTokens == nil && !f.RenderingAgrees && f.FirstDifference == nil:
		return fmt.Sprintf("%-28s not checked: %s", f.RequestID, display.Line(f.Problem))
	case f.RenderingAgrees:
		parts = append(parts, "rendering agrees")
	case f.RenderingUnchecked:
		parts = append(parts, "rendering not shown by the engine")
	default:
		parts = append(parts, fmt.Sprintf("rendering differs at byte %d (engine %q, strata %q)", *f.FirstDifference, f.EngineText, f.StrataText))
	}
	switch {
	case f.EngineTokens == nil:
		parts = append(parts, "tokens not checked: "+display.Line(f.Problem))
	case *f.EngineTokens == f.FrozenTokens:
		parts = append(parts, fmt.Sprintf("%d tokens", f.FrozenTokens))
	default:
		parts = append(parts, fmt.Sprintf("%d tokens, frozen %d (%+d)", *f.EngineTokens, f.FrozenTokens, *f.EngineTokens-f.FrozenTokens))
	}
	if f.LengthRule != "" {
		parts = append(parts, f.LengthRule)
	}
	verdict := "agree"
	if !f.Agree {
		verdict = "DIFFER"
	}
	return fmt.Sprintf("%-28s %-6s %s", f.RequestID, verdict, strings.Join(parts, "; "))
}

// Summary is the closing lines for the terminal.
func (r *Result) Summary() []string {
	if !r.Verifiable {
		return []string{"preflight not verifiable: " + display.Line(r.Reason)}
	}
	var out []string
	switch {
	case r.EngineTemplateSHA256 == "":
		out = append(out, "template: "+r.TemplateNote)
	case r.TemplateAgrees:
		out = append(out, fmt.Sprintf("template: the engine's chat template is the bundle's (SHA-256 %s)", r.EngineTemplateSHA256))
	default:
		out = append(out, fmt.Sprintf("template: DIFFERS: the engine's chat template hashes to %s, the bundle was built with %s", r.EngineTemplateSHA256, r.BundleTemplateSHA256))
	}
	out = append(out, fmt.Sprintf("%d fixtures: %d agree, %d differ", len(r.Fixtures), r.Agree, r.Differ))
	if r.Stopped != "" {
		out = append(out, display.Line(r.Stopped))
	}
	return out
}

// LengthProblems lists the fixtures the engine counts outside the 2 % rule.
func (r *Result) LengthProblems() []string {
	var out []string
	for _, f := range r.Fixtures {
		if f.LengthRule != "" {
			out = append(out, f.RequestID+": "+f.LengthRule)
		}
	}
	return out
}
