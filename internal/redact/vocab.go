package redact

import (
	_ "embed"
	"regexp"
	"strings"
)

//go:generate go run ./genvocab

// strataWords are the words of strata's own text, one per line (generated;
// the test TestVocabularyIsCurrent keeps it in step with the source).
//
//go:embed vocab.txt
var strataWords string

var vocabWord = regexp.MustCompile(`[A-Za-z0-9_]+`)

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
		for _, w := range vocabWord.FindAllString(t, -1) {
			v[strings.ToLower(w)] = true
		}
	}
	return v
}
