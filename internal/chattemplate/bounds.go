package chattemplate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"time"

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
	// maxItems bounds the items a value set or passed to a macro holds,
	// counted as the library prints them (a list holding one list twice
	// counts it twice).
	maxItems = 1 << 20
	// The functions the rewrite calls: at the start of every loop body and
	// macro body, on every value set, and in every call of a method that
	// changes a list or a dict.
	loopGuard  = "strata_loop_guard"
	macroGuard = "strata_macro_guard"
	setGuard   = "strata_set"
	unsafeCall = "strata_unsafe"
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
	vars[setGuard] = jinja.NewCallable(setGuard, checkSet)
	vars[unsafeCall] = jinja.NewCallable(unsafeCall, unsafe)
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

// macro checks the stack as well, and the macro's arguments (see
// checkValue). Counting this goroutine's frames costs the frames counted,
// at most pcs: cheap until the stack is deep.
func (g *guard) macro(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if runtime.Callers(0, g.pcs) == len(g.pcs) {
		return jinja.Undefined(), fmt.Errorf("%w: macro calls nest too deeply (past %d stack frames; a macro that calls itself without end?)", ErrTooBig, g.limits.frames)
	}
	for _, a := range args {
		if err := checkValue(a, nil); err != nil {
			return jinja.Undefined(), fmt.Errorf("a macro's argument: %w", err)
		}
	}
	return g.loop(nil, nil)
}

// checkSet is the value of every {% set %} (see rewrite), checked; into is
// the namespace of {% set ns.attr = value %}.
func checkSet(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) != 1 {
		return jinja.Undefined(), fmt.Errorf("set: expected one value, got %d", len(args))
	}
	var into any
	if ns, ok := kwargs["into"]; ok {
		into = container(ns)
	}
	if err := checkValue(args[0], into); err != nil {
		return jinja.Undefined(), fmt.Errorf("set: %w", err)
	}
	return args[0], nil
}

// checkValue refuses a value that holds into (set into it, it would hold
// itself: the library prints that without end, to Go's stack overflow),
// nests deeper than maxJSONDepth, or holds more than maxItems items as
// printed (a list of the same list twice, 60 times over, is 2^60 items
// to print in one step no guard sees). Each list and dict is walked once.
func checkValue(v jinja.Value, into any) error {
	w := walk{into: into, items: map[any]int{}}
	_, err := w.count(v, 0)
	return err
}

type walk struct {
	into  any
	items map[any]int // by list or dict: its items as printed
}

func (w *walk) count(v jinja.Value, depth int) (int, error) {
	c := container(v)
	switch {
	case c == nil:
		return 1, nil
	case c == w.into:
		return 0, fmt.Errorf("%w: the value holds the namespace it is set into (it would hold itself)", ErrTooBig)
	case depth > maxJSONDepth:
		return 0, fmt.Errorf("%w: the value nests deeper than %d levels", ErrTooBig, maxJSONDepth)
	}
	if n, ok := w.items[c]; ok {
		return n, nil
	}
	var kids []jinja.Value
	if v.IsList() {
		kids = v.AsList().Items
	} else {
		d := v.AsDict()
		for _, k := range d.Keys {
			kids = append(kids, d.Data[k])
		}
	}
	n := 1
	for _, k := range kids {
		m, err := w.count(k, depth+1)
		if err != nil {
			return 0, err
		}
		if n += m; n > maxItems {
			return 0, fmt.Errorf("%w: the value holds more than %d items as printed", ErrTooBig, maxItems)
		}
	}
	w.items[c] = n
	return n, nil
}

// container is the list or dict v holds (nil for any other value): its
// identity.
func container(v jinja.Value) any {
	switch {
	case v.IsList():
		return v.AsList()
	case v.IsDict():
		return v.AsDict()
	}
	return nil
}

// unsafe is the first argument the rewrite gives every call of a method
// that changes a list or a dict.
func unsafe(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	name := "the method"
	if len(args) == 1 && args[0].IsString() {
		name = args[0].AsString() + "()"
	}
	return jinja.Undefined(), fmt.Errorf("%s changes a list or a dict in place, which transformers' sandbox (Jinja's ImmutableSandboxedEnvironment) refuses", name)
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
