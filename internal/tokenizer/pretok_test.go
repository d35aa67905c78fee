package tokenizer

import (
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

var qwen2RE = func() *regexp2.Regexp {
	re := regexp2.MustCompile(Qwen2Pattern, regexp2.None)
	return re
}()

// splitRegexp is the reference: regexp2 matches, with the gaps between them
// as pieces (Isolated).
func splitRegexp(t testing.TB, s string) []string {
	r := []rune(s)
	var out []string
	pos := 0
	m, err := qwen2RE.FindRunesMatch(r)
	for ; m != nil && err == nil; m, err = qwen2RE.FindNextMatch(m) {
		if m.Index > pos {
			out = append(out, string(r[pos:m.Index]))
		}
		out = append(out, string(r[m.Index:m.Index+m.Length]))
		pos = m.Index + m.Length
	}
	if err != nil {
		t.Fatal(err)
	}
	if pos < len(r) {
		out = append(out, string(r[pos:]))
	}
	return out
}

func splitFast(s string) []string {
	r := []rune(s)
	var out []string
	_ = qwen2Split(r, func(a, b int) error { out = append(out, string(r[a:b])); return nil }) // emit never fails
	return out
}

// TestQwen2SplitMatchesRegexp: on every vector text the hand-written
// matcher splits exactly as regexp2 does.
func TestQwen2SplitMatchesRegexp(t *testing.T) {
	t.Parallel()
	for _, v := range readVectors(t) {
		s := norm.NFC.String(v.Text)
		if want, got := splitRegexp(t, s), splitFast(s); !slices.Equal(want, got) {
			t.Errorf("%q:\nregexp2 %q\nfast    %q", v.Text, want, got)
		}
	}
}

// alphabet mixes every class the pattern distinguishes.
var alphabet = []rune("aZé ß'sSrReEvVlLmMdDtT0912²½①٣ \t\n\r\v\f\u0085\u00a0\u2028\u3000\u200b\ufeff\u180e\u001c.,!?-_()[]{}\"/\\:;+*=<>@#$%^&~`|😀中文ſ\u0301")

// full runs the random-input tests at their full count; scripts/fuzz.sh
// passes it (go test ./internal/tokenizer -strata.full).
var full = flag.Bool("strata.full", false, "run the random-input tests at their full count (scripts/fuzz.sh)")

// TestQwen2SplitRandom compares the two on seeded random strings: 2,000 in
// the suite, 20,000 with -strata.full.
func TestQwen2SplitRandom(t *testing.T) {
	t.Parallel()
	n := 2000
	if *full {
		n = 20000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		var b strings.Builder
		for range rng.IntN(24) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		if want, got := splitRegexp(t, s), splitFast(s); !slices.Equal(want, got) {
			t.Fatalf("%q:\nregexp2 %q\nfast    %q", s, want, got)
		}
	}
}

func FuzzQwen2Split(f *testing.F) {
	for _, s := range []string{"Hello world", "  x\n\n y", "'re'VE'll", "a1²b", "\r\n\t \u00a0z", "??!!\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.ContainsRune(s, '\uFFFD') && len(s) < 256 {
			if want, got := splitRegexp(t, s), splitFast(s); !slices.Equal(want, got) {
				t.Fatalf("%q:\nregexp2 %q\nfast    %q", s, want, got)
			}
		}
	})
}
