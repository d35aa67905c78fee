// Package tokenizer is a byte-level BPE tokenizer (GPT-2 style, as Qwen uses)
// that loads a Hugging Face tokenizer.json, a vocab.json + merges.txt pair,
// or the tokenizer metadata of a GGUF file, and returns token IDs exactly as
// Hugging Face's `tokenizers` does with add_special_tokens=false.
//
// No maintained Go library loads Qwen's tokenizer.json exactly (added tokens
// matched on the raw text, NFC between them, the Split regex with a
// lookahead, rank-ordered merges), so this one is ours. The steps are:
//
//  1. split the raw text on added tokens, leftmost-longest (they are matched
//     before normalization: NFC would compose ">" + U+0338 and destroy one);
//  2. NFC-normalize each remaining piece;
//  3. split it with the pre-tokenizer regex (dlclark/regexp2 in its default
//     mode, whose \s is Unicode White_Space like Python's `regex`);
//  4. map bytes to GPT-2's printable alphabet and merge by rank, leftmost
//     first on ties.
package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// Qwen2Pattern is the pre-tokenizer Split regex of Qwen2/Qwen3 tokenizers. It
// is used where the source (vocab.json + merges.txt, or a GGUF whose
// tokenizer.ggml.pre is "qwen2") does not carry the pattern itself.
const Qwen2Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// matchTimeout bounds one regex scan; the pattern has no catastrophic
// backtracking, so hitting it means a pathological input, not a slow machine.
const matchTimeout = 10 * time.Second

// AddedToken is a token matched literally in the raw text.
type AddedToken struct {
	ID      int
	Content string
	Special bool
}

// Spec is everything a byte-level BPE tokenizer is made of.
type Spec struct {
	// Vocab maps tokens, written in GPT-2's byte-to-unicode alphabet, to IDs.
	Vocab map[string]int
	// Merges in rank order; each is the pair of tokens merged.
	Merges [][2]string
	Added  []AddedToken
	// Pattern is the pre-tokenizer Split regex (behaviour "Isolated").
	Pattern string
	// NFC says whether the normalizer is NFC (the only one supported).
	NFC bool
}

// Tokenizer encodes text to token IDs. It is safe for concurrent use.
type Tokenizer struct {
	byteID  [256]int32
	merges  map[uint64]merge
	added   map[byte][]AddedToken // by first byte, longest first
	addedID map[string]int
	re      *regexp2.Regexp
	// qwen2 is set when the pattern is exactly Qwen2Pattern, which
	// qwen2Split matches without the regex engine.
	qwen2 bool
	nfc   bool
	size  int

	mu    sync.Mutex
	cache map[string][]int32 // pre-token -> ids; bounded, see encodePiece
	// noCache disables the cache (benchmarks measure the cold path with it).
	noCache bool
}

type merge struct {
	rank int32
	id   int32
}

const cacheLimit = 1 << 16

// New builds a tokenizer from a Spec.
func New(s Spec) (*Tokenizer, error) {
	if len(s.Vocab) == 0 {
		return nil, errors.New("empty vocabulary")
	}
	re, err := regexp2.Compile(s.Pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("pre-tokenizer pattern: %w", err)
	}
	re.MatchTimeout = matchTimeout
	t := &Tokenizer{
		merges:  make(map[uint64]merge, len(s.Merges)),
		added:   map[byte][]AddedToken{},
		addedID: map[string]int{},
		re:      re,
		qwen2:   s.Pattern == Qwen2Pattern,
		nfc:     s.NFC,
		size:    len(s.Vocab),
		cache:   map[string][]int32{},
	}
	enc := byteEncoder()
	for b := 0; b < 256; b++ {
		id, ok := s.Vocab[string(enc[b])]
		if !ok {
			return nil, fmt.Errorf("vocabulary lacks the byte token %q (0x%02x): not a byte-level BPE vocabulary", string(enc[b]), b)
		}
		t.byteID[b] = int32(id)
	}
	// The joined token is looked up through a reused buffer: no string is
	// made for each of the 150,000 merges.
	var joined []byte
	for rank, m := range s.Merges {
		joined = append(append(joined[:0], m[0]...), m[1]...)
		a, ok1 := s.Vocab[m[0]]
		b, ok2 := s.Vocab[m[1]]
		c, ok3 := s.Vocab[string(joined)]
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("merge %d (%q %q) names a token that is not in the vocabulary", rank, m[0], m[1])
		}
		key := pairKey(int32(a), int32(b))
		if _, dup := t.merges[key]; !dup { // the first (lowest) rank wins, as in tokenizers
			t.merges[key] = merge{rank: int32(rank), id: int32(c)}
		}
	}
	for _, a := range s.Added {
		if a.Content == "" {
			return nil, fmt.Errorf("added token %d has empty content", a.ID)
		}
		t.added[a.Content[0]] = append(t.added[a.Content[0]], a)
		t.addedID[a.Content] = a.ID
		if a.ID+1 > t.size {
			t.size = a.ID + 1
		}
	}
	for k := range t.added {
		list := t.added[k]
		sort.SliceStable(list, func(i, j int) bool { return len(list[i].Content) > len(list[j].Content) })
	}
	return t, nil
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// VocabSize is the number of IDs the tokenizer can produce (base + added).
func (t *Tokenizer) VocabSize() int { return t.size }

