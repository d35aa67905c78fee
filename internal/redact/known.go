package redact

import (
	"encoding/base64"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// MinSecretLen is the shortest API key strata accepts (--api-key-env): a
// known secret is also found in other letter case, reversed and inside
// base64, and below this length those forms turn up in honest evidence by
// chance (a 4-character key of hex digits is in about one SHA-256 digest of
// a thousand; an 8-character one, case folded, in one of about 10¹² places
// of random text). docs/READINGS.md has the reading.
const MinSecretLen = 8

// knownSet is the forms of the secrets strata knows (the API key in use)
// in two automata, one over the text and one over its ASCII lower case:
// one pass finds every form of every secret.
type knownSet struct {
	raw, folded           *ahocorasick.Trie
	rawForms, foldedForms []knownForm
}

// knownForm is one form a secret may be echoed in.
type knownForm struct {
	secret string // the secret as given
	b64    bool   // a core of its base64 (below)
}

// echoPrefixLen is the shortest start of a key that is redacted on its
// own: servers and proxies echo a key's first characters ("key sk-ab12…
// rejected") and strata's own excerpts may end inside one; from 10
// characters on (60 bits of a random key's alphabet) such a start does not
// turn up in honest evidence by chance.
const echoPrefixLen = 10

// newKnownSet returns the forms of secrets: each as it is and, from
// MinSecretLen on, in ASCII lower case (an echo in capitals), reversed, in
// hexadecimal, its starts from echoPrefixLen characters on (those that
// are no words: see CheckKey), and the cores of its base64 encodings: the
// parts of them (standard and URL alphabets, at each of the three offsets
// the key can start at in the encoded bytes) that the key's bytes alone
// decide. Any base64 text that holds a core encodes the key, whatever comes
// before or after it (the user:key of basic credentials, a JSON document
// holding the key). The lower-case forms are also looked for in the text
// with its escapes decoded and its spaces and invisible characters taken
// out (see echoView).
func newKnownSet(secrets []string) *knownSet {
	k := &knownSet{}
	var raw, folded []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if len(s) < MinSecretLen {
			// Its other forms would be too short to tell from evidence.
			raw, k.rawForms = append(raw, s), append(k.rawForms, knownForm{secret: s})
			continue
		}
		forms := []string{asciiLower(s), asciiLower(reverse(s)), hex.EncodeToString([]byte(s))}
		if !isASCII(s) {
			// Other scripts' letters in the other case (the walk folds
			// ASCII only).
			forms = append(forms, asciiLower(strings.ToUpper(s)), asciiLower(strings.ToLower(s)))
		}
		forms = append(forms, echoStarts(s)...)
		for _, f := range forms {
			folded, k.foldedForms = append(folded, f), append(k.foldedForms, knownForm{secret: s})
			// A key with spaces, escapes or invisible characters of its own
			// is found in the view as the view reads it.
			if v := string(echoView(f)); v != f && len(v) >= MinSecretLen {
				folded, k.foldedForms = append(folded, v), append(k.foldedForms, knownForm{secret: s})
			}
		}
		for off := 0; off < 3; off++ {
			buf := append(make([]byte, off), s...)
			// Character i of the encoding holds bits 6i to 6i+6; the key's
			// are 8·off to 8·(off+len).
			lo, hi := (8*off+5)/6, (8*off+8*len(s))/6
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				raw, k.rawForms = append(raw, enc.EncodeToString(buf)[lo:hi]), append(k.rawForms, knownForm{secret: s, b64: true})
			}
		}
	}
	if len(raw) > 0 {
		k.raw = ahocorasick.NewTrieBuilder().AddStrings(raw).Build()
	}
	if len(folded) > 0 {
		k.folded = ahocorasick.NewTrieBuilder().AddStrings(folded).Build()
	}
	return k
}

// echoStarts are the starts of s, from echoPrefixLen characters on, in
// ASCII lower case, that are no words (see CheckKey). A start of one run
// of letters and digits that is part of no word makes every longer start
// of one run part of none, so the words are looked through once.
func echoStarts(s string) []string {
	var out []string
	inWord := true
	for n := echoPrefixLen; n < len(s); n++ {
		p := asciiLower(s[:n])
		switch {
		case oneClass(p):
			continue
		case strings.IndexFunc(p, notRunRune) < 0:
			if inWord = inWord && madeOfWords(p, isStrataWord, strataWords); inWord {
				continue
			}
		case madeOfWords(p, isStrataWord, strataWords):
			continue
		}
		out = append(out, p)
	}
	return out
}

