package dialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
)

// Body returns the exact JSON body of a fixture's request in this dialect:
// its messages (and tools with tool_choice for T1-T4), the profile's
// sampling values, reasoning_effort, both thinking flags, the reasoning
// budget that means "none" on this engine, the seed, the cap as max_tokens,
// stream and stream_options.include_usage; reasoning_effort goes inside
// chat_template_kwargs too where only that reaches the engine's template
// on every build (llama.cpp, ik_llama.cpp). Where the engine reads a setting
// under another name (llama.cpp's repeat_penalty), that name is sent too,
// with the same value. Keys are written in a fixed order and floats in
// Python's form (1.0, 0.0), as the reference captures were sent, so the
// validator can rebuild the body and compare bytes.
//
// In the engine's own API (Ollama's /api/chat) the body is that API's
// (ollamaBody).
func (d Dialect) Body(f *fixtures.Fixture) ([]byte, error) {
	if d.API == APINative {
		return d.ollamaBody(f)
	}
	return d.body(f, d.facts().effortInKwargs)
}

// BodyForms are the bodies strata has built for a fixture in this dialect,
// the current one first, then the one without reasoning_effort also
// inside llama.cpp's and ik_llama.cpp's chat_template_kwargs. Each
// carries the fixture and the profile's settings, so a saved result sent
// with either is the protocol's workload.
// Each is built only when asked for: a saved result is nearly always in
// the current form, and a body of the 16K prompt costs a validation more
// than comparing it.
func (d Dialect) BodyForms(f *fixtures.Fixture) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		if !yield(d.Body(f)) || !d.facts().effortInKwargs {
			return
		}
		yield(d.body(f, false))
	}
}

func (d Dialect) body(f *fixtures.Fixture, effortInKwargs bool) ([]byte, error) {
	msgs, err := json.Marshal(f.Messages)
	if err != nil {
		return nil, err
	}
	s := protocol.ProfileSampling()
	kw := protocol.ProfileTemplateKwargs()
	w := d.facts()
	var b bytes.Buffer
	b.Grow(len(msgs) + len(f.Tools) + 1024)
	key := func(name string) {
		if b.Len() > 1 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(name))
		b.WriteString(": ")
	}
	field := func(name, value string) {
		key(name)
		b.WriteString(value)
	}
	// A setting goes under the spec's name, the engine's own name, or both;
	// one the engine cannot take is not sent (the result names it).
	setting := func(name, value string) {
		if d.dropped(name) {
			return
		}
		other, aliased := w.alias[name]
		if !aliased || w.keepSpec {
			field(name, value)
		}
		if aliased {
			field(other, value)
		}
	}
	b.WriteByte('{')
	key("messages")
	b.Write(msgs)
	field("stream", "true")
	field("stream_options", `{"include_usage": true}`)
	setting("temperature", floatLit(s.Temperature))
	setting("top_p", floatLit(s.TopP))
	setting("top_k", strconv.Itoa(s.TopK))
	setting("min_p", floatLit(s.MinP))
	setting("presence_penalty", floatLit(s.PresencePenalty))
	setting("repetition_penalty", floatLit(s.RepetitionPenalty))
	setting("seed", strconv.Itoa(f.Seed))
	field("max_tokens", strconv.Itoa(f.MaxTokens))
	effort, err := jsonString(s.ReasoningEffort)
	if err != nil {
		return nil, fmt.Errorf("%s: reasoning_effort: %w", f.RequestID, err)
	}
	kwargs := fmt.Sprintf(`"enable_thinking": %t, "preserve_thinking": %t`, kw.EnableThinking, kw.PreserveThinking)
	if effortInKwargs {
		kwargs += `, "reasoning_effort": ` + effort
	}
	setting("chat_template_kwargs", "{"+kwargs+"}")
	setting("reasoning_effort", effort)
	if budget := d.ReasoningBudget(); budget.Field != nil {
		field(*budget.Field, strconv.Itoa(*budget.Value))
	}
	if f.OffersTools() {
		tools := bytes.TrimSpace(f.Tools)
		var compact bytes.Buffer
		if err := json.Compact(&compact, tools); err != nil {
			return nil, fmt.Errorf("%s: tools: %w", f.RequestID, err)
		}
		field("tools", compact.String())
		if f.ToolChoice == nil {
			return nil, fmt.Errorf("%s: tools without tool_choice", f.RequestID)
		}
		choice, err := jsonString(*f.ToolChoice)
		if err != nil {
			return nil, fmt.Errorf("%s: tool_choice: %w", f.RequestID, err)
		}
		field("tool_choice", choice)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonString quotes a string value as the reference captures were sent
// (Go's quoting, which is JSON's for the profile's and the bundle's
// strings), and refuses one that quoting would make invalid JSON: every
// other part of a body is JSON already (the messages marshalled, the tools
// compacted, the numbers and keys strata's own), so the body needs no
// check of its own (that was half of building it).
func jsonString(s string) (string, error) {
	q := strconv.Quote(s)
	if !json.Valid([]byte(q)) {
		return "", fmt.Errorf("%q is not a JSON string once quoted", s)
	}
	return q, nil
}

// floatLit writes a float with a decimal point, as Python's json does.
func floatLit(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
