package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// byteLevelJSON is a tokenizer.json of the 256 byte tokens (GPT-2's byte
// to character table) and the given merges.
func byteLevelJSON(t *testing.T, merges ...string) []byte {
	t.Helper()
	vocab := map[string]int{}
	n := 0
	for b := range 256 {
		r := rune(b)
		if !(b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE) {
			r = rune(256 + n)
			n++
		}
		vocab[string(r)] = b
	}
	merges = append([]string{}, merges...) // [] rather than null
	for i, m := range merges {
		vocab[m[:1]+m[2:]] = 256 + i
	}
	data, err := json.Marshal(map[string]any{"pre_tokenizer": map[string]any{"type": "ByteLevel"},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": merges}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestLoadedReadsEachVersionOnce: a tokenizer read again is the one read
// before, from every caller at once; the file rewritten is read anew; a
// nil Loaded reads every time; and a file that cannot be read says so as
// Load does, each time.
func TestLoadedReadsEachVersionOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(path, byteLevelJSON(t, "a b"), 0o644); err != nil {
		t.Fatal(err)
	}
	var l Loaded
	got := make([]*Tokenizer, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			tok, err := l.Load(path)
			if err != nil {
				t.Error(err)
			}
			got[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range got[1:] {
		if tok != got[0] {
			t.Fatal("the same file was read into two tokenizers")
		}
	}
	if ids, _ := got[0].Encode("ab"); !slices.Equal(ids, []int{256}) {
		t.Errorf("ab is %v, want the merge's [256]", ids)
	}
	// Rewritten: without the merge, and (as a quick rewrite may keep the
	// modification time) of another size.
	os.WriteFile(path, append(byteLevelJSON(t), ' '), 0o644)
	os.Chtimes(path, time.Time{}, time.Now().Add(time.Second))
	again, err := l.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := again.Encode("ab"); again == got[0] || !slices.Equal(ids, []int{'a', 'b'}) {
		t.Errorf("after the file changed: ab is %v (the old tokenizer: %v)", ids, again == got[0])
	}
	var none *Loaded
	a, _ := none.Load(path)
	b, _ := none.Load(path)
	if a == nil || a == b {
		t.Error("a nil Loaded kept a tokenizer")
	}
	missing := filepath.Join(dir, "missing.json")
	_, want := Load(missing)
	for range 2 {
		if _, err := l.Load(missing); err == nil || err.Error() != want.Error() {
			t.Errorf("a missing file: %v, want %v", err, want)
		}
	}
	os.WriteFile(missing, []byte(`{"model":`), 0o644)
	_, want = Load(missing)
	for range 2 {
		if _, err := l.Load(missing); err == nil || err.Error() != want.Error() {
			t.Errorf("a torn file: %v, want %v", err, want)
		}
	}
}
