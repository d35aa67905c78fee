package redact

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// CheckKey says whether key, the API key a command sends, can be redacted
// from everything strata writes without damaging evidence that is not
// private; the error says why not. texts are what every result folder
// holds besides strata's own words (the benchmark's fixtures).
//
// The key is replaced wherever it stands, in any letter case, reversed,
// encoded, split or by its start (knownSet): that is what keeps an echoed
// key out of a folder, and it is also why a key that is a word cannot be
// redacted. "reasoning" or "completed" as a key would be taken out of the
// field names and states the validator reads, "llama.cpp" out of the
// engine's identification, a common word out of a model's answers. Such a
// key is refused before anything is sent, rather than redacted (which
// destroys evidence) or left alone (which leaks the key): no placement of
// the redactor tells the word the key is from the same word as evidence,
// while a key that is no word costs the user nothing but choosing one.
// What the engine says about itself is known only once it answered; KeyIn
// holds the key to that.
func CheckKey(key string, texts ...string) error {
	if n := len(key); n < MinSecretLen {
		return fmt.Errorf("the API key has %d characters; strata needs at least %d to redact it from the result without damaging evidence", n, MinSecretLen)
	}
	view := string(echoView(key))
	if n := len(view); n < MinSecretLen {
		return fmt.Errorf("the API key has %d characters once its spaces, invisible characters and escapes are read; strata needs at least %d to redact it from the result without damaging evidence", n, MinSecretLen)
	}
	const use = "; use a random key (for example the output of openssl rand -hex 16)"
	if oneClass(key) {
		return errors.New("the API key is letters of one case alone, or digits alone: a word or a number, which honest evidence (an answer, a log, a count) holds too, and redacting the key would take it out there" + use)
	}
	haystack := strataWords
	if len(texts) > 0 {
		haystack += "\n" + asciiLower(strings.Join(texts, "\n"))
	}
	vocab := Vocabulary(texts...)
	isWord := func(w string) bool { return vocab[w] }
	if low := asciiLower(key); madeOfWords(low, isWord, haystack) || madeOfWords(reverse(low), isWord, haystack) || madeOfWords(view, isWord, haystack) {
		return errors.New("the API key is a word, part of one, or made of words that results hold (strata's own text, the benchmark's fixtures, common English), and redacting the key would take them out of the evidence" + use)
	}
	return nil
}

// KeyIn reports whether the redactor would find key, in any of the forms
// it looks for, in text: text that must stay as it is (what the engine
// says about itself) cannot hold the key.
func KeyIn(key, text string) bool {
	if key == "" || text == "" {
		return false
	}
	found := false
	newKnownSet([]string{key}).replace(text, func(kind, what, match string) { found = true })
	return found
}

// oneClass reports whether the letters and digits of s are all letters of
// one case, or all digits.
func oneClass(s string) bool {
	var lower, upper, digit, other bool
	for _, r := range s {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsDigit(r):
			digit = true
		case unicode.IsLetter(r):
			other = true // a script without case
		}
	}
	letters := lower || upper || other
	return letters && !digit && (!lower || !upper) || digit && !letters
}

// madeOfWords reports whether low (ASCII lower case) is made of words:
// its one run of letters and digits is part of a word of haystack (words,
// or texts, in lower case) or of a common English word, as the redactor
// would find the key inside that word; or its runs are each a whole word
// (isWord), as a name strata writes is made ("qwen3-standard-v1"). A key
// of several runs that are no such words all ("my-server-key-42") does
// not stand in evidence by chance.
func madeOfWords(low string, isWord func(string) bool, haystack string) bool {
	runs := strings.FieldsFunc(low, notRunRune)
	switch len(runs) {
	case 0:
		return false
	case 1:
		return strings.Contains(haystack, runs[0]) || strings.Contains(commonWords, runs[0])
	}
	for _, run := range runs {
		if !isWord(run) {
			return false
		}
	}
	return true
}

// notRunRune is true for what separates runs of letters and digits in a
// key (in ASCII lower case).
func notRunRune(r rune) bool { return r != '_' && (r < 'a' || r > 'z') && (r < '0' || r > '9') }

// isStrataWord reports whether w is a word of strata's own text.
func isStrataWord(w string) bool {
	return strings.HasPrefix(strataWords, w+"\n") || strings.Contains(strataWords, "\n"+w+"\n")
}
