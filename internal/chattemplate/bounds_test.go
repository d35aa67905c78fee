package chattemplate

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"
)

var hi = Input{Messages: json.RawMessage(`[{"role":"user","content":"hi"}]`), AddGenerationPrompt: true}

// TestRecursiveMacro: a macro that calls itself without end fails the
// render with an error; it never reaches Go's stack limit, whose overflow
// ends the whole process and cannot be recovered.
func TestRecursiveMacro(t *testing.T) {
	t.Parallel()
	for i, src := range []string{
		`{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}`,
		// Mutual recursion, and a call with more arguments than the
		// macro takes.
		`{% macro a(n) %}{{ b(n, 1) }}{% endmacro %}{% macro b(n) %}{{ a(n) }}{% endmacro %}{{ a(0) }}`,
		// Each level a little deeper in loops.
		`{% macro f(n) %}{% for m in messages %}{% if true %}{{ f(n) }}{% endif %}{% endfor %}{% endmacro %}{{ f(0) }}`,
	} {
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			tmpl.limits.frames = 1000 // the default's cost, once is enough
		}
		_, err = tmpl.Render(hi)
		if !errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), "too deeply") {
			t.Errorf("%s: got %v, want ErrTooBig saying the calls nest too deeply", src, err)
		}
	}
}

// TestRecursionInUse: a macro recursing as templates do over a tool's
// schema (Hermes' json_to_python_type) renders, a hundred levels deep.
func TestRecursionInUse(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse(`{%- macro show(v) -%}
{%- if v is mapping -%}[{{ show(v.items) }}]{%- else -%}{{ v }}{%- endif -%}
{%- endmacro -%}
{{ show(schema) }}`)
	if err != nil {
		t.Fatal(err)
	}
	const depth = 100
	schema := strings.Repeat(`{"items":`, depth) + `"int"` + strings.Repeat(`}`, depth)
	in := hi
	in.Kwargs = map[string]json.RawMessage{"schema": json.RawMessage(schema)}
	got, err := tmpl.Render(in)
	want := strings.Repeat("[", depth) + "int" + strings.Repeat("]", depth)
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// TestGuardLeavesOutputAlone: the check strata adds to every macro and
// loop body changes no byte of what the library renders, whatever the
// whitespace control around it.
func TestGuardLeavesOutputAlone(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"{% for m in messages %}\n  {{ m.role }}\n{% endfor %}\n",
		"{%- for m in messages -%}\n  {{ m.role }}\n{%- endfor -%}\n",
		"  {% for m in messages %}  \n\n{{ m.content }}{% else %}none{% endfor %}",
		"{% macro f(x) %}\n\n  <{{ x }}>\n{% endmacro %}\n{{ f(1) }}|{{ f(2) }}",
		"{%- macro f(x) -%}\n  <{{ x }}>  \n{%- endmacro %}\n  {{- f(1) }}",
		"{% macro f(x) %}{% for i in [1, 2] %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(i) f(0) %}\n ({{ i }}){% endcall %}",
		"{% raw %}{% for m in messages %}{{ m }}{% endfor %}{% macro x() %}{% endmacro %}{% endraw %}",
		"{# {% for m in messages %} #}{{ '{% for m in x %}' }}{% for m in messages %}{% for k in m %}{{ k }};{% endfor %}{% endfor %}",
		"{%- set ns = namespace(n=0, s='') -%}\n  {% for m in messages %}\n{%- set ns.n = ns.n + 1 %}\n {% set ns.s = ns.s ~ m.role -%}\n{% endfor %}{{ ns.n }}{{ ns.s }}",
		"{% set x = messages | length if messages else 0 %}{% set y = [x, x] %}\n{{ y }}{% set z %}\n block {{ x }}{% endset %}{{ z }}",
		"{% macro f(a, b=2) %}{{ a }}{{ b }}{% endmacro %}{{ f(1) }}{{ f(1, 3) }}{{ messages.pop()['role'] }}",
	} {
		lib, err := jinja.Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		msgs, _ := fromJSON(hi.Messages)
		want, err := lib.RenderValues(map[string]jinja.Value{"messages": msgs})
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tmpl.Render(hi)
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; the library renders %q", src, got, err, want)
		}
	}
}

