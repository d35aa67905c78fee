// Package score computes the twelve sanity verdicts from a request's final
// answer or structured tool calls, exactly as "Twelve sanity checks" says:
// exact text strips only surrounding ASCII whitespace; JSON parses one
// complete value, rejects duplicate keys (at any depth), prose and Markdown
// fences, and compares values with their types (3 is not 3.0, true is not
// 1); a tool case needs exactly one structured call with the named function
// and exactly the required arguments. Reasoning text is never scored.
package score

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
)

// Status is a request's outcome, as the result contract names it.
type Status string

// The request statuses a verdict reads.
const (
	Completed Status = "completed"
	Truncated Status = "truncated"
	Failed    Status = "failed"
	Skipped   Status = "skipped"
)

// Call is one structured tool call.
type Call struct {
	Name      string
	Arguments string
}

// Response is what the scorer looks at.
type Response struct {
	Status Status
	// Reason explains a failed or skipped request.
	Reason    string
	Answer    string
	ToolCalls []Call
	// OutputTokens and Cap tell a length stop at the cap from one where the
	// context filled first (nil: the count is unknown).
	OutputTokens *int64
	Cap          int
}

// TruncationCause says why a request ended with finish_reason "length":
// llama.cpp reports the same reason when the context window fills before
// the cap, and only a count below the cap tells the two apart.
func TruncationCause(outputTokens *int64, limit int) string {
	switch {
	case outputTokens == nil:
		return "the response stopped with finish_reason length (the cap, or a full context; the engine reported no output count)"
	case limit > 0 && *outputTokens < int64(limit):
		return fmt.Sprintf("the response stopped with finish_reason length after %d of the %d-token cap: the context window filled first", *outputTokens, limit)
	}
	return "the response reached the output cap (finish_reason length)"
}

// Verdict is one sanity case's evaluation.
type Verdict struct {
	Category protocol.Category `json:"category"`
	Passed   bool              `json:"passed"`
	Reason   string            `json:"reason"`
}

// asciiSpace is Python's string.whitespace: the ASCII whitespace the spec
// lets the scorer strip.
const asciiSpace = " \t\n\r\v\f"

// Evaluate scores one sanity response against its expectation.
func Evaluate(exp *fixtures.Expected, r Response) Verdict {
	v := Verdict{Category: exp.Category}
	switch r.Status {
	case Skipped:
		v.Reason = "skipped: " + r.Reason
		return v
	case Failed:
		v.Reason = "request failed: " + r.Reason
		return v
	case Truncated:
		v.Reason = "truncated: " + TruncationCause(r.OutputTokens, r.Cap) + " before completing"
		return v
	case Completed:
	default:
		v.Reason = fmt.Sprintf("unknown request status %q", r.Status)
		return v
	}
	var err error
	switch exp.Kind {
	case protocol.ExpectExact:
		err = exactText(exp, r.Answer)
	case protocol.ExpectJSON:
		err = jsonAnswer(exp, r.Answer)
	case protocol.ExpectToolCall:
		err = toolCall(exp, r.ToolCalls)
	default:
		err = fmt.Errorf("unknown expectation kind %q", exp.Kind)
	}
	if err != nil {
		v.Reason = err.Error()
		return v
	}
	v.Passed = true
	switch exp.Kind {
	case protocol.ExpectToolCall:
		v.Reason = "one structured call to " + exp.Function + " with exactly the required arguments"
	case protocol.ExpectJSON:
		v.Reason = "the answer is exactly the required JSON value"
	default:
		v.Reason = "the answer is exactly the required text"
	}
	return v
}

func exactText(exp *fixtures.Expected, answer string) error {
	var want string
	if err := unmarshalString(exp.Value, &want); err != nil {
		return fmt.Errorf("expected value: %w", err)
	}
	got := strings.Trim(answer, asciiSpace)
	if got != want {
		return fmt.Errorf("wrong answer: got %s, want %q", quoteClip(got), want)
	}
	return nil
}

func jsonAnswer(exp *fixtures.Expected, answer string) error {
	want, err := Parse([]byte(exp.Value))
	if err != nil {
		return fmt.Errorf("expected value: %w", err)
	}
	got, err := Parse([]byte(answer))
	if err != nil {
		return fmt.Errorf("malformed output: %w (answer %s)", err, quoteClip(answer))
	}
	if d := Diff(want, got); d != "" {
		return fmt.Errorf("wrong answer: %s (answer %s)", d, quoteClip(answer))
	}
	return nil
}

