// Package display makes a string from a server or a submission safe to
// show on one line of a terminal or a Markdown report: control characters
// (ESC, OSC sequences, BEL, CR, a newline), Unicode format characters (the
// bidirectional overrides) and invalid UTF-8 are written as visible escapes
// instead of acting on the screen or reordering what the reader sees.
package display

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
func Line(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || Hidden(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case Hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
