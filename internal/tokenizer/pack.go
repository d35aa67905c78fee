package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-bench/strata/internal/inputfile"
	"github.com/strata-bench/strata/internal/strictjson"
)

// A Strata pack's tokenizer/ folder, as tools/strata_tokenizer.py's
// extract writes it (Niko1221/Strata @29257720) and serve/server.py's main
// reads it (@452325a9):
//
//   - vocab.json: one JSON object, token (GPT-2 byte alphabet) → id, the
//     ids exactly 0..n-1;
//   - merges.txt: "a b" lines in rank order, no header, no final newline;
//   - token_type.json: a JSON list of ints, one per id (GGUF's token types):
//     3 (CONTROL, <|im_start|>) is matched only as special text, 4
//     (USER_DEFINED, <think>) always; every other type is reached only
//     through BPE;
//   - tokenizer.json: Strata's own configuration, not Hugging Face's (model
//     "gpt2", pre, vocab_size, n_merges, special_ids, add_bos_token,
//     pre_pattern, pre_pattern_source). The server does not read it and
//     always splits with the qwen35 pattern; a pack without one is read the
//     same way.
//   - chat_template.jinja, which the template loader reads, not this one.
//
// No normalization is applied (the pack's encoder has none) and no BOS or
// EOS is added.
const (
	PackVocab     = "vocab.json"
	PackMerges    = "merges.txt"
	PackTypes     = "token_type.json"
	PackConfig    = "tokenizer.json"
	packControl   = 3
	packUser      = 4
	qwen35Pattern = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// packConfig is Strata's tokenizer.json.
type packConfig struct {
	Model            string         `json:"model"`
	Pre              string         `json:"pre"`
	VocabSize        *int           `json:"vocab_size"`
	NMerges          *int           `json:"n_merges"`
	SpecialIDs       map[string]int `json:"special_ids"`
	AddBOSToken      bool           `json:"add_bos_token"`
	PrePattern       string         `json:"pre_pattern"`
	PrePatternSource string         `json:"pre_pattern_source"`
}

// IsPack reports whether dir is a Strata pack's tokenizer folder: it holds
// token_type.json, or a tokenizer.json that is Strata's configuration.
func IsPack(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, PackTypes)); err == nil {
		return true
	}
	data, err := inputfile.Read(filepath.Join(dir, PackConfig), MaxFileBytes)
	return err == nil && isPackConfig(data)
}

