package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/resulttest"
)

// TestPagesShowHiddenCharactersEscaped: text of a
// submission with a bidirectional override, a C1 control, ESC or an
// invalid byte is shown on the site's pages as the terminal shows it
// (\u202e, \u0085, \u001b, \xff), never raw, where it would reorder or
// hide what the reader sees.
func TestPagesShowHiddenCharactersEscaped(t *testing.T) {
	t.Parallel()
	r := resulttest.Results(t, "baseline")
	r.Run.Command = "strata bench run --url http://127.0.0.1:8080 \u202egpj.exe \u0085 \x1b[2J"
	r.Hardware.GPUs[0].Name = "RTX \u202e0603 \u200f \xff"
	s := &Site{Others: []*Run{{Slug: "run", Folder: "run", Label: LabelUnreviewed, Results: r, Files: map[string][]byte{}}}}
	dir := filepath.Join(t.TempDir(), "site")
	if err := Build(s, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index.html", "other.html", "runs/run.html"} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		page := string(data)
		if !utf8.ValidString(page) {
			t.Errorf("%s is not valid UTF-8", name)
		}
		if i := strings.IndexFunc(page, func(r rune) bool { return r != '\n' && r != '\t' && escape.Hidden(r) }); i >= 0 {
			t.Errorf("%s shows %q raw: %q", name, []rune(page[i:])[0], page[max(0, i-40):min(len(page), i+20)])
		}
	}
	run, _ := os.ReadFile(filepath.Join(dir, "runs", "run.html"))
	for _, want := range []string{`\u202egpj.exe \u0085 \u001b[2J`, `RTX \u202e0603 \u200f \xff`} {
		if !strings.Contains(string(run), want) {
			t.Errorf("the run page does not show %s", want)
		}
	}
}
