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
// The library bounds nothing a template can do; strata bounds the source it
// hands it and the render (see rewrite and guard).
//
// It prints floats and None in {{ }} Go's way; the fixtures never print one,
// and a test in internal/corpus fails if one ever reaches a fixture.
package chattemplate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/strata-bench/strata/internal/abandon"
	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/inputfile"
)

// Template is a compiled chat template.
type Template struct {
	source string
	tmpl   *jinja.Template
	limits limits
}

// Parse compiles a chat template.
func Parse(source string) (*Template, error) {
	return parseContext(context.Background(), source)
}

// parseContext is Parse, ending when ctx does with its cause.
func parseContext(ctx context.Context, source string) (*Template, error) {
	code, err := rewrite(source)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w: the parse did not finish within %s", ErrTooBig, timeout))
	defer cancel()
	tmpl, err := abandon.Do(ctx, func() (tmpl *jinja.Template, err error) {
		defer engineFailed(&err)
		if tmpl, err = jinja.Compile(code); err != nil {
			return nil, fmt.Errorf("template syntax: %w", err)
		}
		return tmpl, nil
	})
	if err != nil {
		return nil, err
	}
	return &Template{source: source, tmpl: tmpl, limits: defaultLimits()}, nil
}

// MaxFileBytes bounds a template file (or the tokenizer_config.json that
// holds one): templates in use are tens of kilobytes.
const MaxFileBytes = 16 << 20

// Load reads and compiles a template file: a .jinja file or a
// tokenizer_config.json whose chat_template is a string. A GGUF model
// file's tokenizer.chat_template is read from its metadata (FromGGUF).
func Load(ctx context.Context, path string) (*Template, error) {
	src, err := ReadSource(path)
	if err != nil {
		return nil, err
	}
	return parseFile(ctx, path, src)
}

// parseFile compiles src, the template read from the file at path.
func parseFile(ctx context.Context, path, src string) (*Template, error) {
	t, err := parseContext(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("chat template %s: %w", path, err)
	}
	return t, nil
}

// GGUF is a GGUF model file's metadata as its reader gives it
// (gguf.File).
type GGUF interface {
	String(key string) (string, bool)
}

// FromGGUF compiles the tokenizer.chat_template of the GGUF model file at
// path, whose metadata is f.
func FromGGUF(ctx context.Context, path string, f GGUF) (*Template, error) {
	src, ok := f.String("tokenizer.chat_template")
	if !ok {
		return nil, fmt.Errorf("chat template %s: the GGUF has no tokenizer.chat_template", path)
	}
	return parseFile(ctx, path, src)
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
	return t.RenderContext(context.Background(), in)
}

// RenderContext is Render, ending when ctx does with its cause.
func (t *Template) RenderContext(ctx context.Context, in Input) (string, error) {
	vars, err := renderVars(in)
	if err != nil {
		return "", err
	}
	out, err := t.renderBounded(ctx, vars)
	if err != nil {
		return "", fmt.Errorf("render template: %w", err)
	}
	return out, nil
}

// renderVars are the template's variables for in.
func renderVars(in Input) (map[string]jinja.Value, error) {
	vars := map[string]jinja.Value{
		"add_generation_prompt": jinja.NewBool(in.AddGenerationPrompt),
		toJSONFilter:            jinja.NewCallable(toJSONFilter, pyToJSON),
	}
	for k, raw := range in.Kwargs {
		v, err := fromJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("kwarg %s: %w", k, err)
		}
		vars[k] = v
	}
	msgs, err := fromJSON(in.Messages)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	if !msgs.IsList() {
		return nil, errors.New("messages: expected a JSON array")
	}
	vars["messages"] = msgs
	vars["tools"] = jinja.None()
	if len(in.Tools) > 0 {
		tools, err := fromJSON(in.Tools)
		if err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
		vars["tools"] = tools
	}
	return vars, nil
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
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
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
