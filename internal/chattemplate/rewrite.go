package chattemplate

import (
	"fmt"
	"strings"
	"unicode"
)

// rewrite checks src against the source bounds and returns the code given
// to the library:
//
//   - `| tojson` renamed to toJSONFilter in the code of {{ }} and {% %}
//     tags (text, comments and string literals untouched);
//   - a loop guard after every {% for %} tag, and after every {% macro %}
//     tag a macro guard given the macro's parameters;
//   - the value of every {% set name = value %} passed through setGuard
//     (with the namespace of {% set ns.attr = value %});
//   - every .append(), .insert() and .update() call given unsafe as its
//     first argument: transformers renders in Jinja's immutable sandbox,
//     where they are errors, and without them a template cannot make a
//     list that holds itself.
//
// A guard is an expression that prints nothing: without trim markers, it
// leaves the whitespace control of the tags around it as it was. A
// {% raw %} block is copied as it is.
func rewrite(src string) (string, error) {
	if len(src) > MaxSourceBytes {
		return "", fmt.Errorf("%w: the template is %d bytes; strata reads chat templates of at most %d (those in use are tens of kilobytes)", ErrTooBig, len(src), MaxSourceBytes)
	}
	var b strings.Builder
	b.Grow(len(src) + 256)
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
		closer := closers[kind]
		start := open + 2
		end := tagEnd(src, start, closer, kind != '#')
		code := src[start:end]
		i = min(end+len(closer), len(src))
		if kind == '#' || raw && (kind == '{' || keyword(code) != "endraw") {
			b.WriteString(src[start:i])
			continue
		}
		if n := codeBytes(code); n > maxTagCode {
			return "", fmt.Errorf("%w: line %d: a tag with %d bytes of code (strings aside); strata reads tags of at most %d", ErrTooBig, strings.Count(src[:open], "\n")+1, n, maxTagCode)
		}
		kw := ""
		if kind == '%' {
			kw = keyword(code)
		}
		if kw == "set" {
			writeSet(&b, code)
		} else {
			writeCode(&b, code)
		}
		b.WriteString(src[end:i])
		switch kw {
		case "raw", "endraw":
			raw = kw == "raw"
		case "for":
			b.WriteString("{{ " + loopGuard + "() }}")
		case "macro":
			b.WriteString("{{ " + macroGuard + "(" + strings.Join(macroParams(code), ", ") + ") }}")
		}
	}
	return b.String(), nil
}

// closers end the tags their openers' second bytes name.
var closers = map[byte]string{'{': "}}", '%': "%}", '#': "#}"}

// tagEnd is the index of the closer of the tag whose code starts at i (or
// len(src) when there is none), skipping string literals in code as the
// library's scanner does.
func tagEnd(src string, i int, closer string, quotes bool) int {
	for i < len(src) {
		c := src[i]
		switch {
		case quotes && (c == '\'' || c == '"'):
			i++
			for i < len(src) && src[i] != c {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case strings.HasPrefix(src[i:], closer):
			return i
		default:
			i++
		}
	}
	return len(src)
}

// stringEnd is the index after the string literal that starts at code[i].
func stringEnd(code string, i int) int {
	q := code[i]
	j := i + 1
	for j < len(code) && code[j] != q {
		if code[j] == '\\' {
			j++
		}
		j++
	}
	return min(j+1, len(code))
}

// codeBytes is the length of code outside its string literals.
func codeBytes(code string) int {
	n := 0
	for i := 0; i < len(code); {
		if c := code[i]; c == '\'' || c == '"' {
			i = stringEnd(code, i)
			continue
		}
		n++
		i++
	}
	return n
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

// mutators are the methods the library offers that change a list or a
// dict in place (pop only takes out).
var mutators = map[string]bool{"append": true, "insert": true, "update": true}

// writeCode copies the code of one tag, renaming `| tojson` and giving
// every mutator call unsafe as its first argument.
func writeCode(b *strings.Builder, code string) {
	afterPipe, afterDot, mutator := false, false, ""
	for i := 0; i < len(code); {
		c := code[i]
		switch {
		case c == '\'' || c == '"':
			j := stringEnd(code, i)
			b.WriteString(code[i:j])
			i = j
			afterPipe, afterDot, mutator = false, false, ""
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b.WriteByte(c)
			i++
		case isIdentStart(c):
			j := i
			for j < len(code) && isIdent(code[j]) {
				j++
			}
			name := code[i:j]
			if afterPipe && name == "tojson" {
				name = toJSONFilter
			}
			b.WriteString(name)
			mutator = ""
			if afterDot && mutators[name] {
				mutator = name
			}
			afterPipe, afterDot = false, false
			i = j
		default:
			b.WriteByte(c)
			if c == '(' && mutator != "" {
				fmt.Fprintf(b, "%s(%q), ", unsafeCall, mutator)
			}
			afterPipe, afterDot, mutator = c == '|', c == '.', ""
			i++
		}
	}
}

// writeSet copies a {% set %} statement's code with its value passed
// through setGuard, as set(value, into=ns) for a namespace's attribute.
// The library reads the target up to the first "=" and the value after
// it; a block set (no "=") is copied as it is.
func writeSet(b *strings.Builder, code string) {
	eq := strings.IndexByte(code, '=')
	if eq < 0 {
		writeCode(b, code)
		return
	}
	value := code[eq+1:]
	trail := ""
	if strings.HasSuffix(value, "-") { // the trim marker of -%}
		value, trail = value[:len(value)-1], "-"
	}
	b.WriteString(code[:eq+1])
	b.WriteString(" " + setGuard + "(")
	writeCode(b, value)
	target := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(code[:eq], "-")), "set"))
	if ns, _, ok := strings.Cut(target, "."); ok && isName(strings.TrimSpace(ns)) {
		b.WriteString(", into=" + strings.TrimSpace(ns))
	}
	b.WriteString(") " + trail)
}

// macroParams are the parameter names of a {% macro name(a, b=1) %}
// statement, read as the library reads them.
func macroParams(code string) []string {
	_, params, ok := strings.Cut(strings.TrimSuffix(strings.TrimRightFunc(strings.TrimSuffix(code, "-"), unicode.IsSpace), ")"), "(")
	if !ok {
		return nil
	}
	var names []string
	for part := range strings.SplitSeq(params, ",") {
		name, _, _ := strings.Cut(part, "=")
		if name = strings.TrimSpace(name); isName(name) {
			names = append(names, name)
		}
	}
	return names
}

// reserved are the words the library's expressions read as operators or
// constants, never as names.
var reserved = map[string]bool{"and": true, "or": true, "not": true, "in": true, "is": true, "if": true, "else": true,
	"true": true, "false": true, "none": true, "True": true, "False": true, "None": true}

// isName reports whether s is a name the library reads as a variable.
func isName(s string) bool {
	if s == "" || reserved[s] || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdent(s[i]) {
			return false
		}
	}
	return true
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c >= '0' && c <= '9' }
