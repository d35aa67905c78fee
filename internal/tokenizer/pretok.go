package tokenizer

import "unicode"

// qwen2Split splits runes exactly as the Qwen2 pattern does under regexp2
// (leftmost alternative first, greedy with backtracking), calling emit with
// each piece's rune range; an error from emit ends the split. Written
// out because the regex engine took most of tokenizing time; a
// differential test and a fuzz test hold it to regexp2.
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}
//	| ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
func qwen2Split(r []rune, emit func(start, end int) error) error {
	n := len(r)
	for i := 0; i < n; {
		end := qwen2Match(r, i)
		if err := emit(i, end); err != nil {
			return err
		}
		i = end
	}
	return nil
}

// isSpace is Unicode White_Space, regexp2's \s.
func isSpace(c rune) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return c >= 0x2000 && c <= 0x200A
}

func isLetter(c rune) bool {
	if c < 0x80 {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	return unicode.IsLetter(c)
}

func isNumber(c rune) bool {
	if c < 0x80 {
		return c >= '0' && c <= '9'
	}
	return unicode.IsNumber(c)
}

func isCRLF(c rune) bool { return c == '\r' || c == '\n' }

// lower folds ASCII only: regexp2's (?i) does not fold 'ſ' to 's'.
func lower(c rune) rune {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// qwen2Match returns the end of the piece starting at i (always > i):
// the pattern's alternatives in their order, the first that matches.
func qwen2Match(r []rune, i int) int {
	// 1. Contractions.
	if j, ok := contraction(r, i); ok {
		return j
	}
	// 2. An optional non-letter, non-number, non-CR/LF, then letters.
	if j, ok := word(r, i); ok {
		return j
	}
	// 3. One number.
	if isNumber(r[i]) {
		return i + 1
	}
	// 4. An optional space, symbols, then CR/LF.
	if j, ok := symbols(r, i); ok {
		return j
	}
	// 5.–7. Only whitespace is left at i.
	return whitespace(r, i)
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at i.
func contraction(r []rune, i int) (int, bool) {
	n := len(r)
	if r[i] != '\'' || i+1 >= n {
		return 0, false
	}
	a := lower(r[i+1])
	switch a {
	case 's', 't', 'm', 'd':
		return i + 2, true
	}
	if i+2 < n {
		b := lower(r[i+2])
		if a == 'r' && b == 'e' || a == 'v' && b == 'e' || a == 'l' && b == 'l' {
			return i + 3, true
		}
	}
	return 0, false
}

// word matches [^\r\n\p{L}\p{N}]?\p{L}+ at i.
func word(r []rune, i int) (int, bool) {
	n, c := len(r), r[i]
	j := i
	switch {
	case !isCRLF(c) && !isLetter(c) && !isNumber(c) && i+1 < n && isLetter(r[i+1]):
		j = i + 2
	case isLetter(c):
		j = i + 1
	default:
		return 0, false
	}
	for j < n && isLetter(r[j]) {
		j++
	}
	return j, true
}

// symbols matches " ?[^\s\p{L}\p{N}]+[\r\n]*" at i.
func symbols(r []rune, i int) (int, bool) {
	n := len(r)
	other := func(x rune) bool { return !isSpace(x) && !isLetter(x) && !isNumber(x) }
	start := i
	if r[i] == ' ' && i+1 < n && other(r[i+1]) {
		start = i + 1
	}
	if !other(r[start]) {
		return 0, false
	}
	j := start + 1
	for j < n && other(r[j]) {
		j++
	}
	for j < n && isCRLF(r[j]) {
		j++
	}
	return j, true
}

// whitespace matches \s*[\r\n]+ | \s+(?!\S) | \s+ at i, where only
// whitespace can start.
func whitespace(r []rune, i int) int {
	n := len(r)
	j := i
	for j < n && isSpace(r[j]) {
		j++
	}
	// 5. Whitespace up to and including its last CR/LF.
	for k := j - 1; k >= i; k-- {
		if isCRLF(r[k]) {
			return k + 1
		}
	}
	// 6. Whitespace not followed by a non-space: all of it at the end of
	// the text, otherwise all but the last (if that leaves one).
	if j == n {
		return j
	}
	if j-i >= 2 {
		return j - 1
	}
	// 7. Whitespace.
	return j
}
