package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/inputfile"
)

// gpt2Pattern is the ByteLevel pre-tokenizer's own regex (use_regex: true).
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// SourceFiles lists the files Load reads for path, so a build can record
// each one's name and hash.
func SourceFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	if !st.IsDir() {
		if filepath.Base(path) == "vocab.json" {
			if IsPack(filepath.Dir(path)) {
				return packFiles(filepath.Dir(path)), nil
			}
			return vocabFiles(filepath.Dir(path)), nil
		}
		return []string{path}, nil
	}
	if IsPack(path) {
		return packFiles(path), nil
	}
	if _, err := os.Stat(filepath.Join(path, "tokenizer.json")); err == nil {
		return []string{filepath.Join(path, "tokenizer.json")}, nil
	}
	return vocabFiles(path), nil
}

func vocabFiles(dir string) []string {
	out := []string{filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt")}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer_config.json")); err == nil {
		out = append(out, filepath.Join(dir, "tokenizer_config.json"))
	}
	return out
}

// Load reads a tokenizer from path: a Hugging Face tokenizer.json, a
// vocab.json (with merges.txt beside it), a Strata pack's tokenizer folder
// (LoadPack; also named by its vocab.json), or a folder holding
// tokenizer.json or vocab.json + merges.txt. A GGUF model file is read by
// FromGGUF from its metadata, which this package does not parse.
func Load(path string) (*Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	if st.IsDir() && IsPack(path) {
		return LoadPack(path)
	}
	if !st.IsDir() && filepath.Base(path) == PackVocab && IsPack(filepath.Dir(path)) {
		// The token types beside it decide which tokens are special: never
		// read this vocabulary without them.
		return LoadPack(filepath.Dir(path))
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "tokenizer.json")); err == nil {
			return LoadJSON(filepath.Join(path, "tokenizer.json"))
		}
		if _, err := os.Stat(filepath.Join(path, "vocab.json")); err == nil {
			return LoadVocabMerges(filepath.Join(path, "vocab.json"), filepath.Join(path, "merges.txt"))
		}
		return nil, fmt.Errorf("tokenizer %s: folder has neither tokenizer.json nor vocab.json + merges.txt", path)
	}
	switch {
	case gguf.Named(path):
		return nil, fmt.Errorf("tokenizer %s: a GGUF model file is read from its metadata (FromGGUF)", path)
	case filepath.Base(path) == "vocab.json":
		return LoadVocabMerges(path, filepath.Join(filepath.Dir(path), "merges.txt"))
	default:
		return LoadJSON(path)
	}
}

type hfAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type hfPreTokenizer struct {
	Type          string           `json:"type"`
	Pretokenizers []hfPreTokenizer `json:"pretokenizers"`
	Pattern       *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior string `json:"behavior"`
	Invert   bool   `json:"invert"`
	UseRegex *bool  `json:"use_regex"`
}

type hfNormalizer struct {
	Type        string         `json:"type"`
	Normalizers []hfNormalizer `json:"normalizers"`
}

