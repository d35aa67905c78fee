// Command genvocab writes internal/redact/vocab.txt, the words of strata's
// own text (see internal/redact/vocabgen). Run it with go generate
// ./internal/redact from the repository root.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-bench/strata/internal/redact/vocabgen"
)

func main() {
	root := filepath.Join("..", "..") // go generate runs in internal/redact
	words, err := vocabgen.Words(root, vocabgen.Folders...)
	if err == nil {
		err = os.WriteFile("vocab.txt", []byte(strings.Join(words, "\n")+"\n"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genvocab:", err)
		os.Exit(1)
	}
}
