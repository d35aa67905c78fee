package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/sharedpath"
)

// TestLoaders: the vocab.json + merges.txt pair and a GGUF converted from the
// same tokenizer.json encode exactly as tokenizer.json does.
func TestLoaders(t *testing.T) {
	t.Parallel()
	tokPath := sharedpath.Path(t, "tokenizer", "qwen3", "tokenizer.json")
	ref := qwen(t)
	kvs, err := GGUFMetadata(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "m.gguf")
	if err := gguf.Write(model, kvs); err != nil {
		t.Fatal(err)
	}
	// vocab.json + merges.txt, from the GGUF's lists (as written: Load
	// reads them back from the file below).
	pack := filepath.Join(dir, "pack")
	if err := os.Mkdir(pack, 0o755); err != nil {
		t.Fatal(err)
	}
	list := map[string]any{}
	for _, kv := range kvs {
		list[kv.Key] = kv.Value
	}
	toks, _ := list["tokenizer.ggml.tokens"].([]string)
	types, _ := list["tokenizer.ggml.token_type"].([]int32)
	merges, _ := list["tokenizer.ggml.merges"].([]string)
	if len(toks) != 151669 || len(types) != len(toks) || len(merges) == 0 {
		t.Fatalf("GGUFMetadata: %d tokens, %d types, %d merges", len(toks), len(types), len(merges))
	}
	var vocab, added strings.Builder
	vocab.WriteString("{")
	added.WriteString(`{"added_tokens_decoder": {`)
	first, firstAdded := true, true
	for id, tok := range toks {
		q := jsonQuote(tok)
		if types[id] == 1 {
			if !first {
				vocab.WriteString(",")
			}
			first = false
			vocab.WriteString(q + ":" + itoa(id))
		} else {
			if !firstAdded {
				added.WriteString(",")
			}
			firstAdded = false
			added.WriteString(`"` + itoa(id) + `": {"content": ` + q + `, "special": ` + boolStr(types[id] == 3) + `}`)
		}
	}
	vocab.WriteString("}")
	added.WriteString("}}")
	for name, data := range map[string]string{"vocab.json": vocab.String(), "merges.txt": "#version: 0.2\n" + strings.Join(merges, "\n") + "\n",
		"tokenizer_config.json": added.String()} {
		if err := os.WriteFile(filepath.Join(pack, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	meta, err := gguf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	fromGGUF, err := FromGGUF(model, meta)
	if err != nil {
		t.Fatal(err)
	}
	// Load leaves a GGUF to FromGGUF, and says so.
	if _, err := Load(model); err == nil || !strings.Contains(err.Error(), "a GGUF model file is read from its metadata") {
		t.Errorf("Load(%s): %v", model, err)
	}
	fromPack, err := Load(pack)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range readVectors(t) {
		want, _ := ref.Encode(v.Text)
		for name, tok := range map[string]*Tokenizer{"gguf": fromGGUF, "vocab+merges": fromPack} {
			got, err := tok.Encode(v.Text)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("%s: %q: got %v (%v), want %v", name, v.Text, head(got), err, head(want))
			}
		}
	}
	files, err := SourceFiles(pack)
	if err != nil || len(files) != 3 {
		t.Errorf("SourceFiles(pack) = %v, %v", files, err)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		path string
		want string
	}{
		{write("wp.json", `{"model":{"type":"WordPiece"}}`), `model.type is "WordPiece"`},
		{write("uni.json", `{"model":{"type":"Unigram"}}`), `model.type is "Unigram"`},
		{write("fallback.json", `{"model":{"type":"BPE","byte_fallback":true,"vocab":{},"merges":[]}}`), "byte_fallback"},
		{write("norm.json", `{"normalizer":{"type":"Lowercase"},"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`), `normalizer: type "Lowercase"`},
		{write("nobytes.json", `{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`), "byte token"},
		{write("removed.json", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"a"},"behavior":"Removed"},{"type":"ByteLevel"}]},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`),
			`pre_tokenizer: the Split step's behavior "Removed" (invert false) is not supported; need Isolated`},
		{write("nopattern.json", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","behavior":"Isolated"},{"type":"ByteLevel"}]},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`),
			"pre_tokenizer: the Split step has no pattern"},
		{write("splitregex.json", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"a"},"behavior":"Isolated"},{"type":"ByteLevel","use_regex":true}]},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`),
			"pre_tokenizer: a Split step followed by a regex ByteLevel is not supported"},
		{write("trunc.json", `{"model":`), "not a tokenizer.json"},
		{write("dup.json", `{"model":{"type":"BPE","vocab":{"a":0,"a":1},"merges":[]}}`), "is in the vocabulary twice"},
		{write("id.json", `{"model":{"type":"BPE","vocab":{"a":1.5},"merges":[]}}`), "is not a token id"},
		{write("merge.json", `{"model":{"type":"BPE","vocab":{"a":0},"merges":["ab"]}}`), `"ab" is not "a b"`},
		{write("pair.json", `{"model":{"type":"BPE","vocab":{"a":0},"merges":[["a",1]]}}`), "not a pair of strings"},
		{write("nomerges.json", `{"model":{"type":"BPE","vocab":{"a":0}}}`), "model.merges: missing"},
		{filepath.Join(dir, "missing.json"), "no such file"},
		{dir, "neither tokenizer.json nor vocab.json"},
	}
	for _, c := range cases {
		_, err := Load(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Base(c.path)) {
			t.Errorf("Load(%s) = %v, want an error naming the file and %q", filepath.Base(c.path), err, c.want)
		}
	}
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