// reverse is s backwards, character by character (byte by byte where it
// is no UTF-8).
func reverse(s string) string {
	if utf8.ValidString(s) {
		r := []rune(s)
		slices.Reverse(r)
		return string(r)
	}
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// isB64Any is true for the characters of standard and URL-safe base64.
func isB64Any(c byte) bool { return isB64(c) || c == '-' || c == '_' }

type knownSpan struct {
	lo, hi int
	what   string
}

// replace replaces the known secrets in s: as they are, in any letter
// case, reversed, and the whole base64 text that encodes one.
func (k *knownSet) replace(s string, note func(kind, what, match string)) string {
	if k.raw == nil && k.folded == nil {
		return s
	}
	var spans, cores []knownSpan
	if k.raw != nil {
		k.raw.Walk([]byte(s), func(end, n, pattern int64) bool {
			sp := knownSpan{int(end - n + 1), int(end + 1), "a secret strata knows (the API key in use)"}
			if k.rawForms[pattern].b64 {
				cores = append(cores, sp)
			} else {
				spans = append(spans, sp)
			}
			return true
		})
	}
	// Each core grows to the base64 text around it; one inside a text
	// already grown is part of it, so the text is walked once however
	// many cores it holds.
	sort.Slice(cores, func(i, j int) bool { return cores[i].lo < cores[j].lo })
	grown := 0
	for _, c := range cores {
		if c.lo < grown {
			continue
		}
		sp := b64Around(s, grown, c.lo, c.hi)
		spans = append(spans, sp)
		grown = sp.hi
	}
	if k.folded != nil {
		k.folded.Walk([]byte(asciiLower(s)), func(end, n, pattern int64) bool {
			at, f := int(end-n+1), k.foldedForms[pattern]
			what := "a secret strata knows (the API key in use)"
			if s[at:end+1] != f.secret {
				what = "the API key in use, in other letter case, reversed, in hexadecimal or its start"
			}
			spans = append(spans, knownSpan{at, int(end + 1), what})
			return true
		})
		if mayHideEcho(s) {
			var in [][2]int
			k.folded.Walk(echoView(s), func(end, n, pattern int64) bool {
				in = append(in, [2]int{int(end - n + 1), int(end + 1)})
				return true
			})
			spans = append(spans, echoSpans(s, in)...)
		}
	}
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		sp := spans[i]
		for i++; i < len(spans) && spans[i].lo <= sp.hi; i++ {
			sp.hi = max(sp.hi, spans[i].hi)
		}
		note(Secret, sp.what, s[sp.lo:sp.hi])
		b.WriteString(s[last:sp.lo])
		b.WriteString(Secret)
		last = sp.hi
	}
	b.WriteString(s[last:])
	return b.String()
}

// b64Around is the whole base64 text around s[lo:hi] (its padding
// included), from no further back than from, without an escape's letter
// before it (\n in JSON text).
func b64Around(s string, from, lo, hi int) knownSpan {
	start, end := lo, hi
	for start > from && isB64Any(s[start-1]) {
		start--
	}
	if start > 0 && start < lo && s[start-1] == '\\' && strings.IndexByte("nrtbf", s[start]) >= 0 {
		start++
	}
	for end < len(s) && isB64Any(s[end]) {
		end++
	}
	for end < len(s) && s[end] == '=' {
		end++
	}
	return knownSpan{start, end, "the API key in use, base64-encoded"}
}

// mayHideEcho reports whether s holds anything echoView takes out or
// decodes: a space, the start of an escape (%, \, &) or the first byte of
// an invisible character. Most strings of a result (IDs, states, numbers)
// hold none.
func mayHideEcho(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\v', '\f', '%', '\\', '&', '+', 0xC2, 0xE2, 0xEF:
			return true
		}
	}
	return false
}

// echoView is s as a key echoed in it is read: in ASCII lower case, with
// its escapes decoded (%XX, \uXXXX, \xXX, HTML's character references)
// and its spaces (also a URL query's +) and invisible characters
// (zero-width spaces and joiners, the word joiner, the byte order mark,
// the soft hyphen) taken out, so a
// key echoed URL-encoded, escaped, split by spaces or zero-width
// characters is the key there.
func echoView(s string) []byte {
	view := make([]byte, 0, len(s))
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		if c := s[i]; plainEchoByte(c) {
			view = append(view, c) // most bytes: no unit to decode
			i++
			continue
		}
		r, size, isByte := echoUnit(s, i)
		view = append(view, unitBytes(&buf, r, isByte)...)
		i += size
	}
	return view
}

// unitBytes is what a unit of echoUnit adds to the view: nothing, the
// byte an escape names (%D0 is one byte of UTF-8), or the character's
// UTF-8.
func unitBytes(buf *[utf8.UTFMax]byte, r rune, isByte bool) []byte {
	switch {
	case r < 0:
		return nil
	case isByte || r < utf8.RuneSelf:
		buf[0] = byte(r)
		return buf[:1]
	}
	return buf[:utf8.EncodeRune(buf[:], r)]
}