func toolCall(exp *fixtures.Expected, calls []Call) error {
	switch len(calls) {
	case 0:
		return errors.New("no structured tool call (a call described in text does not count)")
	case 1:
	default:
		return fmt.Errorf("%d structured tool calls; exactly one is required", len(calls))
	}
	c := calls[0]
	if c.Name != exp.Function {
		return fmt.Errorf("called %q, want %q", c.Name, exp.Function)
	}
	want, err := Parse(exp.Arguments)
	if err != nil {
		return fmt.Errorf("expected arguments: %w", err)
	}
	got, err := Parse([]byte(c.Arguments))
	if err != nil {
		return fmt.Errorf("malformed tool-call arguments: %w (arguments %s)", err, quoteClip(c.Arguments))
	}
	if _, ok := got.(Object); !ok {
		return fmt.Errorf("tool-call arguments are not a JSON object: %s", quoteClip(c.Arguments))
	}
	if d := Diff(want, got); d != "" {
		return fmt.Errorf("wrong arguments: %s", d)
	}
	return nil
}

func unmarshalString(raw []byte, s *string) error {
	v, err := Parse(raw)
	if err != nil {
		return err
	}
	str, ok := v.(string)
	if !ok {
		return errors.New("not a string")
	}
	*s = str
	return nil
}

func quoteClip(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// The typed JSON values Parse returns.
type (
	// Int is an integer literal (no fraction or exponent), exact.
	Int struct{ *big.Int }
	// Float is a literal with a fraction or exponent.
	Float float64
	// Object keeps every key; order is irrelevant to Diff.
	Object map[string]any
	// Array is ordered.
	Array []any
)

// Parse reads exactly one complete JSON value: surrounding JSON whitespace is
// allowed, anything else (prose, Markdown fences, a second value) is not, and
// duplicate object keys are rejected at any depth.
func Parse(data []byte) (any, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, errors.New("extra text after the JSON value")
	}
	return v, nil
}

func parseValue(dec *jsontext.Decoder) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("no JSON value")
		}
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		lit := tok.String()
		if strings.ContainsAny(lit, ".eE") {
			f, err := tok.Float()
			if err != nil {
				return nil, err
			}
			return Float(f), nil
		}
		i, ok := new(big.Int).SetString(lit, 10)
		if !ok {
			return nil, fmt.Errorf("bad integer %s", lit)
		}
		return Int{i}, nil
	case '[':
		arr := Array{}
		for dec.PeekKind() != ']' {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.ReadToken()
		return arr, err
	case '{':
		obj := Object{}
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken() // jsontext rejects a duplicate name here
			if err != nil {
				return nil, err
			}
			key := k.String()
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		_, err := dec.ReadToken()
		return obj, err
	}
	return nil, fmt.Errorf("unexpected token %v", tok.Kind())
}

// Diff returns "" when got equals want in value and type, or a description
// of the first difference.
func Diff(want, got any) string { return diff("$", want, got) }

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case Int:
		return "integer"
	case Float:
		return "float"
	case Object:
		return "object"
	case Array:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

func diff(path string, want, got any) string {
	if typeName(want) != typeName(got) {
		return fmt.Sprintf("%s is %s %s, want %s %s", path, typeName(got), show(got), typeName(want), show(want))
	}
	switch w := want.(type) {
	case nil:
		return ""
	case bool, string, Float:
		if w != got {
			return fmt.Sprintf("%s is %s, want %s", path, show(got), show(want))
		}
	case Int:
		if w.Cmp(got.(Int).Int) != 0 {
			return fmt.Sprintf("%s is %s, want %s", path, show(got), show(want))
		}
	case Array:
		g := got.(Array)
		if len(g) != len(w) {
			return fmt.Sprintf("%s has %d items, want %d", path, len(g), len(w))
		}
		for i := range w {
			if d := diff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
	case Object:
		g := got.(Object)
		for _, k := range sortedKeys(g) {
			if _, ok := w[k]; !ok {
				return fmt.Sprintf("%s has the extra key %q", path, k)
			}
		}
		for _, k := range sortedKeys(w) {
			wv := w[k]
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s lacks the key %q", path, k)
			}
			if d := diff(path+"."+k, wv, gv); d != "" {
				return d
			}
		}
	}
	return ""
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", x)
	case Int:
		return x.String()
	case Float:
		return fmt.Sprintf("%v", float64(x))
	case Object, Array:
		return typeName(v)
	}
	return fmt.Sprintf("%v", v)
}

func sortedKeys(m Object) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
