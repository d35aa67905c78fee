package redact

import (
	_ "embed"
	"strings"
)

//go:generate go run ./genvocab

// strataWords are the words of strata's own text, one per line (generated;
// the test TestVocabularyIsCurrent keeps it in step with the source).
//
//go:embed vocab.txt
var strataWords string

// Vocabulary returns the words a machine name must not be mistaken for:
// strata's own text and the given texts (the protocol's fixtures), lower
// case.
func Vocabulary(texts ...string) map[string]bool {
	v := map[string]bool{}
	for _, w := range strings.Split(strataWords, "\n") {
		if w != "" {
			v[w] = true
		}
	}
	for _, t := range texts {
		Words(t, v)
	}
	return v
}

// Words adds the words of t (runs of ASCII letters, digits and
// underscores), in lower case, to set.
func Words(t string, set map[string]bool) {
	start := -1
	for i := 0; i <= len(t); i++ {
		word := i < len(t) && (t[i] == '_' || '0' <= t[i] && t[i] <= '9' || 'a' <= t[i] && t[i] <= 'z' || 'A' <= t[i] && t[i] <= 'Z')
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			set[strings.ToLower(t[start:i])] = true
			start = -1
		}
	}
}
