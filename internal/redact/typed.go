package redact

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Typed registers what the user typed on the command line (each argument,
// a --flag=value's value, a path as resolved against the working folder).
// The terminal's filter is for what servers and files say, not for the
// user's own words: Redact shows a typed word where a rule would read it,
// or the word after it, as a secret setting ("--results-dir /etc/passwd:
// /etc/passwd is a file", "result folder /etc/passwd: not a folder"), and
// a typed path where a rule reads a key in it ("/tmp/ghp_…"). A word that
// is a secret by itself (the API key, also inside a path; a URL with a
// password in it; a word typed alone that a rule reads as a key) or a bare
// setting's name ("password", "--api-key") is not shown that way, and
// neither is a secret a server wrote around a typed word.
func (k *Keyring) Typed(words ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, w := range words {
		// Shorter than a secret setting's value (secretValue): no rule
		// reads it as one.
		if len(w) >= 3 {
			k.typed = append(k.typed, w)
		}
	}
}

// typedMark starts the mark a typed word stands in for while the rules
// read the text: '<' is in no value a rule takes, so a mark is never read
// as a secret, nor a typed word before it as a setting's name.
const typedMark = "<typed-"

// showTyped is s redacted with the typed words in it taken out before the
// rules run and put back after; ok is false, and Redact keeps out (s
// redacted as it is), when that would show more of what out hides than the
// typed words and the words the rules read after them as their values.
func showTyped(forms *knownSet, s, out string, hidden, typed []string) (string, bool) {
	if strings.Contains(s, typedMark) {
		return "", false
	}
	words := shownWords(forms, s, typed)
	marked := s
	for i, w := range words {
		marked = replaceStandalone(marked, w, typedMark+strconv.Itoa(i)+">")
	}
	if marked == s {
		return "", false
	}
	got, _ := redactWith(forms, marked)
	for i, w := range words {
		got = strings.ReplaceAll(got, typedMark+strconv.Itoa(i)+">", w)
	}
	if strings.Contains(got, typedMark) {
		return "", false // a rule took a mark into what it hid
	}
	for _, h := range hidden {
		if !hiddenStill(h, s, marked, out, got, words) {
			return "", false
		}
	}
	return got, true
}

// shownWords are the typed words in s that may be shown, longest first (a
// path before the name it ends in): neither a secret by itself nor a
// setting's name. A path is the user's own text even where a rule reads a
// key in it (/tmp/ghp_…): only a secret strata knows (the API key in use)
// hides it; a word typed alone that a rule reads as a secret may be one
// given in the wrong place (a key for a variable's name) and stays hidden.
func shownWords(forms *knownSet, s string, typed []string) []string {
	var words []string
	for _, w := range typed {
		if !strings.Contains(s, w) || settingName(w) {
			continue
		}
		check := redactWith
		if isPath(w) {
			check = knownOnly
		}
		if _, h := check(forms, w); len(h) == 0 {
			words = append(words, w)
		}
	}
	sort.SliceStable(words, func(i, j int) bool { return len(words[i]) > len(words[j]) })
	return words
}

// isPath reports whether a typed word is a path: it holds a path separator
// and is no URL (whose credentials a rule reads).
func isPath(w string) bool {
	return strings.ContainsAny(w, "/"+string(filepath.Separator)) && !strings.Contains(w, "://")
}

// knownOnly replaces the forms of the known secrets in s alone, as
// redactWith does before the rules.
func knownOnly(forms *knownSet, s string) (string, []string) {
	var hidden []string
	if forms != nil {
		s = forms.replace(s, func(_, _, match string) { hidden = append(hidden, match) })
	}
	return s, hidden
}

// settingName reports whether w, without a flag's dashes, names a setting
// whose value is a secret (password, --api-key, HF_TOKEN).
func settingName(w string) bool {
	n := strings.TrimLeft(w, "-")
	return settingMember().MatchString(n) || tokenMember().MatchString(n)
}

// hiddenStill reports whether got hides h, which out hid, as often as out
// does, but where h is a typed word, inside one (marked is s with them
// marked), or the value the rules read after one as its setting's name; a
// secret around a typed word must stay hidden whole.
func hiddenStill(h, s, marked, out, got string, words []string) bool {
	for _, w := range words {
		switch {
		case h == w:
			return true
		case strings.Contains(h, w):
			return false
		}
	}
	inTyped := strings.Count(s, h) - strings.Count(marked, h)
	return strings.Count(got, h) <= strings.Count(out, h)+inTyped+afterTyped(s, h, words)
}

// afterTyped counts the places where h stands in s right after a typed
// word and a setting's separator (": ", "=", quotes), the word taken for a
// setting's name.
func afterTyped(s, h string, words []string) int {
	n := 0
	for from := 0; ; {
		i := strings.Index(s[from:], h)
		if i < 0 {
			return n
		}
		at := from + i
		before := strings.TrimRight(s[:at], ` "'`)
		before = strings.TrimRight(strings.TrimRight(before, ":="), ` "'`)
		for _, w := range words {
			if strings.HasSuffix(before, w) {
				n++
				break
			}
		}
		from = at + len(h)
	}
}

// replaceStandalone replaces each place of w in s that stands alone: at
// the start or end of s or beside a space, quote, bracket or separator,
// where no rule's value runs on into it.
func replaceStandalone(s, w, with string) string {
	var b strings.Builder
	last := 0
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			break
		}
		at, end := from+i, from+i+len(w)
		if (at == 0 || standaloneEdge(s[at-1])) && (end == len(s) || standaloneEdge(s[end])) {
			b.WriteString(s[last:at])
			b.WriteString(with)
			last = end
		}
		from = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// standaloneEdge is a byte that ends a word: a space, a quote, a bracket,
// a separator.
func standaloneEdge(c byte) bool {
	return strings.IndexByte(" \t\n\"'`,;:&=<>()[]{}", c) >= 0
}