// AddedTokenID returns the ID of an added token by its content.
func (t *Tokenizer) AddedTokenID(content string) (int, bool) {
	id, ok := t.addedID[content]
	return id, ok
}

// Encode returns the token IDs of text. Added tokens written in the text come
// out as their single IDs; no BOS/EOS is inserted.
func (t *Tokenizer) Encode(text string) ([]int, error) {
	out := make([]int, 0, len(text)/3+1)
	start := 0
	for i := 0; i < len(text); {
		if cands := t.added[text[i]]; cands != nil {
			matched := false
			for _, a := range cands {
				if strings.HasPrefix(text[i:], a.Content) {
					var err error
					if out, err = t.encodeSegment(out, text[start:i]); err != nil {
						return nil, err
					}
					out = append(out, a.ID)
					i += len(a.Content)
					start = i
					matched = true
					break
				}
			}
			if matched {
				continue
			}
		}
		i++
	}
	return t.encodeSegment(out, text[start:])
}

// Count returns the number of tokens of text.
func (t *Tokenizer) Count(text string) (int, error) {
	ids, err := t.Encode(text)
	return len(ids), err
}

func (t *Tokenizer) encodeSegment(out []int, seg string) ([]int, error) {
	if seg == "" {
		return out, nil
	}
	if t.nfc {
		seg = norm.NFC.String(seg)
	}
	runes := []rune(seg)
	if t.qwen2 {
		qwen2Split(runes, func(a, b int) { out = t.encodePiece(out, string(runes[a:b])) })
		return out, nil
	}
	return t.encodeRegexp(out, runes)
}

// encodeRegexp splits with the pre-tokenizer regex (any pattern).
func (t *Tokenizer) encodeRegexp(out []int, runes []rune) ([]int, error) {
	m, err := t.re.FindRunesMatch(runes)
	pos := 0 // rune index of the end of the last match
	for {
		if err != nil {
			return nil, fmt.Errorf("pre-tokenizer: %w", err)
		}
		if m == nil {
			break
		}
		if m.Index > pos { // Isolated: text between matches is its own piece
			out = t.encodePiece(out, string(runes[pos:m.Index]))
		}
		out = t.encodePiece(out, string(runes[m.Index:m.Index+m.Length]))
		pos = m.Index + m.Length
		m, err = t.re.FindNextMatch(m)
	}
	if pos < len(runes) {
		out = t.encodePiece(out, string(runes[pos:]))
	}
	return out, nil
}

func (t *Tokenizer) encodePiece(out []int, piece string) []int {
	if t.noCache {
		for _, id := range t.bpe(piece) {
			out = append(out, int(id))
		}
		return out
	}
	t.mu.Lock()
	ids, ok := t.cache[piece]
	t.mu.Unlock()
	if !ok {
		ids = t.bpe(piece)
		t.mu.Lock()
		if len(t.cache) >= cacheLimit {
			clear(t.cache)
		}
		t.cache[piece] = ids
		t.mu.Unlock()
	}
	for _, id := range ids {
		out = append(out, int(id))
	}
	return out
}

// bpe merges the bytes of one pre-token by rank. Pieces are short (words,
// digits, whitespace runs), so the quadratic scan is cheaper than a heap.
func (t *Tokenizer) bpe(piece string) []int32 {
	syms := make([]int32, len(piece))
	for i := 0; i < len(piece); i++ {
		syms[i] = t.byteID[piece[i]]
	}
	for len(syms) > 1 {
		best, bestAt := merge{rank: -1}, -1
		for i := 0; i+1 < len(syms); i++ {
			m, ok := t.merges[pairKey(syms[i], syms[i+1])]
			if ok && (bestAt < 0 || m.rank < best.rank) {
				best, bestAt = m, i
			}
		}
		if bestAt < 0 {
			break
		}
		syms[bestAt] = best.id
		syms = append(syms[:bestAt+1], syms[bestAt+2:]...)
	}
	return syms
}

// byteEncoder is GPT-2's bytes_to_unicode: printable bytes map to themselves,
// the rest to code points from 256 up, in byte order.
func byteEncoder() [256]rune {
	var enc [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			enc[b] = rune(b)
		} else {
			enc[b] = rune(256 + n)
			n++
		}
	}
	return enc
}
