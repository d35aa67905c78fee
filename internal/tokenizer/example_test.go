package tokenizer_test

import (
	"fmt"

	"github.com/strata-bench/strata/internal/tokenizer"
)

// byteTokens is GPT-2's byte alphabet: each of the 256 bytes as one
// printable rune (bytes that print stand for themselves, the rest are
// moved to U+0100 and up, so a space is "Ġ"). A byte-level vocabulary
// holds all of them, so any text can be encoded.
func byteTokens() map[string]int {
	vocab := map[string]int{}
	next := 256
	for b := 0; b < 256; b++ {
		r := rune(b)
		if (b < '!' || b > '~') && (b < 0xA1 || b > 0xAC) && (b < 0xAE || b > 0xFF) {
			r = rune(next)
			next++
		}
		vocab[string(r)] = b
	}
	return vocab
}

// A byte-level BPE tokenizer from its parts: the vocabulary, the merges in
// rank order, the added tokens matched literally in the raw text, and
// Qwen2's pre-tokenizer pattern. Merges apply by rank, lowest first.
func ExampleNew() {
	vocab := byteTokens()
	for id, tok := range []string{"ab", "abc", "Ġab"} {
		vocab[tok] = 256 + id
	}
	tok, err := tokenizer.New(tokenizer.Spec{
		Vocab:   vocab,
		Merges:  [][2]string{{"a", "b"}, {"ab", "c"}, {"Ġ", "ab"}},
		Added:   []tokenizer.AddedToken{{ID: 259, Content: "<|im_end|>", Special: true}},
		Pattern: tokenizer.Qwen2Pattern,
		NFC:     true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, _ := tok.Encode("abc ab<|im_end|>")
	fmt.Println(ids) // "abc", " ab", then the added token
	n, _ := tok.Count("abc abc")
	fmt.Println(n) // "abc", " ", "abc": the lower rank "ab"+"c" merges before " "+"ab"
	id, _ := tok.AddedTokenID("<|im_end|>")
	fmt.Println(id, tok.VocabSize())
	// Output:
	// [257 258 259]
	// 3
	// 259 260
}
