// Command genvocab writes internal/redact/vocab.txt, the words of strata's
// own text (see internal/redact/vocabgen), and internal/redact/words.txt,
// common English words (see internal/redact/words.go). Run it with go
// generate ./internal/redact from the repository root.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/strata-bench/strata/internal/redact/vocabgen"
	"github.com/trustelem/zxcvbn/frequency"
)

func main() {
	root := filepath.Join("..", "..") // go generate runs in internal/redact
	words, err := vocabgen.Words(root, vocabgen.Folders...)
	if err == nil {
		err = os.WriteFile("vocab.txt", []byte(strings.Join(words, "\n")+"\n"), 0o644)
	}
	if err == nil {
		err = os.WriteFile("words.txt", []byte("\n"+strings.Join(common(), "\n")+"\n"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genvocab:", err)
		os.Exit(1)
	}
}

// common is the words of zxcvbn's lists of English Wikipedia's and US
// television's and film's most frequent words (its lists of first names
// and surnames are not taken: a user called alice or smith is a name), of
// two letters or more, sorted.
func common() []string {
	var out []string
	for _, list := range []string{"english_wikipedia", "us_tv_and_film"} {
		for _, w := range frequency.FrequencyLists[list] {
			if len(w) >= 2 && strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 {
				out = append(out, w)
			}
		}
	}
	sort.Strings(out)
	return out
}
