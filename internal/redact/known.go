package redact

import (
	"encoding/base64"
	"sort"
	"strings"

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

// newKnownSet returns the forms of secrets: each as it is and, from
// MinSecretLen on, in ASCII lower case (an echo in capitals) and reversed,
// and the cores of its base64 encodings: the parts of them (standard and
// URL alphabets, at each of the three offsets the key can start at in the
// encoded bytes) that the key's bytes alone decide. Any base64 text that
// holds a core encodes the key, whatever comes before or after it (the
// user:key of basic credentials, a JSON document holding the key).
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
		for _, f := range []string{asciiLower(s), asciiLower(reverse(s))} {
			folded, k.foldedForms = append(folded, f), append(k.foldedForms, knownForm{secret: s})
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

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
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
				what = "the API key in use, in other letter case or reversed"
			}
			spans = append(spans, knownSpan{at, int(end + 1), what})
			return true
		})
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
