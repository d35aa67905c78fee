package chattemplate

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// pyToJSON is transformers' tojson filter:
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
// sort_keys=sort_keys). Written here because Go's encoders differ from
// Python's in float forms and in escaping U+2028/U+2029, and both change the
// rendered prompt's tokens.
func pyToJSON(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), errors.New("tojson: no value")
	}
	e := pyEncoder{itemSep: ", ", keySep: ": "}
	if v, ok := kwargs["indent"]; ok && !v.IsNone() && !v.IsUndefined() {
		switch {
		case v.IsInt() && v.AsInt() > maxIndent:
			return jinja.Undefined(), fmt.Errorf("tojson: indent %d is beyond the %d strata allows", v.AsInt(), maxIndent)
		case v.IsInt():
			e.indent = strings.Repeat(" ", int(max(v.AsInt(), 0)))
		case v.IsString():
			e.indent = v.AsString()
		default:
			return jinja.Undefined(), errors.New("tojson: indent must be an int or a string")
		}
		e.indented = true
		e.itemSep = ","
	}
	if v, ok := kwargs["separators"]; ok && !v.IsNone() && !v.IsUndefined() {
		if !v.IsList() || v.AsList().Len() != 2 || !v.AsList().Get(0).IsString() || !v.AsList().Get(1).IsString() {
			return jinja.Undefined(), errors.New("tojson: separators must be two strings")
		}
		e.itemSep, e.keySep = v.AsList().Get(0).AsString(), v.AsList().Get(1).AsString()
	}
	if v, ok := kwargs["sort_keys"]; ok {
		e.sortKeys = v.IsTruthy()
	}
	var b strings.Builder
	if err := e.encode(&b, args[0], 0); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(b.String()), nil
}

// Bounds on what tojson writes: Python's json.dumps stops at its recursion
// limit (and names a list that holds itself a circular reference) where Go
// would overflow its stack, and an indent of a terabyte is not a format.
const (
	maxIndent    = 1024
	maxJSONDepth = 1000
)

type pyEncoder struct {
	itemSep, keySep string
	indent          string
	indented        bool
	sortKeys        bool
}

func (e *pyEncoder) newline(b *strings.Builder, level int) {
	if e.indented {
		b.WriteByte('\n')
		for range level {
			b.WriteString(e.indent)
		}
	}
}

func (e *pyEncoder) encode(b *strings.Builder, v jinja.Value, level int) error {
	if level > maxJSONDepth {
		return fmt.Errorf("tojson: the value nests deeper than %d levels (a list or dict that holds itself?)", maxJSONDepth)
	}
	if b.Len() > maxOutput {
		return fmt.Errorf("%w: tojson would write more than %d bytes", ErrTooBig, maxOutput)
	}
	switch {
	case v.IsUndefined(), v.IsNone():
		b.WriteString("null")
	case v.IsBool():
		if v.AsBool() {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case v.IsInt():
		b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		b.WriteString(PyFloatRepr(v.AsFloat()))
	case v.IsString():
		writePyString(b, v.AsString())
	case v.IsList():
		items := v.AsList().Items
		if len(items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(e.itemSep)
			}
			e.newline(b, level+1)
			if err := e.encode(b, it, level+1); err != nil {
				return err
			}
		}
		e.newline(b, level)
		b.WriteByte(']')
	case v.IsDict():
		d := v.AsDict()
		keys := d.OrderedKeys()
		if e.sortKeys {
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		if len(keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(e.itemSep)
			}
			e.newline(b, level+1)
			writePyString(b, k)
			b.WriteString(e.keySep)
			val, _ := d.Get(k)
			if err := e.encode(b, val, level+1); err != nil {
				return err
			}
		}
		e.newline(b, level)
		b.WriteByte('}')
	default:
		return fmt.Errorf("tojson: %s is not JSON serializable", v.String())
	}
	return nil
}

// writePyString writes s as json.dumps(s, ensure_ascii=False) does: only the
// quote, the backslash and C0 controls are escaped.
func writePyString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// PyFloatRepr formats f as Python's repr(float) does: the shortest digits
// that round-trip, fixed notation for exponents -4..15 (with ".0" when
// integral), otherwise d.ddde±XX. NaN and infinities are written as
// json.dumps writes them.
func PyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
		f = -f
	}
	if f == 0 {
		return sign + "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	if exp >= -4 && exp < 16 {
		decpt := exp + 1
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es = "-"
		exp = -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}