// plainEchoByte is true for a byte that stands for itself in echoView.
func plainEchoByte(c byte) bool {
	return c > ' ' && c < utf8.RuneSelf && (c < 'A' || c > 'Z') && c != '%' && c != '\\' && c != '&' && c != '+'
}

// echoSpans maps spans of echoView(s) (in order of their ends) to the
// spans of s they were read from: from the unit the first byte came from
// to the end of the unit of the last. Matches are rare, so the map is
// made for them rather than kept for every byte.
func echoSpans(s string, in [][2]int) []knownSpan {
	if len(in) == 0 {
		return nil
	}
	out := make([]knownSpan, len(in))
	byStart, byEnd := make([]int, len(in)), make([]int, len(in))
	for i := range in {
		byStart[i], byEnd[i] = i, i
	}
	sort.Slice(byStart, func(a, b int) bool { return in[byStart[a]][0] < in[byStart[b]][0] })
	sort.Slice(byEnd, func(a, b int) bool { return in[byEnd[a]][1] < in[byEnd[b]][1] })
	var buf [utf8.UTFMax]byte
	pos, starts, ends := 0, 0, 0 // view bytes read; spans started, ended
	for i := 0; i < len(s) && ends < len(in); {
		r, size, isByte := echoUnit(s, i)
		pos += len(unitBytes(&buf, r, isByte))
		for ; starts < len(in) && in[byStart[starts]][0] < pos; starts++ {
			out[byStart[starts]].lo = i
		}
		for ; ends < len(in) && in[byEnd[ends]][1] <= pos; ends++ {
			out[byEnd[ends]].hi, out[byEnd[ends]].what = i+size, "the API key in use, escaped, encoded or split"
		}
		i += size
	}
	return out
}

// echoUnit reads the unit of s at i: the character it stands for (ASCII
// in lower case; -1 for what the view leaves out), its size in s, and
// whether it is a byte an escape names (%XX, \xXX) rather than a
// character.
func echoUnit(s string, i int) (r rune, size int, isByte bool) {
	c := s[i]
	r, size = rune(c), 1
	switch {
	case c == '+':
		return -1, 1, false // a space in a URL's query (a + escaped as %2B stays)
	case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
		r, size, isByte = rune(unhex(s[i+1])<<4|unhex(s[i+2])), 3, true
	case c == '\\' && i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') && allHex(s[i+2:i+6]):
		r, size = hexRune(s[i+2:i+6]), 6
	case c == '\\' && i+3 < len(s) && s[i+1] == 'x' && allHex(s[i+2:i+4]):
		r, size, isByte = hexRune(s[i+2:i+4]), 4, true
	case c == '&':
		r, size = charRef(s[i:])
	case c >= utf8.RuneSelf:
		r, size = utf8.DecodeRuneInString(s[i:])
	}
	switch {
	case r == ' ' || '\t' <= r && r <= '\r' || !isByte && (r == 0xA0 || r == 0xAD || r == 0x200B || r == 0x200C || r == 0x200D || r == 0x2060 || r == 0xFEFF):
		return -1, size, false
	case 'A' <= r && r <= 'Z':
		return r + 'a' - 'A', size, isByte
	}
	return r, size, isByte
}

// charRef reads an HTML character reference at the start of s (&#115;,
// &#x73;, &amp; …); anything else is the ampersand itself.
func charRef(s string) (rune, int) {
	end := strings.IndexByte(s[:min(len(s), 10)], ';')
	if end < 0 {
		return '&', 1
	}
	body := s[1:end]
	switch {
	case len(body) > 2 && (body[1] == 'x' || body[1] == 'X') && body[0] == '#' && allHex(body[2:]):
		return hexRune(body[2:]), end + 1
	case len(body) > 1 && body[0] == '#':
		if n, err := strconv.ParseUint(body[1:], 10, 21); err == nil && n <= unicode.MaxRune {
			return rune(n), end + 1
		}
	}
	switch body {
	case "amp":
		return '&', end + 1
	case "lt":
		return '<', end + 1
	case "gt":
		return '>', end + 1
	case "quot":
		return '"', end + 1
	case "apos":
		return '\'', end + 1
	case "nbsp":
		return 0xA0, end + 1
	}
	return '&', 1
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return len(s) > 0 && len(s) <= 6
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func hexRune(s string) rune {
	var r rune
	for i := 0; i < len(s); i++ {
		r = r<<4 | rune(unhex(s[i]))
	}
	return r
}
