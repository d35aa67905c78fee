// Package chattemplate renders Hugging Face chat templates (Jinja) the way
// Python transformers' apply_chat_template does: trim_blocks and
// lstrip_blocks, `tojson` as json.dumps(x, ensure_ascii=False) with object
// keys in input order, raise_exception, and extra kwargs as top-level
// variables.
//
// Rendering is done by github.com/ardanlabs/jinja. Two of its behaviours
// differ from transformers and are corrected here rather than forked:
//
//   - its tojson prints floats Go's way (3.0 as 3) and escapes U+2028/U+2029;
//     the library looks built-in filters up first and offers no way to replace
//     one, so Parse renames the `tojson` filter in the template's code to a
//     filter supplied with the render data (see rewriteToJSON);
//   - a plain map[string]any loses key order, so the context is built from a
//     JSON token walk into the library's ordered dicts (see fromJSON).
//
// It prints floats and None in {{ }} Go's way; the fixtures never print one,
// and a test in internal/corpus fails if one ever reaches a fixture.
package chattemplate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/inputfile"
)

// Template is a compiled chat template.
type Template struct {
	source string
	tmpl   *jinja.Template
}

// Parse compiles a chat template.
func Parse(source string) (*Template, error) {
	tmpl, err := jinja.Compile(rewriteToJSON(source))
	if err != nil {
		return nil, fmt.Errorf("template syntax: %w", err)
	}
	return &Template{source: source, tmpl: tmpl}, nil
}

// MaxFileBytes bounds a template file (or the tokenizer_config.json that
// holds one): templates in use are tens of kilobytes.
const MaxFileBytes = 16 << 20

// Load reads and compiles a template file: a .jinja file or a
// tokenizer_config.json whose chat_template is a string. A GGUF model
// file's tokenizer.chat_template is read from its metadata (FromGGUF).
func Load(path string) (*Template, error) {
	src, err := ReadSource(path)
	if err != nil {
		return nil, err
	}
	return parseFile(path, src)
}

// parseFile compiles src, the template read from the file at path.
func parseFile(path, src string) (*Template, error) {
	t, err := Parse(src)
	if err != nil {
		return nil, fmt.Errorf("chat template %s: %w", path, err)
	}
	return t, nil
}

// GGUF is a GGUF model file's metadata as its reader gives it
// (ggufread.File).
type GGUF interface {
	String(key string) (string, bool)
}

// FromGGUF compiles the tokenizer.chat_template of the GGUF model file at
// path, whose metadata is f.
func FromGGUF(path string, f GGUF) (*Template, error) {
	src, ok := f.String("tokenizer.chat_template")
	if !ok {
		return nil, fmt.Errorf("chat template %s: the GGUF has no tokenizer.chat_template", path)
	}
	return parseFile(path, src)
}

