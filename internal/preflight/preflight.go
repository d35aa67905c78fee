// Package preflight holds the engine's own chat template and tokenizer to
// the frozen bundle before any benchmark request is sent (the spec's
// activation checklist: "verify against a real engine that the shipped chat
// template matches the pinned upstream behavior, tool formatting
// included"). Every fixture is rendered by the engine (POST /apply-template
// with the exact chat body the run will send) and tokenized by it (POST
// /tokenize); the rendering is compared byte for byte with strata's
// rendering of the same fixture with the template the bundle was built
// with, the count with the fixture's frozen input_tokens, and the engine's
// template (Dialect.TemplateRoute) with the SHA-256 in the bundle's
// build.json. Nothing here changes the engine's state: no completion is
// requested.
package preflight

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/corpus"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/strictjson"
)

// FitContext checks every fixture against a per-slot context of n tokens.
func FitContext(b *fixtures.Bundle, n int64) *contract.ContextFit {
	c := &contract.ContextFit{Tokens: n, TooLong: []string{}, MayFill: []string{}}
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

// Warnings are a per-slot context's consequences in plain words.
func Warnings(c *contract.ContextFit) []string {
	var out []string
	if len(c.TooLong) > 0 {
		out = append(out, fmt.Sprintf("%s prompts longer than the engine's per-slot context of %d tokens and will fail: %s", humanize.Count(len(c.TooLong), "request has", "requests have"), c.Tokens, strings.Join(c.TooLong, ", ")))
	}
	if len(c.MayFill) > 0 {
		out = append(out, fmt.Sprintf("%s stop before their cap because prompt plus cap exceed the per-slot context of %d tokens: %s", humanize.Count(len(c.MayFill), "request may", "requests may"), c.Tokens, strings.Join(c.MayFill, ", ")))
	}
	return out
}

// FixtureLine is one fixture's line for the terminal.
func FixtureLine(f contract.PreflightFixture) string {
	var parts []string
	switch {
	case f.Outcome() == contract.OutcomeNotChecked && !f.RenderingAgrees:
		return fmt.Sprintf("%-28s %s: %s", f.RequestID, contract.OutcomeNotChecked, escape.Line(f.Problem))
	case f.RenderingAgrees:
		parts = append(parts, "rendering agrees")
	case f.RenderingUnchecked:
		parts = append(parts, "rendering not shown by the engine")
	default:
		parts = append(parts, fmt.Sprintf("rendering differs at byte %d (engine %q, strata %q)", *f.FirstDifference, f.EngineText, f.StrataText))
	}
	switch {
	case f.EngineTokens == nil && f.Problem == "":
		parts = append(parts, "tokens not counted by the engine")
	case f.EngineTokens == nil:
		parts = append(parts, "tokens "+contract.OutcomeNotChecked+": "+escape.Line(f.Problem))
	case *f.EngineTokens == f.FrozenTokens:
		parts = append(parts, fmt.Sprintf("%d tokens", f.FrozenTokens))
	default:
		parts = append(parts, fmt.Sprintf("%d tokens, frozen %d (%+d)", *f.EngineTokens, f.FrozenTokens, *f.EngineTokens-f.FrozenTokens))
	}
	if f.LengthRule != "" {
		parts = append(parts, f.LengthRule)
	}
	verdict := f.Outcome()
	if verdict == contract.OutcomeDiffer {
		verdict = strings.ToUpper(verdict)
	}
	return fmt.Sprintf("%-28s %-6s %s", f.RequestID, verdict, strings.Join(parts, "; "))
}

// Summary is a preflight's closing lines for the terminal.
func Summary(r *contract.Preflight) []string {
	if !r.Verifiable {
		return []string{"preflight not verifiable: " + escape.Line(r.Reason)}
	}
	out := []string{r.TemplateLine(), r.Tally()}
	if r.Stopped != "" {
		out = append(out, escape.Line(r.Stopped))
	}
	return out
}

// Input is what the check needs.
type Input struct {
	Client  *client.Client
	Dialect dialect.Dialect
	Bundle  *fixtures.Bundle
	// Template is the bundle's template and its SHA-256.
	Template       *chattemplate.Template
	TemplateSHA256 string
	// EngineTemplate is the engine's chat template, read from
	// Dialect.TemplateRoute ("" when not revealed).
	EngineTemplate string
	// ContextTokens is the engine's per-slot context (nil: not reported).
	ContextTokens *int64
	// Progress, when set, is told about each fixture as it is checked.
	Progress func(done, total int, f contract.PreflightFixture)
	// Timeout bounds each request of the check (0: RouteTimeout) and
	// Deadline the whole check (0: Deadline).
	Timeout, Deadline time.Duration
	// Redact is the redactor of what the check quotes of the engine (nil:
	// redact.SecretsOnly): an excerpt is redacted before it is cut, as a
	// secret cut short is no longer one the rules know.
	Redact func(string) string
}

// redact redacts text the check is about to quote.
func (in Input) redact(s string) string {
	if in.Redact == nil {
		return redact.SecretsOnly(s)
	}
	return in.Redact(s)
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
func Check(ctx context.Context, in Input) *contract.Preflight {
	if in.Timeout <= 0 {
		in.Timeout = RouteTimeout
	}
	if in.Deadline <= 0 {
		in.Deadline = Deadline
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, in.Deadline)
	defer cancel()
	pf := in.Dialect.Preflight()
	r := &contract.Preflight{Source: pf.Source, OffChatPath: pf.OffChatPathFor(in.Template.Source()), BundleTemplateSHA256: in.TemplateSHA256, Fixtures: []contract.PreflightFixture{}}
	if in.ContextTokens != nil {
		r.Context = FitContext(in.Bundle, *in.ContextTokens)
	}
	if in.EngineTemplate == "" {
		r.TemplateNote = "the engine does not reveal its chat template (" + in.Dialect.TemplateRoute() + ")"
	} else {
		sum := sha256.Sum256([]byte(in.EngineTemplate))
		r.EngineTemplateSHA256 = hex.EncodeToString(sum[:])
		r.TemplateAgrees = r.EngineTemplateSHA256 == in.TemplateSHA256
		if !r.TemplateAgrees {
			r.TemplateNote = "the engine's template (" + in.Dialect.TemplateRoute() + ") is not the one the bundle was built with"
		}
	}
	if pf.Unverifiable != "" {
		r.Verifiable, r.Reason = false, pf.Unverifiable
		return r
	}
	ids := scheduleIDs(in.Bundle)
	for i, id := range ids {
		if parent.Err() != nil {
			r.Verifiable, r.Reason = false, "the check was interrupted"
			return r
		}
		if ctx.Err() != nil {
			r.Stopped = fmt.Sprintf("the check stopped before %s: it had taken its whole %s; %s not checked", id, in.Deadline, humanize.Count(len(ids)-i, "fixture was", "fixtures were"))
			return r
		}
		f := in.Bundle.Fixtures[id]
		out, fatal := checkOne(ctx, in, pf, f)
		if fatal != "" && i == 0 && pf.Fallback != nil && !out.NoAnswer {
			// The engine does not serve this check's route: its fallback,
			// whose source says how it differs.
			pf = *pf.Fallback
			r.Source, r.OffChatPath = pf.Source, pf.OffChatPathFor(in.Template.Source())
			out, fatal = checkOne(ctx, in, pf, f)
		}
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
			why := out.Problem
			if ctx.Err() != nil && parent.Err() == nil {
				// The check's deadline cut the request, not the route.
				why = "it had taken its whole " + in.Deadline.String()
			}
			r.Stopped = fmt.Sprintf("the check stopped at %s: %s; %s not checked", id, why, humanize.Count(len(ids)-i-1, "fixture was", "fixtures were"))
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

// checkOne checks a fixture by the engine's routes. fatal is set when the
// endpoints are missing, which on the first fixture makes the whole check
// not verifiable.
func checkOne(ctx context.Context, in Input, pf dialect.Preflight, f *fixtures.Fixture) (contract.PreflightFixture, string) {
	out := contract.PreflightFixture{RequestID: f.RequestID, FrozenTokens: f.InputTokens}
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
	if pf.CountOnly {
		return countOnly(ctx, in, pf, f, body, out)
	}
	if pf.RenderBody != nil {
		if body, err = pf.RenderBody(body); err != nil {
			out.Problem = err.Error()
			return out, ""
		}
	}
	got, p := post[json.RawMessage](ctx, in, pf.ApplyTemplate, body)
	if p.stream && pf.RenderBody != nil {
		// An engine that does not take the render-only request runs it:
		// the check stops rather than run every fixture before the run.
		p.text, p.fatal = "POST "+pf.ApplyTemplate+" answered the render-only request with a stream of JSON values: the engine does not take it and ran it as a chat request", true
	}
	if p.text != "" {
		out.Problem, out.NoAnswer = p.text, p.noAnswer
		return out, fatalText(p)
	}
	rendered, at := renderedIn(got, pf.RenderedAt)
	if rendered == nil {
		out.Problem = "POST " + pf.ApplyTemplate + " answered without " + at
		return out, "the engine's " + pf.ApplyTemplate + " answers without a rendered prompt (" + at + ")"
	}
	engine := *rendered
	out.RenderingAgrees = engine == want
	if !out.RenderingAgrees {
		at := firstDifference(engine, want)
		out.FirstDifference = &at
		// The excerpts are cut from the redacted renderings, around where
		// those differ (the same place, unless private data moved it).
		e, w := in.redact(engine), in.redact(want)
		cut := at
		if e != engine || w != want {
			cut = firstDifference(e, w)
		}
		out.EngineText, out.StrataText = around(e, cut), around(w, cut)
	}
	if pf.Tokenize == "" {
		// The engine counts no rendering before the run: its rendering,
		// tokenized as the bundle's was when equal, is all there is.
		out.Agree = out.RenderingAgrees
		return out, ""
	}
	req, _ := json.Marshal(map[string]any{"content": engine, "add_special": true, "parse_special": true})
	tok, p := post[struct {
		Tokens tokenCount `json:"tokens"`
	}](ctx, in, pf.Tokenize, req)
	if p.text != "" {
		out.Problem, out.NoAnswer = p.text, p.noAnswer
		return out, ""
	}
	n := int(tok.Tokens)
	out.EngineTokens = &n
	out.LengthRule = lengthRule(f, n)
	out.Agree = out.RenderingAgrees && n == f.InputTokens && out.Problem == ""
	return out, ""
}

// renderedIn is the rendering an answer holds at the keys path ("prompt"
// when empty), or nil, with the path's name, when it holds no string
// there.
func renderedIn(answer json.RawMessage, path []string) (*string, string) {
	if len(path) == 0 {
		path = []string{"prompt"}
	}
	name := strings.Join(path, ".")
	v := answer
	for _, k := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil || obj[k] == nil {
			return nil, name
		}
		v = obj[k]
	}
	var s *string
	if json.Unmarshal(v, &s) != nil {
		return nil, name
	}
	return s, name
}

// lengthRule is the 2 % rule on a 4K or 16K performance fixture the
// engine counts n tokens of: what the result records, or "" within it.
func lengthRule(f *fixtures.Fixture, n int) string {
	target, ok := protocol.TargetTokens(f.CaseID)
	if !ok || f.Phase != protocol.PhasePerformance {
		return ""
	}
	if v := protocol.LengthRule(n, target); !v.Within {
		return fmt.Sprintf("the engine counts %d tokens, %s: the run will be nonconforming", n, v.Why)
	}
	return ""
}

// countOnly is the check of an engine that counts the chat body's
// rendering without returning it (dialect.Preflight CountOnly).
func countOnly(ctx context.Context, in Input, pf dialect.Preflight, f *fixtures.Fixture, body []byte, out contract.PreflightFixture) (contract.PreflightFixture, string) {
	if pf.CountBody != nil {
		b, err := pf.CountBody(body)
		if err != nil {
			out.Problem = "not verifiable: " + err.Error()
			return out, ""
		}
		body = b
	}
	field := pf.CountField
	if field == "" {
		field = "count"
	}
	answer, p := post[map[string]json.RawMessage](ctx, in, pf.Tokenize, body)
	if p.text != "" {
		out.Problem, out.NoAnswer = p.text, p.noAnswer
		if pf.Refused != "" && (p.status == 400 || p.status == 422) {
			return out, pf.Refused + " (" + p.text + ")"
		}
		return out, fatalText(p)
	}
	var count *int
	if raw, ok := answer[field]; ok {
		// A count, or the token ids themselves (vLLM's render).
		var ids []json.RawMessage
		if json.Unmarshal(raw, &ids) == nil && ids != nil {
			n := len(ids)
			count = &n
		} else {
			_ = json.Unmarshal(raw, &count)
		}
	}
	if count == nil {
		out.Problem = "POST " + pf.Tokenize + " answered without " + field
		return out, "the engine's " + pf.Tokenize + " answers without " + field
	}
	n := *count
	out.EngineTokens = &n
	out.RenderingUnchecked = true
	out.LengthRule = lengthRule(f, n)
	out.Agree = n == f.InputTokens
	if pf.Sampling != "" {
		if diff := samplingDiffers(answer[pf.Sampling], body); diff != "" {
			out.Problem = "the engine resolves the request's sampling otherwise (" + pf.Tokenize + " " + pf.Sampling + "): " + diff
			out.Agree = false
		}
	}
	return out, ""
}

// samplingDiffers compares the sampling settings an engine resolved for a
// request (an object of the request's own names) with the ones the body
// sent, and says which differ ("" when none does, or the engine resolved
// none of them).
func samplingDiffers(resolved json.RawMessage, body []byte) string {
	var got, sent map[string]json.RawMessage
	if json.Unmarshal(resolved, &got) != nil || json.Unmarshal(body, &sent) != nil || got == nil {
		return ""
	}
	var diffs []string
	for _, k := range []string{"temperature", "top_p", "top_k", "min_p", "presence_penalty", "repetition_penalty", "seed", "max_tokens"} {
		g, gOK := got[k]
		w, wOK := sent[k]
		if !gOK || !wOK {
			continue
		}
		var gv, wv float64
		if json.Unmarshal(g, &gv) != nil || json.Unmarshal(w, &wv) != nil {
			continue
		}
		// Engines keep sampling floats in single precision.
		if math.Abs(gv-wv) > 1e-6*math.Max(1, math.Abs(wv)) {
			diffs = append(diffs, fmt.Sprintf("%s %s, sent %s", k, g, w))
		}
	}
	return strings.Join(diffs, "; ")
}

// problem is what went wrong with one request of the check ("" text: nothing).
type problem struct {
	text string
	// fatal: the route does not exist or did not answer (on the first
	// fixture, the engine cannot be checked at all); noAnswer: it did not
	// answer.
	fatal, noAnswer bool
	// status is the HTTP status of an answer that was not 200 (0: none).
	status int
	// stream: the answer was a stream of JSON values, not one.
	stream bool
}

// post sends one request and decodes the answer.
func post[T any](ctx context.Context, in Input, path string, body []byte) (T, problem) {
	var v T
	status, data, err := in.Client.Post(ctx, path, body, in.Timeout)
	switch {
	case err != nil:
		return v, problem{text: "POST " + path + " did not answer: " + err.Error(), fatal: true, noAnswer: true}
	case status == 404 || status == 405 || status == 501:
		return v, problem{text: fmt.Sprintf("the engine has no POST %s (HTTP %d)", path, status), fatal: true, status: status}
	case status != 200:
		return v, problem{text: fmt.Sprintf("POST %s answered HTTP %d: %s", path, status, clip(in.redact(string(data)))), status: status}
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, problem{text: fmt.Sprintf("POST %s did not answer the expected JSON: %v", path, err), stream: streamed(data)}
	}
	return v, problem{}
}

// streamed reports whether data holds more than one JSON value (NDJSON):
// an engine streaming an answer where one object was asked for.
func streamed(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var first, second json.RawMessage
	return dec.Decode(&first) == nil && dec.Decode(&second) == nil
}

// tokenCount is the length of a tokenize answer's list (ids, or
// objects with pieces), counted without keeping an element: the list of a
// 16K prompt is 16,384 values, and keeping each as a json.RawMessage would
// allocate for every one of them only to count them.
type tokenCount int

// UnmarshalJSON counts the list's values; null is none, as an absent list.
func (n *tokenCount) UnmarshalJSON(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	*n = 0
	if list, err := strictjson.OpenList(dec); !list {
		return err
	}
	count := 0
	for dec.PeekKind() != ']' {
		if err := dec.SkipValue(); err != nil {
			return err
		}
		count++
	}
	*n = tokenCount(count)
	return nil
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