// isPackConfig tells Strata's tokenizer.json (model is a string) from
// Hugging Face's (model is an object), from its first bytes.
func isPackConfig(data []byte) bool {
	var probe struct {
		Model json.RawMessage `json:"model"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return false
	}
	m := bytes.TrimSpace(probe.Model)
	return len(m) > 0 && m[0] == '"'
}

// packFiles lists the files LoadPack reads in dir.
func packFiles(dir string) []string {
	out := []string{filepath.Join(dir, PackVocab), filepath.Join(dir, PackMerges), filepath.Join(dir, PackTypes)}
	if _, err := os.Stat(filepath.Join(dir, PackConfig)); err == nil {
		out = append(out, filepath.Join(dir, PackConfig))
	}
	return out
}

// LoadPack reads a Strata pack's tokenizer folder. Every disagreement
// between its files (a merge naming an unknown token, types of another
// length than the vocabulary, ids with gaps, counts the configuration
// states otherwise) is an error naming the file and, for merges.txt, the
// line.
func LoadPack(dir string) (*Tokenizer, error) {
	fail := func(file, format string, a ...any) error {
		return fmt.Errorf("tokenizer %s: %s", filepath.Join(dir, file), fmt.Sprintf(format, a...))
	}
	cfg, err := readPackConfig(dir)
	if err != nil {
		return nil, err
	}
	tokens, vocab, err := readPackVocab(dir)
	if err != nil {
		return nil, err
	}
	types, err := readPackTypes(dir, len(tokens))
	if err != nil {
		return nil, err
	}
	merges, err := readPackMerges(dir, vocab)
	if err != nil {
		return nil, err
	}
	pattern := qwen35Pattern
	if cfg != nil {
		switch {
		case cfg.Model != "gpt2":
			return nil, fail(PackConfig, "model is %s; only byte-level BPE (\"gpt2\") is supported", quoted(cfg.Model))
		case cfg.AddBOSToken:
			return nil, fail(PackConfig, "add_bos_token is true; the protocol's counts add no BOS, and strata does not add one")
		case cfg.VocabSize != nil && *cfg.VocabSize != len(tokens):
			return nil, fail(PackConfig, "vocab_size is %d, but %s has %d tokens", *cfg.VocabSize, PackVocab, len(tokens))
		case cfg.NMerges != nil && *cfg.NMerges != len(merges):
			return nil, fail(PackConfig, "n_merges is %d, but %s has %d merges", *cfg.NMerges, PackMerges, len(merges))
		case cfg.PrePattern != "":
			pattern = cfg.PrePattern
		}
	}
	var added []AddedToken
	for id, ty := range types {
		if ty == packControl || ty == packUser {
			added = append(added, AddedToken{ID: id, Content: tokens[id], Special: ty == packControl})
		}
	}
	t, err := New(Spec{Vocab: vocab, Merges: merges, Added: added, Pattern: pattern})
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", dir, err)
	}
	return t, nil
}

func readPackConfig(dir string) (*packConfig, error) {
	path := filepath.Join(dir, PackConfig)
	data, err := inputfile.Read(path, MaxFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		err = strictjson.Check(data)
	}
	var cfg packConfig
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		err = dec.Decode(&cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: not Strata's tokenizer configuration: %w", path, err)
	}
	return &cfg, nil
}

// readPackVocab returns the tokens by id and the vocabulary.
func readPackVocab(dir string) ([]string, map[string]int, error) {
	path := filepath.Join(dir, PackVocab)
	data, err := inputfile.Read(path, MaxFileBytes)
	if err == nil {
		err = strictjson.Check(data) // a token listed twice would be two readings
	}
	var vocab map[string]int
	if err == nil {
		err = json.Unmarshal(data, &vocab)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("tokenizer %s: not a vocab.json object (token → id): %w", path, err)
	}
	tokens := make([]string, len(vocab))
	seen := make([]bool, len(vocab))
	for tok, id := range vocab {
		if err := checkToken(tok); err != nil {
			return nil, nil, fmt.Errorf("tokenizer %s: %w", path, err)
		}
		if id < 0 || id >= len(vocab) || seen[id] {
			return nil, nil, fmt.Errorf("tokenizer %s: token %s has id %d; the ids must be exactly 0..%d, once each", path, quoted(tok), id, len(vocab)-1)
		}
		tokens[id], seen[id] = tok, true
	}
	return tokens, vocab, nil
}

func readPackTypes(dir string, n int) ([]int, error) {
	path := filepath.Join(dir, PackTypes)
	data, err := inputfile.Read(path, MaxFileBytes)
	var types []int
	if err == nil {
		err = json.Unmarshal(data, &types)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("tokenizer %s: not a list of token types: %w", path, err)
	case len(types) != n:
		return nil, fmt.Errorf("tokenizer %s: %d token types for the %d tokens of %s", path, len(types), n, PackVocab)
	}
	return types, nil
}

// readPackMerges reads merges.txt: "a b" lines; a Hugging Face "#version"
// first line and a final newline are tolerated.
func readPackMerges(dir string, vocab map[string]int) ([][2]string, error) {
	path := filepath.Join(dir, PackMerges)
	data, err := inputfile.Read(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("tokenizer %s:1: expected \"a b\", got \"\"", path)
	}
	merges := make([][2]string, 0, bytes.Count(data, []byte{'\n'})+1)
	err = eachLine(path, data, func(n int, line string) error {
		if n == 1 && strings.HasPrefix(line, "#version") {
			return nil
		}
		a, b, ok := strings.Cut(line, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return fmt.Errorf("tokenizer %s:%d: expected \"a b\", got %s", path, n, quoted(line))
		}
		for _, part := range []string{a, b, a + b} {
			if _, ok := vocab[part]; !ok {
				return fmt.Errorf("tokenizer %s:%d: the merge %s %s names %s, which is not in %s", path, n, quoted(a), quoted(b), quoted(part), PackVocab)
			}
		}
		merges = append(merges, [2]string{a, b})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return merges, nil
}

// WritePack writes the tokenizer of a Hugging Face tokenizer.json as a
// Strata pack's tokenizer folder into dir, in the form extract writes (the
// same tokens, ids, merges and types llama.cpp's converter gives a GGUF),
// with a tokenizer.json naming the pre-tokenizer the source carries. It
// lets a pack be held to the tokenizer it came from.
func WritePack(tokenizerJSON, dir string) error {
	kvs, err := GGUFMetadata(tokenizerJSON)
	if err != nil {
		return err
	}
	md := map[string]any{}
	for _, kv := range kvs {
		md[kv.Key] = kv.Value
	}
	tokens := md["tokenizer.ggml.tokens"].([]string)
	vocab := make(map[string]int, len(tokens))
	for id, t := range tokens {
		vocab[t] = id
	}
	vocabJSON, err := json.Marshal(vocab)
	if err != nil {
		return err
	}
	typesJSON, err := json.Marshal(md["tokenizer.ggml.token_type"])
	if err != nil {
		return err
	}
	merges := md["tokenizer.ggml.merges"].([]string)
	n, nm := len(tokens), len(merges)
	cfg, err := json.MarshalIndent(packConfig{Model: "gpt2", Pre: "qwen2", VocabSize: &n, NMerges: &nm, SpecialIDs: map[string]int{},
		PrePattern: Qwen2Pattern, PrePatternSource: "the Split pre-tokenizer of " + filepath.Base(tokenizerJSON)}, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{PackVocab: vocabJSON, PackTypes: typesJSON, PackConfig: cfg,
		PackMerges: []byte(strings.Join(merges, "\n"))} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
