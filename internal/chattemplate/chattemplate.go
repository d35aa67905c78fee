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
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
	"github.com/strata-bench/strata/internal/gguf"
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

// Load reads and compiles a template file: a .jinja file, a
// tokenizer_config.json whose chat_template is a string, or a GGUF model
// file's tokenizer.chat_template.
func Load(path string) (*Template, error) {
	src, err := ReadSource(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(src)
	if err != nil {
		return nil, fmt.Errorf("chat template %s: %w", path, err)
	}
	return t, nil
}

// ReadSource returns the template text stored at path (see Load).
func ReadSource(path string) (string, error) {
	if strings.EqualFold(filepath.Ext(path), ".gguf") {
		f, err := gguf.Open(path)
		if err != nil {
			return "", err
		}
		src, ok := f.String("tokenizer.chat_template")
		if !ok {
			return "", fmt.Errorf("chat template %s: the GGUF has no tokenizer.chat_template", path)
		}
		return src, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("chat template %s: %w", path, err)
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
	out, err := t.tmpl.RenderValues(vars)
	if err != nil {
		return "", fmt.Errorf("render template: %w", err)
	}
	return out, nil
}

// fromJSON decodes one JSON value into template values, keeping object key
// order and Python's int/float distinction (3 is an int, 3.0 a float).
func fromJSON(raw json.RawMessage) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return jinja.Undefined(), err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jinja.Undefined(), errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return jinja.Undefined(), err
	}
	switch x := tok.(type) {
	case nil:
		return jinja.None(), nil
	case bool:
		return jinja.NewBool(x), nil
	case string:
		return jinja.NewString(x), nil
	case json.Number:
		return numberValue(x)
	case json.Delim:
		switch x {
		case '[':
			var items []jinja.Value
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return jinja.Undefined(), err
				}
				items = append(items, v)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Undefined(), err
			}
			return jinja.NewList(items), nil
		case '{':
			d := jinja.NewDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return jinja.Undefined(), err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return jinja.Undefined(), err
				}
				d.AsDict().Set(kt.(string), v)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Undefined(), err
			}
			return d, nil
		}
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