type hfFile struct {
	AddedTokens  []hfAddedToken  `json:"added_tokens"`
	Normalizer   *hfNormalizer   `json:"normalizer"`
	PreTokenizer *hfPreTokenizer `json:"pre_tokenizer"`
	Model        struct {
		Type                    string     `json:"type"`
		Vocab                   vocabJSON  `json:"vocab"`
		Merges                  mergesJSON `json:"merges"`
		ByteFallback            bool       `json:"byte_fallback"`
		ContinuingSubwordPrefix *string    `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string    `json:"end_of_word_suffix"`
		Dropout                 *float64   `json:"dropout"`
	} `json:"model"`
}

// MaxFileBytes bounds each tokenizer file strata reads (Qwen3's
// tokenizer.json is 11 MB; the largest vocabularies in use are a few times
// that).
const MaxFileBytes = 256 << 20

// LoadJSON reads a Hugging Face tokenizer.json. Only what byte-level BPE
// needs is supported; anything else is an error naming the field, never a
// silent approximation.
func LoadJSON(path string) (*Tokenizer, error) {
	data, err := inputfile.Read(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	// json v2 with the vocabulary and merges read token by token, which
	// spares encoding/json's reflection over a file of megabytes. The
	// vocabulary checks its own duplicates, more cheaply than the decoder's
	// check of every object.
	var f hfFile
	if err := jsonv2.Unmarshal(data, &f, jsontext.AllowDuplicateNames(true)); err != nil {
		return nil, fmt.Errorf("tokenizer %s: not a tokenizer.json: %w", path, err)
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("tokenizer %s: %s", path, fmt.Sprintf(format, a...))
	}
	if f.Model.Type != "BPE" {
		return nil, fail("model.type is %s; only byte-level \"BPE\" tokenizers are supported", quoted(f.Model.Type))
	}
	if f.Model.ByteFallback {
		return nil, fail("model.byte_fallback is true; only byte-level BPE is supported")
	}
	if p := f.Model.ContinuingSubwordPrefix; p != nil && *p != "" {
		return nil, fail("model.continuing_subword_prefix %s is not supported", quoted(*p))
	}
	if p := f.Model.EndOfWordSuffix; p != nil && *p != "" {
		return nil, fail("model.end_of_word_suffix %s is not supported", quoted(*p))
	}
	if d := f.Model.Dropout; d != nil && *d != 0 {
		return nil, fail("model.dropout %v is not supported (encoding would not be deterministic)", *d)
	}
	if f.Model.Merges == nil {
		return nil, fail("model.merges: missing")
	}
	merges := [][2]string(f.Model.Merges)
	nfc, err := normalizerNFC(f.Normalizer)
	if err != nil {
		return nil, fail("normalizer: %v", err)
	}
	pattern, err := preTokenizerPattern(f.PreTokenizer)
	if err != nil {
		return nil, fail("pre_tokenizer: %v", err)
	}
	var added []AddedToken
	for _, a := range f.AddedTokens {
		if a.SingleWord || a.LStrip || a.RStrip {
			return nil, fail("added token %s uses single_word/lstrip/rstrip, which is not supported", quoted(a.Content))
		}
		added = append(added, AddedToken{ID: a.ID, Content: a.Content, Special: a.Special})
	}
	t, err := New(Spec{Vocab: map[string]int(f.Model.Vocab), Merges: merges, Added: added, Pattern: pattern, NFC: nfc})
	if err != nil {
		return nil, fail("%v", err)
	}
	return t, nil
}

// vocabJSON and mergesJSON read model.vocab and model.merges token by
// token: 150,000 entries each, which reflection-based decoding spent most
// of the load on.
type vocabJSON map[string]int

func (v *vocabJSON) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errors.New("expected an object of token: id")
	}
	m := make(vocabJSON, 1<<17)
	for dec.PeekKind() != '}' {
		k, err := dec.ReadToken()
		if err != nil {
			return err
		}
		key := k.String() // the next read voids k
		id, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if id.Kind() != '0' {
			return fmt.Errorf("token %s: the id is not a number", quoted(key))
		}
		n, err := id.Int()
		if err != nil || n < 0 || n > 1<<31 {
			return fmt.Errorf("token %s: id %s is not a token id", quoted(key), quoted(id.String()))
		}
		before := len(m)
		m[key] = int(n) // one map operation, not a look-up and a write
		if len(m) == before {
			return fmt.Errorf("token %s is in the vocabulary twice", quoted(key))
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*v = m
	return nil
}

type mergesJSON [][2]string

// UnmarshalJSONFrom reads newer files' pairs and older ones' "a b" strings.
func (ms *mergesJSON) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return errors.New("expected an array of pairs or of \"a b\" strings")
	}
	out := make(mergesJSON, 0, 1<<17)
	for i := 0; dec.PeekKind() != ']'; i++ {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch tok.Kind() {
		case '"':
			a, b, ok := strings.Cut(tok.String(), " ")
			if !ok {
				return fmt.Errorf("entry %d %s is not \"a b\"", i, quoted(tok.String()))
			}
			out = append(out, [2]string{a, b})
		case '[':
			var pair [2]string
			for j := 0; j < 2; j++ {
				t, err := dec.ReadToken()
				if err != nil || t.Kind() != '"' {
					return fmt.Errorf("entry %d is not a pair of strings", i)
				}
				pair[j] = t.String()
			}
			if t, err := dec.ReadToken(); err != nil || t.Kind() != ']' {
				return fmt.Errorf("entry %d is not a pair of strings", i)
			}
			out = append(out, pair)
		default:
			return errors.New("expected an array of pairs or of \"a b\" strings")
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*ms = out
	return nil
}

func normalizerNFC(n *hfNormalizer) (bool, error) {
	if n == nil {
		return false, nil
	}
	switch n.Type {
	case "NFC":
		return true, nil
	case "Sequence":
		nfc := false
		for _, c := range n.Normalizers {
			got, err := normalizerNFC(&c)
			if err != nil {
				return false, err
			}
			nfc = nfc || got
		}
		return nfc, nil
	}
	return false, fmt.Errorf("type %s is not supported (only NFC)", quoted(n.Type))
}

func preTokenizerPattern(p *hfPreTokenizer) (string, error) {
	if p == nil {
		return "", errors.New("missing; a byte-level BPE needs a ByteLevel pre-tokenizer")
	}
	switch p.Type {
	case "ByteLevel":
		if p.UseRegex == nil || *p.UseRegex {
			return gpt2Pattern, nil
		}
		return "", errors.New("ByteLevel without use_regex needs a Split before it")
	case "Sequence":
		return sequencePattern(p.Pretokenizers)
	}
	return "", fmt.Errorf("type %s is not supported", quoted(p.Type))
}

// sequencePattern is the pattern of a Sequence pre-tokenizer: one Split
// (or a ByteLevel with use_regex) gives it, and a ByteLevel step must be
// there.
func sequencePattern(steps []hfPreTokenizer) (string, error) {
	pattern, byteLevel := "", false
	for _, c := range steps {
		switch c.Type {
		case "Split":
			if pattern != "" {
				return "", errors.New("more than one Split is not supported")
			}
			p, err := splitPattern(c)
			if err != nil {
				return "", err
			}
			pattern = p
		case "ByteLevel":
			byteLevel = true
			if c.UseRegex != nil && *c.UseRegex {
				if pattern != "" {
					return "", errors.New("a Split step followed by a regex ByteLevel is not supported")
				}
				pattern = gpt2Pattern
			}
		default:
			return "", fmt.Errorf("pre-tokenizer %s is not supported", quoted(c.Type))
		}
	}
	if !byteLevel {
		return "", errors.New("no ByteLevel step: not a byte-level BPE")
	}
	if pattern == "" {
		return "", errors.New("no Split pattern")
	}
	return pattern, nil
}

// splitPattern is a Split step's pattern: a regex as it is, a string
// quoted; only the Isolated behavior is supported.
func splitPattern(c hfPreTokenizer) (string, error) {
	if c.Behavior != "Isolated" || c.Invert {
		return "", fmt.Errorf("the Split step's behavior %s (invert %v) is not supported; need Isolated", quoted(c.Behavior), c.Invert)
	}
	switch {
	case c.Pattern != nil && c.Pattern.Regex != nil:
		return *c.Pattern.Regex, nil
	case c.Pattern != nil && c.Pattern.String != nil:
		return regexpQuote(*c.Pattern.String), nil
	}
	return "", errors.New("the Split step has no pattern")
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$#`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// LoadVocabMerges reads the vocab.json + merges.txt pair of a Qwen2-style
// pack. Such a pair does not carry the pre-tokenizer or the normalizer, so
// the Qwen2 pattern and NFC are used (what transformers' Qwen2Tokenizer
// does). Added tokens come from tokenizer_config.json's added_tokens_decoder
// when that file is beside vocab.json.
func LoadVocabMerges(vocabPath, mergesPath string) (*Tokenizer, error) {
	data, err := inputfile.Read(vocabPath, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var vocab map[string]int
	if err := json.Unmarshal(data, &vocab); err != nil {
		return nil, fmt.Errorf("tokenizer %s: not a vocab.json object: %w", vocabPath, err)
	}
	mf, err := inputfile.Read(mergesPath, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var merges [][2]string
	err = eachLine(mergesPath, mf, func(n int, line string) error {
		line = strings.TrimSuffix(line, "\r") // as bufio.ScanLines reads a line
		if n == 1 && strings.HasPrefix(line, "#version") || line == "" {
			return nil
		}
		a, b, ok := strings.Cut(line, " ")
		if !ok {
			return fmt.Errorf("tokenizer %s:%d: expected \"a b\", got %s", mergesPath, n, quoted(line))
		}
		merges = append(merges, [2]string{a, b})
		return nil
	})
	if err != nil {
		return nil, err
	}
	added, err := addedFromConfig(filepath.Join(filepath.Dir(vocabPath), "tokenizer_config.json"))
	if err != nil {
		return nil, err
	}
	t, err := New(Spec{Vocab: vocab, Merges: merges, Added: added, Pattern: Qwen2Pattern, NFC: true})
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", vocabPath, err)
	}
	return t, nil
}

func addedFromConfig(path string) ([]AddedToken, error) {
	data, err := inputfile.Read(path, MaxFileBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	var cfg struct {
		AddedTokensDecoder map[string]hfAddedToken `json:"added_tokens_decoder"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	var out []AddedToken
	for k, a := range cfg.AddedTokensDecoder {
		id, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: added_tokens_decoder key %s is not an id", path, quoted(k))
		}
		out = append(out, AddedToken{ID: id, Content: a.Content, Special: a.Special})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// eachLine calls fn with each line of the merges file at path, numbered
// from 1 and without its "\n" (a final newline ends the last line, it
// starts none), after checking its length: a line of megabytes is no
// merge, and is quoted by its first bytes only.
func eachLine(path string, data []byte, fn func(n int, line string) error) error {
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) > maxMergeLine {
			return fmt.Errorf("tokenizer %s:%d: a line of %d bytes (%s); a merge is two tokens of at most %d bytes each", path, n, len(line), quotedStart(string(line[:quoteBytes+1])), maxTokenBytes)
		}
		if err := fn(n, string(line)); err != nil {
			return err
		}
	}
	return nil
}

// GGUF token types (llama.cpp's llama_token_type).
const (
	ggufTokenNormal      = 1
	ggufTokenControl     = 3
	ggufTokenUserDefined = 4
)

// GGUF is a GGUF model file's metadata as its reader gives it
// (gguf.File): strings, and lists of strings and of integers.
type GGUF interface {
	String(key string) (string, bool)
	Strings(key string) ([]string, bool)
	Ints(key string) ([]int64, bool)
}

// FromGGUF makes the tokenizer of the GGUF model file at path from its
// tokenizer.ggml.* metadata, f (read with its lists). Only byte-level BPE
// ("gpt2") with the Qwen2 pre-tokenizer is supported, since that is the
// only pattern this package can name exactly.
func FromGGUF(path string, f GGUF) (*Tokenizer, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("tokenizer %s: %s", path, fmt.Sprintf(format, a...))
	}
	model, ok := f.String("tokenizer.ggml.model")
	if !ok {
		return nil, fail("no tokenizer metadata (tokenizer.ggml.model is missing)")
	}
	if model != "gpt2" {
		return nil, fail("tokenizer.ggml.model is %s; only byte-level BPE (\"gpt2\") is supported", quoted(model))
	}
	pre, _ := f.String("tokenizer.ggml.pre")
	if pre != "qwen2" {
		return nil, fail("tokenizer.ggml.pre is %s; only \"qwen2\" is supported", quoted(pre))
	}
	tokens, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok {
		return nil, fail("tokenizer.ggml.tokens is missing")
	}
	types, ok := f.Ints("tokenizer.ggml.token_type")
	if !ok || len(types) != len(tokens) {
		return nil, fail("tokenizer.ggml.token_type is missing or does not match tokenizer.ggml.tokens")
	}
	rawMerges, ok := f.Strings("tokenizer.ggml.merges")
	if !ok {
		return nil, fail("tokenizer.ggml.merges is missing")
	}
	vocab := make(map[string]int, len(tokens))
	var added []AddedToken
	for id, tok := range tokens {
		switch types[id] {
		case ggufTokenNormal:
			vocab[tok] = id
		case ggufTokenControl, ggufTokenUserDefined:
			added = append(added, AddedToken{ID: id, Content: tok, Special: types[id] == ggufTokenControl})
		}
	}
	merges := make([][2]string, 0, len(rawMerges))
	for i, m := range rawMerges {
		a, b, ok := strings.Cut(m, " ")
		if !ok {
			return nil, fail("tokenizer.ggml.merges[%d] %s is not \"a b\"", i, quoted(m))
		}
		merges = append(merges, [2]string{a, b})
	}
	t, err := New(Spec{Vocab: vocab, Merges: merges, Added: added, Pattern: Qwen2Pattern, NFC: true})
	if err != nil {
		return nil, fail("%v", err)
	}
	return t, nil
}

// GGUFMetadata converts a tokenizer.json into the tokenizer.ggml.* metadata
// llama.cpp's converter writes for a Qwen2/Qwen3 model: every ID in order
// with its token type (NORMAL for vocabulary entries, CONTROL for special
// added tokens, USER_DEFINED for the others), the merges as "a b" strings,
// model "gpt2" and pre-tokenizer "qwen2". The simulated engine and the tests
// use it to write small GGUF files that carry a real tokenizer.
func GGUFMetadata(tokenizerJSON string) ([]gguf.KV, error) {
	data, err := inputfile.Read(tokenizerJSON, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var f hfFile
	if err := jsonv2.Unmarshal(data, &f, jsontext.AllowDuplicateNames(true)); err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", tokenizerJSON, err)
	}
	merges := [][2]string(f.Model.Merges)
	n := len(f.Model.Vocab)
	for _, a := range f.AddedTokens {
		n = max(n, a.ID+1)
	}
	tokens := make([]string, n)
	types := make([]int32, n)
	for tok, id := range f.Model.Vocab {
		tokens[id], types[id] = tok, ggufTokenNormal
	}
	for _, a := range f.AddedTokens {
		tokens[a.ID], types[a.ID] = a.Content, ggufTokenUserDefined
		if a.Special {
			types[a.ID] = ggufTokenControl
		}
	}
	for id := range tokens {
		if types[id] == 0 {
			return nil, fmt.Errorf("tokenizer %s: no token has id %d", tokenizerJSON, id)
		}
	}
	ms := make([]string, len(merges))
	for i, m := range merges {
		ms[i] = m[0] + " " + m[1]
	}
	return []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "tokenizer.ggml.pre", Value: "qwen2"},
		{Key: "tokenizer.ggml.tokens", Value: tokens},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: ms},
	}, nil
}