// ReadSource returns the template text stored at path (see Load).
func ReadSource(path string) (string, error) {
	if gguf.Named(path) {
		return "", fmt.Errorf("chat template %s: a GGUF model file's template is read from its metadata (FromGGUF)", path)
	}
	data, err := inputfile.Read(path, MaxFileBytes)
	if err != nil {
		return "", fmt.Errorf("chat template: %w", err)
	}
	src := string(data)
	if strings.HasSuffix(path, ".json") {
		var cfg struct {
			ChatTemplate json.RawMessage `json:"chat_template"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return "", fmt.Errorf("chat template %s: %w", path, err)
		}
		if err := json.Unmarshal(cfg.ChatTemplate, &src); err != nil {
			return "", fmt.Errorf("chat template %s: chat_template is not a string", path)
		}
	}
	if !utf8.ValidString(src) {
		return "", fmt.Errorf("chat template %s: not valid UTF-8", path)
	}
	return src, nil
}

// Source returns the template text as given (before any rewriting).
func (t *Template) Source() string { return t.source }

// Input is what a chat template is rendered with. Messages and Tools are raw
// JSON so that key order and number literals survive; Tools nil means "not
// passed" (the variable is none, as transformers passes it).
type Input struct {
	Messages            json.RawMessage
	Tools               json.RawMessage
	AddGenerationPrompt bool
	// Kwargs are extra top-level variables (enable_thinking, ...), as raw
	// JSON values.
	Kwargs map[string]json.RawMessage
}

// toJSONFilter is the name the rewritten template calls instead of tojson.
const toJSONFilter = "strata_tojson"

// Render renders the template.
func (t *Template) Render(in Input) (string, error) {
	vars := map[string]jinja.Value{
		"add_generation_prompt": jinja.NewBool(in.AddGenerationPrompt),
		toJSONFilter:            jinja.NewCallable(toJSONFilter, pyToJSON),
	}
	for k, raw := range in.Kwargs {
		v, err := fromJSON(raw)
		if err != nil {
			return "", fmt.Errorf("kwarg %s: %w", k, err)
		}
		vars[k] = v
	}
	msgs, err := fromJSON(in.Messages)
	if err != nil {
		return "", fmt.Errorf("messages: %w", err)
	}
	if !msgs.IsList() {
		return "", errors.New("messages: expected a JSON array")
	}
	vars["messages"] = msgs
	vars["tools"] = jinja.None()
	if len(in.Tools) > 0 {
		tools, err := fromJSON(in.Tools)
		if err != nil {
			return "", fmt.Errorf("tools: %w", err)
		}
		vars["tools"] = tools
	}
	budget := int64(rangeBudget)
	vars["range"] = jinja.NewCallable("range", boundedRange(&budget))
	out, err := renderBounded(t.tmpl, vars, renderTimeout)
	if err != nil {
		return "", fmt.Errorf("render template: %w", err)
	}
	return out, nil
}

// Rendering a template strata did not write is bounded: a chat template
// renders a few messages, and one that loops a hundred thousand times in
// a hundred thousand times, or never stops, fails with a clear error
// instead of taking the machine's memory.
const (
	// rangeBudget is how many numbers range() may make in one render.
	rangeBudget = 1 << 20
	// renderTimeout bounds one render's wall time.
	renderTimeout = 10 * time.Second
	// maxOutput is the longest rendering accepted (a 16K-token prompt is
	// about 60 KB).
	maxOutput = 64 << 20
)

// ErrTooBig is returned for a template whose rendering exceeds its bounds.
var ErrTooBig = errors.New("the template's rendering exceeds strata's bounds")

// boundedRange is Jinja's range() with a budget shared by every call of
// one render (the library's own has none).
func boundedRange(budget *int64) func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
	return func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		var start, stop, step int64 = 0, 0, 1
		ints := make([]int64, len(args))
		for i, a := range args {
			if !a.IsInt() {
				return jinja.Undefined(), fmt.Errorf("range: argument %d is not an integer", i+1)
			}
			ints[i] = a.AsInt()
		}
		switch len(ints) {
		case 1:
			stop = ints[0]
		case 2:
			start, stop = ints[0], ints[1]
		case 3:
			start, stop, step = ints[0], ints[1], ints[2]
		default:
			return jinja.Undefined(), fmt.Errorf("range: expected 1-3 arguments, got %d", len(args))
		}
		if step == 0 {
			return jinja.Undefined(), errors.New("range: step must not be zero")
		}
		n := int64(0)
		if step > 0 && stop > start {
			n = (stop - start + step - 1) / step
		} else if step < 0 && stop < start {
			n = (start - stop - step - 1) / -step
		}
		if n > *budget {
			return jinja.Undefined(), fmt.Errorf("%w: range() would make %d numbers, beyond the %d one render may make", ErrTooBig, n, rangeBudget)
		}
		*budget -= n
		items := make([]jinja.Value, 0, n)
		for i, v := int64(0), start; i < n; i, v = i+1, v+step {
			items = append(items, jinja.NewInt(v))
		}
		return jinja.NewList(items), nil
	}
}

// renderBounded renders in its own goroutine so a render that does not end
// in time is abandoned with an error (the library takes no context), and a
// panic inside the library is an error, not a crash.
func renderBounded(t *jinja.Template, vars map[string]jinja.Value, timeout time.Duration) (string, error) {
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("%w: the template engine failed (%v)", ErrTooBig, r)}
			}
		}()
		out, err := t.RenderValues(vars)
		done <- result{out, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err == nil && len(r.out) > maxOutput {
			return "", fmt.Errorf("%w: the rendering is %d bytes, beyond %d", ErrTooBig, len(r.out), maxOutput)
		}
		return r.out, r.err
	case <-timer.C:
		return "", fmt.Errorf("%w: the render did not finish within %s", ErrTooBig, timeout)
	}
}

// fromJSON decodes one JSON value into template values, keeping object key
// order and Python's int/float distinction (3 is an int, 3.0 a float). It
// reads as leniently as the engines' JSON readers and encoding/json did (a
// repeated name's last value wins, invalid UTF-8 becomes U+FFFD), token by
// token with jsontext: encoding/json's Token was four fifths of rendering a
// bundle, which a run does for its preflight and a simulated engine for
// every /apply-template.
func fromJSON(raw json.RawMessage) (jinja.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	v, err := decodeValue(dec)
	if err != nil {
		return jinja.Undefined(), err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return jinja.Undefined(), errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *jsontext.Decoder) (jinja.Value, error) {
	if dec.PeekKind() == '0' {
		raw, err := dec.ReadValue()
		if err != nil {
			return jinja.Undefined(), err
		}
		return numberValue(json.Number(raw))
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return jinja.Undefined(), err
	}
	switch tok.Kind() {
	case 'n':
		return jinja.None(), nil
	case 't', 'f':
		return jinja.NewBool(tok.Bool()), nil
	case '"':
		return jinja.NewString(tok.String()), nil
	case '[':
		var items []jinja.Value
		for dec.PeekKind() != ']' {
			v, err := decodeValue(dec)
			if err != nil {
				return jinja.Undefined(), err
			}
			items = append(items, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return jinja.Undefined(), err
		}
		return jinja.NewList(items), nil
	case '{':
		d := jinja.NewDict()
		for dec.PeekKind() != '}' {
			kt, err := dec.ReadToken()
			if err != nil {
				return jinja.Undefined(), err
			}
			name := kt.String()
			v, err := decodeValue(dec)
			if err != nil {
				return jinja.Undefined(), err
			}
			d.AsDict().Set(name, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return jinja.Undefined(), err
		}
		return d, nil
	}
	return jinja.Undefined(), fmt.Errorf("unexpected JSON token %v", tok)
}

func numberValue(n json.Number) (jinja.Value, error) {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		i, err := n.Int64()
		if err != nil {
			return jinja.Undefined(), fmt.Errorf("integer %s is out of the 64-bit range", s)
		}
		return jinja.NewInt(i), nil
	}
	f, err := n.Float64()
	if err != nil {
		return jinja.Undefined(), fmt.Errorf("number %s: %w", s, err)
	}
	return jinja.NewFloat(f), nil
}

// rewriteToJSON renames the filter `tojson` to toJSONFilter inside the
// template's {{ }} and {% %} code, leaving text, comments and string
// literals untouched.
func rewriteToJSON(src string) string {
	var b strings.Builder
	b.Grow(len(src) + 64)
	i := 0
	for i < len(src) {
		open := strings.Index(src[i:], "{")
		if open < 0 || i+open+1 >= len(src) {
			b.WriteString(src[i:])
			break
		}
		open += i
		kind := src[open+1]
		if kind != '{' && kind != '%' && kind != '#' {
			b.WriteString(src[i : open+1])
			i = open + 1
			continue
		}
		b.WriteString(src[i : open+2])
		i = open + 2
		if kind == '#' {
			end := strings.Index(src[i:], "#}")
			if end < 0 {
				b.WriteString(src[i:])
				return b.String()
			}
			b.WriteString(src[i : i+end+2])
			i += end + 2
			continue
		}
		closer := "}}"
		if kind == '%' {
			closer = "%}"
		}
		i = rewriteCode(&b, src, i, closer)
	}
	return b.String()
}

// rewriteCode copies template code from src[i:] up to and including closer,
// renaming `| tojson`, and returns the index after closer.
func rewriteCode(b *strings.Builder, src string, i int, closer string) int {
	afterPipe := false
	for i < len(src) {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], closer):
			b.WriteString(closer)
			return i + len(closer)
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			b.WriteString(src[i:j])
			i = j
			afterPipe = false
		case c == '|':
			b.WriteByte(c)
			i++
			afterPipe = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b.WriteByte(c)
			i++
		case isIdentStart(c):
			j := i
			for j < len(src) && isIdent(src[j]) {
				j++
			}
			if afterPipe && src[i:j] == "tojson" {
				b.WriteString(toJSONFilter)
			} else {
				b.WriteString(src[i:j])
			}
			i = j
			afterPipe = false
		default:
			b.WriteByte(c)
			i++
			afterPipe = false
		}
	}
	return i
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c >= '0' && c <= '9' }
