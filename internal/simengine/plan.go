package simengine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/strata-bench/strata/internal/captures"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
)

// plan is what one response says: reasoning pieces, answer pieces, and an
// optional tool call. Each piece is one token (one delta).
type plan struct {
	reasoning []string
	answer    []string
	tool      *ToolCallSpec
}

const reasoningText = "Let me work through this carefully. The request asks for a specific result, so I should check each detail, consider the edge cases, and then write the answer in the exact form it asks for. "

const answerText = "A hash table stores each value in an array slot chosen by hashing its key. To find a value, hash the key, go to that slot, and compare keys. When two keys share a slot (a collision), chaining keeps a short list per slot and probing tries the next slots in a fixed order. For example, with 8 slots, keys 3 and 11 both hash to slot 3; lookup of 11 walks the chain until it finds key 11. "

// pieces cuts text into n token-sized pieces, repeating it as needed.
func pieces(text string, n int) []string {
	words := strings.SplitAfter(text, " ")
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		w := words[i%len(words)]
		if w == "" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// chop cuts exact text into pieces of about three bytes (never inside a
// UTF-8 sequence).
func chop(s string) []string {
	var out []string
	r := []rune(s)
	for i := 0; i < len(r); i += 3 {
		out = append(out, string(r[i:min(i+3, len(r))]))
	}
	return out
}

func decide(id string, accuracy float64) bool {
	h := fnv.New32a()
	h.Write([]byte("accuracy/" + id))
	return float64(h.Sum32()%1000) < accuracy*1000
}

// toolArgs formats an arguments object the way models write it
// ({"id": "A-17"}), keeping the literal's key order and numbers.
func toolArgs(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", ""); err != nil {
		return string(raw)
	}
	s := strings.ReplaceAll(b.String(), "\n", "")
	s = strings.ReplaceAll(s, `":`, `": `)
	s = strings.ReplaceAll(s, `,"`, `, "`)
	return s
}

// compactJSON is raw without insignificant spaces, its key order kept.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func (s *Server) plan(req *chatRequest, id string, fx *fixtures.Fixture, b Behaviour, rng *rand.Rand) plan {
	var p plan
	nr := s.cfg.ReasoningTokens
	long := fx != nil && (fx.InputTokens > 2000)
	if long {
		nr *= 2
	}
	nr = max(1, nr+rng.IntN(nr/5+1)-nr/10)
	if b.ReasoningTokens != nil {
		nr = *b.ReasoningTokens
	}
	if budget := s.effectiveBudget(req); budget >= 0 && nr > budget {
		nr = budget // the engine ends thinking when the budget is spent
	}
	p.reasoning = pieces(reasoningText, nr)
	na := 120 + rng.IntN(40)
	if b.AnswerTokens != nil {
		na = *b.AnswerTokens
	}
	switch {
	case b.ToolCall != nil:
		p.tool = b.ToolCall
	case b.Answer != nil:
		p.answer = chop(*b.Answer)
	case fx != nil && fx.Expected != nil:
		right := decide(id, s.cfg.Accuracy)
		e := fx.Expected
		switch e.Kind {
		case protocol.ExpectToolCall:
			if right && !b.NoToolCall {
				args := toolArgs(e.Arguments)
				if s.cfg.Dialect == DialectStrata {
					// serve/server.py @452325a9 openai_chunks: Strata builds
					// the arguments without spaces between members.
					args = compactJSON(e.Arguments)
				}
				p.tool = &ToolCallSpec{Name: e.Function, Arguments: args}
			} else {
				p.answer = chop(fmt.Sprintf("I would call %s, but I will describe it instead.", e.Function))
			}
		case protocol.ExpectJSON:
			if right {
				p.answer = chop(string(e.Value))
			} else {
				p.answer = chop("```json\n" + string(e.Value) + "\n```")
			}
		default:
			var text string
			_ = json.Unmarshal(e.Value, &text)
			if !right {
				text = "The value is " + text + "."
			}
			p.answer = chop(text)
		}
	default:
		p.answer = pieces(answerText, na)
	}
	if b.NoToolCall {
		p.tool = nil
	}
	return p
}

// tokens are the deltas of a plan, in order.
func (p plan) tokens() []map[string]any {
	var out []map[string]any
	for _, r := range p.reasoning {
		out = append(out, map[string]any{"reasoning_content": r})
	}
	for _, a := range p.answer {
		out = append(out, map[string]any{"content": a})
	}
	if p.tool != nil {
		args := chop(p.tool.Arguments)
		if len(args) == 0 {
			args = []string{""}
		}
		out = append(out, map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": "simcall" + strings.Repeat("0", 25), "type": "function",
			"function": map[string]any{"name": p.tool.Name, "arguments": args[0]}}}})
		for _, a := range args[1:] {
			out = append(out, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": a}}}})
		}
	}
	return out
}

func loadCapture(dir, name string) (*captures.Capture, error) {
	if dir == "" {
		return nil, errNoCaptures
	}
	return captures.Load(dir, name)
}
