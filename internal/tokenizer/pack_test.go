package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/sharedpath"
	"golang.org/x/text/unicode/norm"
)

// TestPack: the Qwen3 tokenizer written as a Strata pack's tokenizer
// folder encodes every reference vector as tokenizer.json does (the pack
// applies no NFC, so vectors that NFC changes are left out), named by the
// folder or by its vocab.json; SourceFiles names the pack's files.
func TestPack(t *testing.T) {
	t.Parallel()
	ref := qwen(t)
	dir := filepath.Join(t.TempDir(), "tokenizer")
	if err := WritePack(sharedpath.Path(t, "tokenizer", "qwen3", "tokenizer.json"), dir); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Join(dir, PackVocab)} {
		tok, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, v := range readVectors(t) {
			if !norm.NFC.IsNormalString(v.Text) {
				continue
			}
			want, _ := ref.Encode(v.Text)
			got, err := tok.Encode(v.Text)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("%s: %q: got %v (%v), want %v", path, v.Text, head(got), err, head(want))
			}
			checked++
		}
		if checked < 300 {
			t.Errorf("only %d vectors checked", checked)
		}
		files, err := SourceFiles(path)
		if err != nil || len(files) != 4 || filepath.Base(files[2]) != PackTypes {
			t.Errorf("SourceFiles(%s) = %v, %v", path, files, err)
		}
	}
}

// TestPackErrors: a pack whose files disagree fails with the file (and the
// line of merges.txt) named.
func TestPackErrors(t *testing.T) {
	t.Parallel()
	vocab := `{"a":0,"b":1,"ab":2,"<|im_start|>":3}`
	base := map[string]string{PackVocab: vocab, PackMerges: "a b", PackTypes: "[1,1,1,3]",
		PackConfig: `{"model":"gpt2","pre":"qwen35","vocab_size":4,"n_merges":1,"special_ids":{},"add_bos_token":false,"pre_pattern":"\\s+|\\S+","pre_pattern_source":"test"}`}
	for _, c := range []struct {
		name, file, content, want string
	}{
		{"a merge naming an unknown token", PackMerges, "a b\nb c", `merges.txt:2: the merge "b" "c" names "c"`},
		{"a merge that is not a pair", PackMerges, "a b\nabc", `merges.txt:2: expected "a b"`},
		{"types of the wrong length", PackTypes, "[1,1,3]", "token_type.json: 3 token types for the 4 tokens"},
		{"types that are not ints", PackTypes, `["x"]`, "token_type.json: not a list of token types"},
		{"ids with a gap", PackVocab, `{"a":0,"b":1,"ab":2,"<|im_start|>":5}`, "vocab.json: token"},
		{"a token twice", PackVocab, `{"a":0,"a":1,"ab":2,"<|im_start|>":3}`, "vocab.json: not a vocab.json object"},
		{"a vocab_size that disagrees", PackConfig, `{"model":"gpt2","vocab_size":9}`, "tokenizer.json: vocab_size is 9"},
		{"a BOS", PackConfig, `{"model":"gpt2","add_bos_token":true}`, "add_bos_token is true"},
		{"an unknown key", PackConfig, `{"model":"gpt2","bogus":1}`, `tokenizer.json: not Strata's tokenizer configuration`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range base {
				if name == c.file {
					content = c.content
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Load: %v; want an error with %q", err, c.want)
			}
		})
	}
}
