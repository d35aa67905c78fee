package liveline

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

func TestFitAndWrap(t *testing.T) {
	t.Parallel()
	if got := Fit("[performance 3/9] performance-prompt-16k-r1  512 deltas", 20); runewidth.StringWidth(got) > 20 || !strings.HasSuffix(got, "…") {
		t.Errorf("Fit = %q", got)
	}
	if got := Fit("short", 20); got != "short" {
		t.Errorf("Fit(short) = %q", got)
	}
	if got := Fit("1,964 tok/s × 2 – 中文字符串很长很长", 12); runewidth.StringWidth(got) > 12 {
		t.Errorf("wide runes: %q is %d cells", got, runewidth.StringWidth(got))
	}
	text := "  warning: the run will be nonconforming: the server (10.0.0.7) is not on loopback; standard latency is a loopback measurement"
	for _, w := range []int{49, 79} {
		lines := Wrap(text, w)
		if len(lines) < 2 {
			t.Errorf("width %d: not wrapped: %q", w, lines)
		}
		var words []string
		for i, l := range lines {
			if runewidth.StringWidth(l) > w {
				t.Errorf("width %d: line %q is %d cells", w, l, runewidth.StringWidth(l))
			}
			if i > 0 && !strings.HasPrefix(l, "      ") {
				t.Errorf("width %d: continuation %q not indented", w, l)
			}
			words = append(words, strings.Fields(l)...)
		}
		if strings.Join(words, " ") != strings.Join(strings.Fields(text), " ") {
			t.Errorf("width %d: words lost: %q", w, lines)
		}
	}
	long := "result: /home/user/bench-results/2026-12-01-standard-unknown-gpu-20261201T133146Z-9638e6"
	for _, l := range Wrap(long, 30) {
		if runewidth.StringWidth(l) > 30 {
			t.Errorf("a long word is not cut: %q", l)
		}
	}
}

// TestWrapIndentHangsAtItsIndent: the lines after the first start at the
// indent given, whatever the first line's own indentation.
func TestWrapIndentHangsAtItsIndent(t *testing.T) {
	t.Parallel()
	got := WrapIndent("  --url string   base URL of a server that is already running", 40, 17)
	want := []string{"  --url string base URL of a server that", "                 is already running"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("WrapIndent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestScreen(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	s := New(&b, true, func() int { return 40 }, nil)
	s.Status("[3/22 performance] short r3 · answer 120 tok · 42.0 tok/s · 1.2 s")
	s.Println("  [3/22] performance-short-r3: completed (stop), 0.53 s")
	s.Status("next")
	s.Clear()
	out := b.String()
	for _, seg := range strings.Split(out, "\r\033[K") {
		for _, l := range strings.Split(seg, "\n") {
			if runewidth.StringWidth(l) >= 40 {
				t.Errorf("a line of %d cells on a 40-cell terminal: %q", runewidth.StringWidth(l), l)
			}
		}
	}
	if !strings.Contains(out, "\r\033[K  [3/22] performance-short-r3") || !strings.HasSuffix(out, "next\r\033[K") {
		t.Errorf("output %q", out)
	}
	// Not a terminal: no status line, no escapes, lines as they are.
	b.Reset()
	s = New(&b, false, nil, nil)
	s.Status("live")
	_, _ = s.Write([]byte("one\ntwo")) // a Screen's Write never fails; what it wrote is read below
	_, _ = s.Write([]byte(" halves\n"))
	if got := b.String(); got != "one\ntwo halves\n" {
		t.Errorf("plain output %q", got)
	}
}
