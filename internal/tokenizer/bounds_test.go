package tokenizer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// byteTokenizer is a byte-level BPE of the 256 byte tokens and merges,
// split by pattern.
func byteTokenizer(t *testing.T, pattern string, merges ...[2]string) *Tokenizer {
	t.Helper()
	enc := byteEncoder()
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(enc[b])] = b
	}
	for _, m := range merges {
		vocab[m[0]+m[1]] = len(vocab)
	}
	tok, err := New(Spec{Vocab: vocab, Merges: merges, Pattern: pattern})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestEncodeBudgetIsWhole: the time bound is the whole tokenization's, not
// one regex match's: a pack's pre_pattern whose matches each look to the
// end of the text cannot keep a corpus build going match after match, BPE
// on the one huge piece a pattern that splits nothing (`(a|aa)+$`) leaves
// is bounded, and so is a long text split natively. The clock moves a
// second at each reading.
func TestEncodeBudgetIsWhole(t *testing.T) {
	t.Parallel()
	corpusText := strings.Repeat("[case x] record 0001: the quick brown fox jumps over the lazy dog.\n", 200)
	for _, c := range []struct {
		name, pattern, text string
		merges              [][2]string
	}{
		{"a pattern quadratic in matches", `[\s\S](?=[\s\S]*$)`, corpusText, nil},
		{"BPE on one huge piece", `(a|aa)+$`, strings.Repeat("a", 20_000), [][2]string{{"a", "a"}, {"aa", "aa"}}},
		{"the Qwen2 pattern, split natively", Qwen2Pattern, strings.Repeat("word ", 100_000), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tok := byteTokenizer(t, c.pattern, c.merges...)
			now := time.Unix(0, 0)
			tok.now = func() time.Time { now = now.Add(time.Second); return now }
			ids, err := tok.Encode(c.text)
			if !errors.Is(err, ErrTooSlow) {
				t.Fatalf("got %d ids, %v; want ErrTooSlow", len(ids), err)
			}
		})
	}
}

// TestEncodeEndsWithContext: a tokenization ends when its context does,
// with the context's cause.
func TestEncodeEndsWithContext(t *testing.T) {
	t.Parallel()
	tok := byteTokenizer(t, Qwen2Pattern)
	stop := errors.New("SIGTERM")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	if _, err := tok.EncodeContext(ctx, strings.Repeat("word ", 10_000)); !errors.Is(err, stop) {
		t.Fatalf("got %v, want the context's cause", err)
	}
}

// TestMatchTimeoutIsShort: a match that runs out of time is said without
// the text (regexp2's own error quotes all of it).
func TestMatchTimeoutIsShort(t *testing.T) {
	t.Parallel()
	tok := byteTokenizer(t, `(a|aa)+$`)
	tok.budget = 50 * time.Millisecond
	_, err := tok.Encode(strings.Repeat("a", 200) + "b")
	if !errors.Is(err, ErrTooSlow) || len(err.Error()) > 300 || strings.Contains(err.Error(), "aaaa") {
		t.Fatalf("got %v; want a short ErrTooSlow without the text", err)
	}
}

// TestLongLinesAreRefused: a merges.txt line or a token of a megabyte is
// refused with the file, the line and the length named, quoting at most a
// short prefix (a 50 MB line was printed twice, in 1.2 GB).
func TestLongLinesAreRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 1<<20)
	packFiles := func(vocab, merges string) map[string]string {
		return map[string]string{PackVocab: vocab, PackMerges: merges, PackTypes: "[1,1,1]"}
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		load  string
		want  string
	}{
		{"a pack's merges.txt line", packFiles(`{"a":0,"b":1,"ab":2}`, "a b\na "+long), ".", "merges.txt:2: a line of 1048578 bytes"},
		{"a pack's token", packFiles(`{"a":0,"b":1,"`+long+`":2}`, "a b"), ".", "vocab.json: a token of 1048576 bytes"},
		{"a merges.txt line beside vocab.json", map[string]string{"vocab.json": `{"a":0,"b":1,"ab":2}`, "merges.txt": "a b\n" + long + " " + long},
			"vocab.json", "merges.txt:2: a line of 2097153 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(filepath.Join(dir, c.load))
			if err == nil || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 400 {
				t.Fatalf("got %.500v; want a short error saying %q", err, c.want)
			}
		})
	}
}
