package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Loaded keeps the tokenizers one process has read, by the files they were
// read from, so that a process running many commands reads each once: the
// tests run strata's commands in process, some twenty of them on Qwen3's
// 11 MB tokenizer.json, at a tenth of a second each. A file changed since
// (another size or modification time) is read again, and a tokenizer is
// safe to share (its pre-token cache has its own lock). The zero value is
// ready; a nil *Loaded reads every time, as a command run once does.
type Loaded struct {
	mu sync.Mutex
	by map[string]*loading
}

// loading is one read, shared by the callers that ask for it meanwhile.
type loading struct {
	once sync.Once
	tok  *Tokenizer
	err  error
}

// Load is the package's Load, once per version of the files.
func (l *Loaded) Load(path string) (*Tokenizer, error) {
	if l == nil {
		return Load(path)
	}
	key, ok := filesKey(path)
	if !ok {
		return Load(path) // Load says what is wrong with path, in its words
	}
	l.mu.Lock()
	if l.by == nil {
		l.by = map[string]*loading{}
	}
	e := l.by[key]
	if e == nil {
		e = &loading{}
		l.by[key] = e
	}
	l.mu.Unlock()
	e.once.Do(func() { e.tok, e.err = Load(path) })
	if e.err != nil {
		// Not kept: the next command says the same, or the file is mended.
		l.mu.Lock()
		if l.by[key] == e {
			delete(l.by, key)
		}
		l.mu.Unlock()
	}
	return e.tok, e.err
}

// filesKey names the version of the files path reads: each one's absolute
// path, size and modification time, in the order SourceFiles gives them.
func filesKey(path string) (string, bool) {
	files, err := SourceFiles(path)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return "", false
		}
		st, err := os.Stat(abs)
		if err != nil {
			return "", false
		}
		fmt.Fprintf(&b, "%s\x00%d\x00%d\x00", abs, st.Size(), st.ModTime().UnixNano())
	}
	return b.String(), true
}
