package chattemplate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"
	"unicode"

	"github.com/ardanlabs/jinja"

	"github.com/strata-bench/strata/internal/abandon"
)

// A chat template comes from outside (a file, a GGUF's metadata, a pack),
// and the library bounds nothing: it takes no context, has no recursion
// limit, its parse time grows with the square of a run of tags, and a
// macro calling itself ends in Go's stack overflow, which kills the
// process and cannot be recovered. So strata bounds what it hands the
// library and what it lets a render do:
//
//   - the source: its size, its number of tags, and the code of one tag
//     (which bounds the parser's recursion), all far beyond any chat
//     template in use (tens of kilobytes, a few hundred tags);
//   - the render: the rewrite calls a guard at the start of every macro
//     call and loop turn, the only ways a template repeats work, and the
//     guard stops the render (its goroutine returns) when the context
//     ends, the heap has grown too much or, in a macro, the stack is too
//     deep;
//   - what guard cannot see (one huge operation): parse and render run in
//     a goroutine that is abandoned when the time bound or the context
//     ends.
const (
	// MaxSourceBytes is the longest template source strata parses.
	MaxSourceBytes = 512 << 10
	// maxTags bounds the {{ }}, {% %} and {# #} tags of a template: the
	// library's whitespace pass walks back over every tag before a tag.
	maxTags = 10_000
	// maxTagCode bounds the code of one tag, strings aside.
	maxTagCode = 4096
	// maxFrames bounds the stack of a render: a macro level takes 8-20
	// frames, and Python's recursion limit stops transformers after a few
	// hundred levels.
	maxFrames = 10_000
	// maxHeapGrowth bounds the heap a render may add.
	maxHeapGrowth = 256 << 20
	// rangeBudget is how many numbers range() may make in one render.
	rangeBudget = 1 << 20
	// timeout bounds one parse's and one render's wall time.
	timeout = 10 * time.Second
	// maxOutput is the longest rendering accepted (a 16K-token prompt is
	// about 60 KB).
	maxOutput = 64 << 20
	// loopGuard and macroGuard are the functions the rewrite calls at the
	// start of every loop body and macro body.
	loopGuard  = "strata_loop_guard"
	macroGuard = "strata_macro_guard"
)

// ErrTooBig is returned for a template, or a rendering, beyond strata's
// bounds.
var ErrTooBig = errors.New("the template exceeds strata's bounds")

// limits are one template's render bounds (tests lower them).
type limits struct {
	timeout time.Duration
	frames  int
	heap    int64
}

func defaultLimits() limits {
	return limits{timeout: timeout, frames: maxFrames, heap: maxHeapGrowth}
}

// engineFailed turns a panic inside the library into an error.
func engineFailed(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: the template engine failed (%v)", ErrTooBig, r)
	}
}

// renderBounded renders with vars within the template's limits.
func (t *Template) renderBounded(ctx context.Context, vars map[string]jinja.Value) (string, error) {
	lim := t.limits
	ctx, cancel := context.WithTimeoutCause(ctx, lim.timeout, fmt.Errorf("%w: the render did not finish within %s", ErrTooBig, lim.timeout))
	defer cancel()
	g := &guard{ctx: ctx, limits: lim, pcs: make([]uintptr, lim.frames+1), heap: []metrics.Sample{{Name: heapMetric}}}
	g.heap0 = g.heapBytes()
	budget := int64(rangeBudget)
	vars["range"] = jinja.NewCallable("range", boundedRange(&budget))
	vars[loopGuard] = jinja.NewCallable(loopGuard, g.loop)
	vars[macroGuard] = jinja.NewCallable(macroGuard, g.macro)
	out, err := abandon.Do(ctx, func() (out string, err error) {
		defer engineFailed(&err)
		return t.tmpl.RenderValues(vars)
	})
	if err == nil && len(out) > maxOutput {
		return "", fmt.Errorf("%w: the rendering is %d bytes, beyond %d", ErrTooBig, len(out), maxOutput)
	}
	return out, err
}

const heapMetric = "/memory/classes/heap/objects:bytes"

// guard is what the template calls at the start of every loop turn and
// macro call (see rewrite).
type guard struct {
	ctx    context.Context
	limits limits
	pcs    []uintptr
	heap   []metrics.Sample
	heap0  int64
}

