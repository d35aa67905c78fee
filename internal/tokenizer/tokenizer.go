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
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"

	"github.com/strata-bench/strata/internal/clock"
)

// Qwen2Pattern is the pre-tokenizer Split regex of Qwen2/Qwen3 tokenizers. It
// is used where the source (vocab.json + merges.txt, or a GGUF whose
// tokenizer.ggml.pre is "qwen2") does not carry the pattern itself.
const Qwen2Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// One tokenization is bounded in time as a whole, not match by match: a
// pre-tokenizer pattern whose cost grows past linear, or one that splits
// nothing and leaves BPE a single huge piece, must not run on for as long
// as each match stays within a bound. The bound is encodeBase plus
// encodePerMiB for each MiB of text, several times what a loaded machine
// takes on text that splits into words.
const (
	encodeBase   = 10 * time.Second
	encodePerMiB = time.Second
	// checkEvery is how many steps of work (bytes scanned, pieces, pairs
	// of symbols) pass between two checks of the context and the clock.
	checkEvery = 4096
)

// ErrTooSlow is returned for a tokenization past its time bound.
var ErrTooSlow = errors.New("the tokenization took longer than strata allows")

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
	// res holds compiled copies of the pattern, one for each tokenization
	// in progress: each sets its regexp's MatchTimeout to the time it has
	// left.
	res sync.Pool
	// qwen2 is set when the pattern is exactly Qwen2Pattern, which
	// qwen2Split matches without the regex engine.
	qwen2 bool
	nfc   bool
	size  int

	mu    sync.Mutex
	cache map[string][]int32 // pre-token -> ids; bounded, see encodePiece
	// noCache disables the cache (benchmarks measure the cold path with it).
	noCache bool
	// now is the clock the time bound is read on (nil: the system's);
	// budget replaces encodeBase (0: encodeBase). Tests set them.
	now    clock.Func
	budget time.Duration
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
	if len(s.Pattern) > maxPatternBytes {
		return nil, fmt.Errorf("the pre-tokenizer pattern is %d bytes (%s); strata reads patterns of at most %d", len(s.Pattern), quoted(s.Pattern), maxPatternBytes)
	}
	re, err := regexp2.Compile(s.Pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("pre-tokenizer pattern: %w", err)
	}
	t := &Tokenizer{
		merges:  make(map[uint64]merge, len(s.Merges)),
		added:   map[byte][]AddedToken{},
		addedID: map[string]int{},
		qwen2:   s.Pattern == Qwen2Pattern,
		nfc:     s.NFC,
		size:    len(s.Vocab),
		cache:   map[string][]int32{},
	}
	t.res.Put(re)
	t.res.New = func() any { return regexp2.MustCompile(s.Pattern, regexp2.None) }
	for tok := range s.Vocab {
		if err := checkToken(tok); err != nil {
			return nil, err
		}
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
			return nil, fmt.Errorf("merge %d (%s %s) names a token that is not in the vocabulary", rank, quoted(m[0]), quoted(m[1]))
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
		if err := checkToken(a.Content); err != nil {
			return nil, fmt.Errorf("added token %d: %w", a.ID, err)
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
	return t.EncodeContext(context.Background(), text)
}

// EncodeContext is Encode, ending when ctx does (with its cause) or when
// the tokenization passes its time bound (ErrTooSlow).
func (t *Tokenizer) EncodeContext(ctx context.Context, text string) ([]int, error) {
	e := t.start(ctx, len(text))
	out := make([]int, 0, len(text)/3+1)
	start := 0
	for i := 0; i < len(text); {
		if err := e.step(1); err != nil {
			return nil, err
		}
		if cands := t.added[text[i]]; cands != nil {
			matched := false
			for _, a := range cands {
				if strings.HasPrefix(text[i:], a.Content) {
					var err error
					if out, err = t.encodeSegment(e, out, text[start:i]); err != nil {
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
	return t.encodeSegment(e, out, text[start:])
}

// Count returns the number of tokens of text.
func (t *Tokenizer) Count(text string) (int, error) {
	ids, err := t.Encode(text)
	return len(ids), err
}

// encoding is one tokenization's bound: its context and its deadline.
type encoding struct {
	ctx      context.Context
	now      clock.Func
	deadline time.Time
	bound    time.Duration
	size     int
	steps    int
}

func (t *Tokenizer) start(ctx context.Context, size int) *encoding {
	bound := t.budget
	if bound == 0 {
		bound = encodeBase
	}
	bound += time.Duration(int64(size) * int64(encodePerMiB) >> 20)
	now := clock.Or(t.now)
	return &encoding{ctx: ctx, now: now, deadline: now().Add(bound), bound: bound, size: size}
}

// step counts n steps of work and checks the bound every checkEvery.
func (e *encoding) step(n int) error {
	if e.steps += n; e.steps < checkEvery {
		return nil
	}
	e.steps = 0
	if e.ctx.Err() != nil {
		return context.Cause(e.ctx)
	}
	if e.left() <= 0 {
		return e.tooSlow()
	}
	return nil
}

// left is the time the tokenization has left.
func (e *encoding) left() time.Duration { return e.deadline.Sub(e.now()) }

func (e *encoding) tooSlow() error {
	return fmt.Errorf("%w: %d bytes of text were not tokenized within %s (a pre-tokenizer pattern whose cost grows past linear, or a piece of text it does not split?)", ErrTooSlow, e.size, e.bound)
}

func (t *Tokenizer) encodeSegment(e *encoding, out []int, seg string) ([]int, error) {
	if seg == "" {
		return out, nil
	}
	if t.nfc {
		seg = norm.NFC.String(seg)
	}
	runes := []rune(seg)
	if t.qwen2 {
		err := qwen2Split(runes, func(a, b int) error {
			var err error
			out, err = t.encodePiece(e, out, string(runes[a:b]))
			return err
		})
		return out, err
	}
	return t.encodeRegexp(e, out, runes)
}

// encodeRegexp splits with the pre-tokenizer regex (any pattern).
func (t *Tokenizer) encodeRegexp(e *encoding, out []int, runes []rune) ([]int, error) {
	re := t.res.Get().(*regexp2.Regexp)
	defer t.res.Put(re)
	// Each match may take the time the tokenization has left, and the
	// context is checked before each (one match may scan the whole text).
	// regexp2's only error is that timeout, and its message holds the
	// whole text.
	next := func(m *regexp2.Match) (*regexp2.Match, error) {
		if e.ctx.Err() != nil {
			return nil, context.Cause(e.ctx)
		}
		left := e.left()
		if left <= 0 {
			return nil, e.tooSlow()
		}
		re.MatchTimeout = left
		var err error
		if m == nil {
			m, err = re.FindRunesMatch(runes)
		} else {
			m, err = re.FindNextMatch(m)
		}
		if err != nil {
			return nil, e.tooSlow()
		}
		return m, nil
	}
	m, err := next(nil)
	pos := 0 // rune index of the end of the last match
	for ; m != nil && err == nil; m, err = next(m) {
		if m.Index > pos { // Isolated: text between matches is its own piece
			if out, err = t.encodePiece(e, out, string(runes[pos:m.Index])); err != nil {
				return nil, err
			}
		}
		if out, err = t.encodePiece(e, out, string(runes[m.Index:m.Index+m.Length])); err != nil {
			return nil, err
		}
		pos = m.Index + m.Length
	}
	if err != nil {
		return nil, err
	}
	if pos < len(runes) {
		return t.encodePiece(e, out, string(runes[pos:]))
	}
	return out, nil
}

func (t *Tokenizer) encodePiece(e *encoding, out []int, piece string) ([]int, error) {
	if err := e.step(1); err != nil {
		return nil, err
	}
	if t.noCache {
		ids, err := t.bpe(e, piece)
		for _, id := range ids {
			out = append(out, int(id))
		}
		return out, err
	}
	t.mu.Lock()
	ids, ok := t.cache[piece]
	t.mu.Unlock()
	if !ok {
		var err error
		if ids, err = t.bpe(e, piece); err != nil {
			return nil, err
		}
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
	return out, nil
}

// bpe merges the bytes of one pre-token by rank. Pieces are short (words,
// digits, whitespace runs), so the quadratic scan is cheaper than a heap;
// a huge piece counts against the tokenization's time bound.
func (t *Tokenizer) bpe(e *encoding, piece string) ([]int32, error) {
	syms := make([]int32, len(piece))
	for i := 0; i < len(piece); i++ {
		syms[i] = t.byteID[piece[i]]
	}
	for len(syms) > 1 {
		if err := e.step(len(syms)); err != nil {
			return nil, err
		}
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
	return syms, nil
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

// Bounds on what a tokenizer's files may hold: Qwen3's longest token is
// 256 bytes and its pattern some 200, and a longer one is no vocabulary
// but a file that would cost gigabytes to read and to quote.
const (
	maxTokenBytes   = 4096
	maxPatternBytes = 4096
	// maxMergeLine is a merges.txt line of two tokens.
	maxMergeLine = 2*maxTokenBytes + 1
)

// checkToken refuses a token longer than maxTokenBytes.
func checkToken(tok string) error {
	if len(tok) > maxTokenBytes {
		return fmt.Errorf("a token of %d bytes (%s); strata reads tokens of at most %d", len(tok), quoted(tok), maxTokenBytes)
	}
	return nil
}

// quoted is s quoted for a message, at most its first 32 bytes (cut at a
// character) and then its length: a file's string may be megabytes.
func quoted(s string) string {
	if len(s) <= quoteBytes {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%s (%d bytes)", quotedStart(s), len(s))
}

const quoteBytes = 32

// quotedStart is the first 32 bytes of s quoted, and "…" if s is longer.
func quotedStart(s string) string {
	if len(s) <= quoteBytes {
		return fmt.Sprintf("%q", s)
	}
	cut := quoteBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", s[:cut])
}
