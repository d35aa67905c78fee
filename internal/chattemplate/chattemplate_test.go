package chattemplate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/sharedpath"
)

type templateVector struct {
	Name     string                     `json:"name"`
	Messages json.RawMessage            `json:"messages"`
	Tools    json.RawMessage            `json:"tools"`
	Kwargs   map[string]json.RawMessage `json:"kwargs"`
	Rendered string                     `json:"rendered"`
}

// VectorInput turns a vector line into a render Input the way the reference
// renderer passes it: add_generation_prompt false when absent, tools null as
// "not passed", every other kwarg as a top-level variable.
func vectorInput(t *testing.T, v templateVector) Input {
	in := Input{Messages: v.Messages, Kwargs: map[string]json.RawMessage{}}
	if string(v.Tools) != "null" {
		in.Tools = v.Tools
	}
	for k, raw := range v.Kwargs {
		if k == "add_generation_prompt" {
			if err := json.Unmarshal(raw, &in.AddGenerationPrompt); err != nil {
				t.Fatalf("%s: add_generation_prompt: %v", v.Name, err)
			}
			continue
		}
		in.Kwargs[k] = raw
	}
	return in
}

func TestVectors(t *testing.T) {
	t.Parallel()
	tmpl, err := Load(context.Background(), sharedpath.Path(t, "tokenizer", "qwen3", "chat_template.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(sharedpath.Path(t, "vectors", "chat-template-qwen3.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // only read
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		var v templateVector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(v.Name, func(t *testing.T) {
			got, err := tmpl.Render(vectorInput(t, v))
			if err != nil {
				t.Fatal(err)
			}
			if got != v.Rendered {
				t.Errorf("rendered differs\n got %q\nwant %q", clip(got), clip(v.Rendered))
			}
		})
	}
	if n != 48 {
		t.Fatalf("read %d vectors, want 48", n)
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:300] + " … " + s[len(s)-300:]
	}
	return s
}

