// Package escape makes a string from a server or a submission safe to
// show on one line of a terminal or a Markdown report: control characters
// (ESC, OSC sequences, BEL, CR, a newline), Unicode format characters (the
// bidirectional overrides) and invalid UTF-8 are written as visible escapes
// instead of acting on the screen or reordering what the reader sees.
package escape

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden reports whether r acts on a display without being seen.
func Hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// Line returns s with every hidden character and invalid byte escaped
// (\n, \t, \u001b, \u202e, \xff): one line, exactly what was sent.
func Line(s string) string { return escaped(s, keepNone) }

// Text is Line for text of several lines (a web page): its line feeds and
// tabs stay as they are, every other hidden character and invalid byte is
// escaped as Line escapes it.
func Text(s string) string { return escaped(s, keepLines) }

func keepNone(rune) bool { return false }

func keepLines(r rune) bool { return r == '\n' || r == '\t' }

// escaped escapes the hidden characters of s that keep does not keep, and
// every invalid byte.
func escaped(s string, keep func(rune) bool) string {
	if !hasHidden(s, keep) {
		return s
	}
	var b strings.Builder
	writeEscaped(&b, s, keep, false)
	return b.String()
}

// hasHidden reports whether s holds a hidden character keep does not keep,
// or invalid UTF-8.
func hasHidden(s string, keep func(rune) bool) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || Hidden(r) && !keep(r) }) >= 0
}

// writeEscaped writes s with its hidden characters (but those keep keeps)
// and invalid bytes escaped; for the shell's $'…' it also escapes the
// backslash and the quote, and writes a character past U+FFFF as
// \UXXXXXXXX.
func writeEscaped(b *strings.Builder, s string, keep func(rune) bool, shell bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case keep(r):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case shell && (r == '\\' || r == '\''):
			b.WriteString(`\` + string(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case shell && Hidden(r) && r > 0xffff:
			fmt.Fprintf(b, `\U%08x`, r)
		case Hidden(r):
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// markdownSpecial are the characters that make Markdown or HTML of plain
// text: raw HTML and autolinks (<script>, <javascript:…>), links and
// images ([x](javascript:…), ![x] — without a bracket, "(" and "!" are
// text), code spans, emphasis and table cells. Each is written with a
// backslash, which CommonMark and GitHub read as the literal character, so
// a string from an operator flag or an engine shows as exactly that text
// in any renderer. Parentheses, "_" (GitHub ignores it inside words) and
// the rest stay as they are, so the file stays readable as text.
const markdownSpecial = "\\`*[]<>|"

// Markdown returns s escaped for one line of Markdown text (outside a code
// span): hidden characters as Line writes them, Markdown's and HTML's
// special characters behind a backslash.
func Markdown(s string) string {
	s = Line(s)
	if !strings.ContainsAny(s, markdownSpecial) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			// A backslash is an escape only before ASCII punctuation;
			// elsewhere (Line's \n, \u001b) it is text and stays one.
			if i+1 < len(s) && isASCIIPunct(s[i+1]) {
				b.WriteByte('\\')
			}
		case strings.IndexByte(markdownSpecial, c) >= 0:
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// CodeSpan returns s for the inside of a Markdown code span, where
// backslashes are literal and only a backtick (which would end the span)
// and, in a table, | (which would end the cell) act: the backtick becomes
// ' and | is escaped.
func CodeSpan(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`).Replace(Line(s))
}

// shellSpecial are the characters a POSIX shell acts on in an unquoted
// word: a word holding one is quoted.
const shellSpecial = " \t\"'\\$`;&|<>()*?[]{}~#!"

// ShellWord returns s as one word of a shell command line that gives back
// s exactly: as it is when nothing in it needs quoting, else in single
// quotes, or, when it holds a hidden character or invalid UTF-8, in bash's
// $'…' quoting with those written as escapes ($'line one\nline two',
// \u202e, \xff). A command line is one line of plain text wherever it is
// shown or recorded, and can still be pasted to run again.
func ShellWord(s string) string {
	switch {
	case hasHidden(s, keepNone):
		var b strings.Builder
		b.WriteString("$'")
		writeEscaped(&b, s, keepNone, true)
		b.WriteString("'")
		return b.String()
	case s != "" && !strings.ContainsAny(s, shellSpecial):
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