// loop checks the context and the heap: a loop turn adds no stack.
func (g *guard) loop(_ []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if g.ctx.Err() != nil {
		return jinja.Undefined(), context.Cause(g.ctx)
	}
	if grown := g.heapBytes() - g.heap0; grown > g.limits.heap {
		return jinja.Undefined(), fmt.Errorf("%w: the memory in use grew by %d MiB during the render, past the %d MiB one render may add", ErrTooBig, grown>>20, g.limits.heap>>20)
	}
	return jinja.NewString(""), nil
}

// macro checks the stack as well. Counting this goroutine's frames costs
// the frames counted, at most pcs: cheap until the stack is deep.
func (g *guard) macro(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if runtime.Callers(0, g.pcs) == len(g.pcs) {
		return jinja.Undefined(), fmt.Errorf("%w: macro calls nest too deeply (past %d stack frames; a macro that calls itself without end?)", ErrTooBig, g.limits.frames)
	}
	return g.loop(args, kwargs)
}

// heapBytes is the process's heap in objects, live or not yet swept: a
// render's memory is not its own to count, and a growth of hundreds of
// megabytes during one render is the render's doing.
func (g *guard) heapBytes() int64 {
	metrics.Read(g.heap)
	if g.heap[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(g.heap[0].Value.Uint64())
}

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

// rewrite checks src against the source bounds and returns the code given
// to the library: the filter `tojson` renamed to toJSONFilter inside the
// template's {{ }} and {% %} code (text, comments and string literals
// untouched), and a call of a guard after every {% for %} and {% macro %}
// tag. A guard prints nothing and, being an expression without trim
// markers, leaves the whitespace control of the tags around it as it was.
// A {% raw %} block is copied as it is.
func rewrite(src string) (string, error) {
	if len(src) > MaxSourceBytes {
		return "", fmt.Errorf("%w: the template is %d bytes; strata reads chat templates of at most %d (those in use are tens of kilobytes)", ErrTooBig, len(src), MaxSourceBytes)
	}
	var b strings.Builder
	b.Grow(len(src) + 64)
	tags, raw := 0, false
	for i := 0; i < len(src); {
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
		if tags++; tags > maxTags {
			return "", fmt.Errorf("%w: the template has more than %d tags; strata reads chat templates of at most %d (those in use have a few hundred)", ErrTooBig, maxTags, maxTags)
		}
		b.WriteString(src[i : open+2])
		i = open + 2
		if kind == '#' {
			end := strings.Index(src[i:], "#}")
			if end < 0 {
				b.WriteString(src[i:])
				break
			}
			b.WriteString(src[i : i+end+2])
			i += end + 2
			continue
		}
		closer := "}}"
		if kind == '%' {
			closer = "%}"
		}
		start := i
		var code int
		i, code = rewriteCode(&b, src, i, closer, !raw)
		if code > maxTagCode {
			return "", fmt.Errorf("%w: line %d: a tag with %d bytes of code (strings aside); strata reads tags of at most %d", ErrTooBig, strings.Count(src[:open], "\n")+1, code, maxTagCode)
		}
		if kind != '%' {
			continue
		}
		switch kw := keyword(src[start:i]); {
		case raw:
			raw = kw != "endraw"
		case kw == "raw":
			raw = true
		case kw == "for":
			b.WriteString("{{ " + loopGuard + "() }}")
		case kw == "macro":
			b.WriteString("{{ " + macroGuard + "() }}")
		}
	}
	return b.String(), nil
}

// keyword is a statement's keyword, as the library reads it: the letters
// and underscores after the trim marker and the spaces.
func keyword(stmt string) string {
	s := strings.TrimLeftFunc(strings.TrimPrefix(stmt, "-"), unicode.IsSpace)
	if end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '_' }); end >= 0 {
		return s[:end]
	}
	return s
}

// rewriteCode copies template code from src[i:] up to and including closer,
// renaming `| tojson` when rename is set, and returns the index after
// closer and the bytes of code outside string literals.
func rewriteCode(b *strings.Builder, src string, i int, closer string, rename bool) (int, int) {
	afterPipe := false
	code := 0
	for i < len(src) {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], closer):
			b.WriteString(closer)
			return i + len(closer), code
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
			continue
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
			if rename && afterPipe && src[i:j] == "tojson" {
				b.WriteString(toJSONFilter)
			} else {
				b.WriteString(src[i:j])
			}
			code += j - i - 1
			i = j
			afterPipe = false
		default:
			b.WriteByte(c)
			i++
			afterPipe = false
		}
		code++
	}
	return i, code
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c >= '0' && c <= '9' }