func TestRaiseException(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse(`{{ raise_exception('no system role') }}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render(Input{Messages: json.RawMessage(`[]`)})
	if err == nil || !strings.Contains(err.Error(), "no system role") {
		t.Fatalf("err = %v, want the raised message", err)
	}
}

func TestSyntaxError(t *testing.T) {
	t.Parallel()
	if _, err := Parse(`{% if x %}unclosed`); err == nil {
		t.Fatal("want a syntax error")
	}
}

// TestRewrite: `tojson` is renamed in code only, a guard follows every
// loop and macro tag (given the macro's parameters), every set value goes
// through strata_set (with the namespace it is set into), every mutator
// call gets strata_unsafe first, and a raw block is left as it is.
func TestRewrite(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{{ x | tojson }}`, `{{ x | strata_tojson }}`},
		{`{{ x|tojson(indent=2) }}`, `{{ x|strata_tojson(indent=2) }}`},
		{`{% if y | tojson %}tojson | tojson{% endif %}`, `{% if y | strata_tojson %}tojson | tojson{% endif %}`},
		{`{{ '| tojson' ~ x | tojsonish }}`, `{{ '| tojson' ~ x | tojsonish }}`},
		{`{# x | tojson #}{{ tojson }}`, `{# x | tojson #}{{ tojson }}`},
		{"{%- for m in x -%}\n{%- endfor %}", "{%- for m in x -%}{{ strata_loop_guard() }}\n{%- endfor %}"},
		{`{% macro f(a, b=[1,2], none) -%}{{ a }}{% endmacro %}`, `{% macro f(a, b=[1,2], none) -%}{{ strata_macro_guard(a, b) }}{{ a }}{% endmacro %}`},
		{`{% set y = x | tojson %}`, `{% set y = strata_set( x | strata_tojson ) %}`},
		{`{%- set ns.a = ns.a + [1] -%}`, `{%- set ns.a = strata_set( ns.a + [1] , into=ns) -%}`},
		{`{% set body %}x{% endset %}`, `{% set body %}x{% endset %}`},
		{`{{ l.append(1) }}{{ d . update ({}) }}{{ l.pop() }}{{ "x.append(" }}`,
			`{{ l.append(strata_unsafe("append"), 1) }}{{ d . update (strata_unsafe("update"), {}) }}{{ l.pop() }}{{ "x.append(" }}`},
		{`{% raw %}{{ x | tojson }}{% for m in x %}{% set a = 1 %}{% endraw %}{% for m in x %}`,
			`{% raw %}{{ x | tojson }}{% for m in x %}{% set a = 1 %}{% endraw %}{% for m in x %}{{ strata_loop_guard() }}`},
	}
	for _, c := range cases {
		if got, err := rewrite(c.in); err != nil || got != c.want {
			t.Errorf("rewrite(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestPyFloatRepr(t *testing.T) {
	t.Parallel()
	cases := map[float64]string{
		3.0: "3.0", 0.5: "0.5", 1e-07: "1e-07", 1e21: "1e+21", 1e16: "1e+16", 1e15: "1000000000000000.0",
		0.0001: "0.0001", 0.00001: "1e-05", 123.456: "123.456", 1.5e300: "1.5e+300", -2.5: "-2.5",
	}
	for f, want := range cases {
		if got := PyFloatRepr(f); got != want {
			t.Errorf("PyFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestRenderIsBounded: a template that loops a hundred thousand times in a
// hundred thousand times fails at once with a clear error instead of
// growing for minutes: range()'s budget stops it, not the render's time
// bound. An ordinary range still works.
func TestRenderIsBounded(t *testing.T) {
	t.Parallel()
	in := Input{Messages: json.RawMessage(`[{"role":"user","content":"hi"}]`), AddGenerationPrompt: true}
	bomb, err := Parse(`{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bomb.Render(in); !errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), "range() would make 100000 numbers, beyond the 1048576") {
		t.Fatalf("got %v, want range()'s budget reached", err)
	}
	ok, _ := Parse(`{% for i in range(3) %}{{ i }}{% endfor %}{% for i in range(10, 0, -3) %}{{ i }}{% endfor %}`)
	if out, err := ok.Render(in); err != nil || out != "01210741" {
		t.Errorf("%q %v", out, err)
	}
}

// FuzzRender: a chat template from the command line or a GGUF file is
// outside input; parsing and rendering never panic or run unbounded.
func FuzzRender(f *testing.F) {
	qwen, err := os.ReadFile(sharedpath.Path(f, "tokenizer", "qwen3", "chat_template.jinja"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(qwen), `[{"role":"user","content":"hi"}]`)
	f.Add(`{% for m in messages %}{{ m.content | tojson }}{% endfor %}`, `[{"role":"user","content":"a\u2028b"}]`)
	f.Add(`{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}`, `[]`)
	f.Fuzz(func(t *testing.T, src, messages string) {
		if !json.Valid([]byte(messages)) {
			return
		}
		tmpl, err := Parse(src)
		if err != nil {
			return
		}
		_, _ = tmpl.Render(Input{Messages: json.RawMessage(messages), AddGenerationPrompt: true})
	})
}

// TestValuesFromJSON: the template sees JSON as Python's json.loads gives
// it (and the engines' readers): object keys in order, a repeated key's
// last value, 3 an int and 3.0 a float, invalid UTF-8 as U+FFFD; one value
// only, and an integer past 64 bits is an error, not a float.
func TestValuesFromJSON(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse(`{% for m in messages %}{% for k, v in m.items() %}{{ k }}={{ v | tojson }};{% endfor %}|{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ messages, want string }{
		{`[{"b":1,"a":2.0,"c":null,"d":true,"e":"x"}]`, `b=1;a=2.0;c=null;d=true;e="x";|`},
		{`[{"a":1,"a":2}]`, "a=2;|"},
		{"[{\"s\":\"a\xffb\"}]", "s=\"a\ufffdb\";|"},
		{`[{"n":-0.5e1,"i":-7,"big":1e400}]`, "error"},
		{`[{"i":9223372036854775808}]`, "error"},
		{`[] []`, "error"},
		{`[{"a":1}`, "error"},
		{` [ { "k" : [1, 2.5, "x"] } ] `, `k=[1, 2.5, "x"];|`},
	} {
		got, err := tmpl.Render(Input{Messages: []byte(c.messages)})
		if err != nil {
			got = "error"
		}
		if got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.messages, got, err, c.want)
		}
	}
}