// TestSourceBounds: a template past the bounds no chat template comes near
// (its size, its number of tags, the code of one tag) is refused before
// it is parsed, at once: the library's parse time grows with the square of
// the tags, and its stack with an expression's nesting.
func TestSourceBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, src, want string }{
		{"4 MB", strings.Repeat("Hello. ", 600_000), "bytes; strata reads chat templates of at most"},
		{"20,000 comments", "x" + strings.Repeat("{##}", 20_000), "tags; strata reads chat templates of at most"},
		{"100,000 parentheses", "{{ " + strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000) + " }}",
			"line 1: a tag with 200003 bytes of code"},
	} {
		_, err := Parse(c.src)
		if !errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want ErrTooBig saying %q", c.name, err, c.want)
		}
	}
}

// TestDoublingIsBounded: a string doubled in a loop fails the render once
// it has taken more memory than a render may; it does not grow until the
// time bound, gigabytes later.
func TestDoublingIsBounded(t *testing.T) {
	tmpl, err := Parse(`{% set ns = namespace(s='ab') %}{% for i in range(27) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}`)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.limits.heap = 64 << 20
	out, err := tmpl.Render(hi)
	if !errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), "memory") {
		t.Fatalf("got %q, %v; want ErrTooBig saying the render took too much memory", out, err)
	}
}

// TestContextEndsRender: a render that would run for hours ends when its
// context does, with the context's cause.
func TestContextEndsRender(t *testing.T) {
	t.Parallel()
	tmpl, err := Parse(`{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("SIGTERM")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	if _, err := tmpl.RenderContext(ctx, hi); !errors.Is(err, stop) {
		t.Fatalf("got %v, want the context's cause", err)
	}
	if _, err := parseContext(ctx, `{{ x }}`); !errors.Is(err, stop) {
		t.Fatalf("parse: got %v, want the context's cause", err)
	}
}

// TestToJSONBounds: tojson with an indent of a terabyte is an error, not
// an allocation that takes the machine.
func TestToJSONBounds(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`{{ messages | tojson(indent=1099511627776) }}`,
	} {
		tmpl, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := tmpl.Render(hi); err == nil {
			t.Errorf("%s: rendered %d bytes, want an error", src, len(out))
		}
	}
}

// TestValuesThatHoldThemselves: no template makes a value the library
// prints without end (Go's stack overflow) or as 2^60 items: a list's
// append, insert and a dict's update are refused as transformers' sandbox
// refuses them, a namespace set to hold itself is refused, and so is a
// value past a million items or a thousand levels, built by set or by a
// macro's arguments.
func TestValuesThatHoldThemselves(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{`{% set a = [] %}{{ a.append(a) }}{{ a }}`, "append() changes a list or a dict in place"},
		{`{% set a = [] %}{{ a.insert(0, a) }}{{ a }}`, "insert() changes a list or a dict in place"},
		{`{% set d = {} %}{{ d.update({'d': d}) }}{{ d }}`, "update() changes a list or a dict in place"},
		{`{% set ns = namespace(x=1) %}{% set ns.x = ns %}{{ ns }}`, "holds the namespace it is set into"},
		{`{% set a = namespace(x=1) %}{% set b = namespace(y=a) %}{% set a.x = [b] %}{{ a }}`, "holds the namespace it is set into"},
		{`{% set loop = namespace() %}{% for m in messages %}{% set loop.x = loop %}{% endfor %}`, "holds the namespace it is set into"},
		{`{% set ns = namespace(x=1) %}{% for i in range(64) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}{{ ns.x }}`, "more than 1048576 items"},
		{`{% set ns = namespace(x=1) %}{% for i in range(2000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}`, "deeper than 1000 levels"},
		{`{% macro f(x, n) %}{% if n < 64 %}{{ f([x, x], n + 1) }}{% else %}{{ x }}{% endif %}{% endmacro %}{{ f(1, 0) }}`, "more than 1048576 items"},
	} {
		tmpl, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := tmpl.Render(hi); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: rendered %d bytes, %v; want an error saying %q", c.src, len(out), err, c.want)
		}
	}
}
