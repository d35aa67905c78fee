package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/strata-bench/strata/internal/engine"
)

// docPages are README.md and the pages of docs/ written by hand (the
// command reference is the help itself).
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{filepath.Join(repoRoot(t), "README.md")}
	for _, p := range pages {
		if filepath.Base(p) != filepath.Base(referencePath) {
			out = append(out, p)
		}
	}
	return out
}

// codeBlock is a fenced block of a Markdown page: its info string and its
// lines, with the line of the page it starts on.
type codeBlock struct {
	page  string
	info  string
	line  int
	lines []string
}

// pageBlocks are the fenced blocks of every page of docPages, and with
// inline, each code span that holds a command line as a block of its own.
func pageBlocks(t *testing.T, inline bool) []codeBlock {
	t.Helper()
	var out []codeBlock
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks := codeBlocks(string(data))
		if inline {
			blocks = append(blocks, inlineCommands(string(data))...)
		}
		for _, b := range blocks {
			b.page = filepath.Base(page)
			out = append(out, b)
		}
	}
	return out
}

// codeBlocks are the fenced blocks of a Markdown page (indented fences
// included, as in a list item).
func codeBlocks(text string) []codeBlock {
	var blocks []codeBlock
	var cur *codeBlock
	for i, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &codeBlock{info: strings.TrimPrefix(trimmed, "```"), line: i + 1}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, trimmed)
		}
	}
	return blocks
}

// inlineCode is a code span holding a command line.
var inlineCode = regexp.MustCompile("`((?:strata|go run ./cmd/strata) [^`]+)`")

// inlineCommands are the code spans of a page that hold a whole command
// line, each as a block of one line; a usage form ("(--url URL |
// --profile NAME)", "[DIR]", "…") is not one.
func inlineCommands(text string) []codeBlock {
	var blocks []codeBlock
	for i, l := range strings.Split(text, "\n") {
		for _, m := range inlineCode.FindAllStringSubmatch(l, -1) {
			if !strings.ContainsAny(m[1], "([…") {
				blocks = append(blocks, codeBlock{line: i + 1, lines: []string{m[1]}})
			}
		}
	}
	return blocks
}

// strataCommands are the strata command lines of a shell block: each
// line (continuations joined, a "$ " prompt and a trailing comment
// dropped) split at &&, ; and |, as the arguments after "strata" (or
// "go run ./cmd/strata").
func strataCommands(lines []string) [][]string {
	var cmds [][]string
	joined := strings.ReplaceAll(strings.Join(lines, "\n"), "\\\n", " ")
	for _, l := range strings.Split(joined, "\n") {
		l = strings.TrimPrefix(l, "$ ")
		if i := strings.Index(l, "  #"); i >= 0 {
			l = l[:i]
		}
		for _, seg := range strings.FieldsFunc(strings.ReplaceAll(l, "&&", ";"), func(r rune) bool { return r == ';' || r == '|' }) {
			words := shellWords(strings.TrimSpace(seg))
			for i, w := range words {
				words[i] = strings.Trim(w, `"'`)
			}
			switch {
			case len(words) > 0 && words[0] == "strata":
				cmds = append(cmds, words[1:])
			case len(words) > 2 && strings.Join(words[:3], " ") == "go run ./cmd/strata":
				cmds = append(cmds, words[3:])
			}
		}
	}
	return cmds
}

// TestDocumentedCommandsExist: every strata command line in a shell block
// of the README or docs/ names a command strata has, with flags it takes.
func TestDocumentedCommandsExist(t *testing.T) {
	t.Parallel()
	n := 0
	for _, b := range pageBlocks(t, true) {
		if b.info != "" && b.info != "sh" && b.info != "console" {
			continue
		}
		for _, args := range strataCommands(b.lines) {
			n++
			root := newRoot(testEnv(t, t.TempDir(), nil, io.Discard, io.Discard))
			cmd, rest, err := root.Find(args)
			if err == nil && cmd.HasSubCommands() && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
				err = unknownCommand(cmd, rest[0])
			}
			if err == nil {
				err = cmd.ParseFlags(rest)
			}
			if err != nil && !errors.Is(err, pflag.ErrHelp) {
				t.Errorf("%s, block at line %d: strata %s: %v", b.page, b.line, strings.Join(args, " "), err)
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d strata command lines in the README and docs/, want at least 10", n)
	}
}

// TestDocumentedProfilesParse: every TOML block of the README or docs/ is
// a profile strata reads.
func TestDocumentedProfilesParse(t *testing.T) {
	t.Parallel()
	n := 0
	for _, b := range pageBlocks(t, false) {
		if b.info != "toml" {
			continue
		}
		n++
		if _, err := engine.Parse([]byte(strings.Join(b.lines, "\n")), b.page); err != nil {
			t.Errorf("%s, block at line %d: %v", b.page, b.line, err)
		}
	}
	if n == 0 {
		t.Error("no TOML block in the README or docs/")
	}
}

// TestReadmeIsShort: the README is read in minutes: at most 20,000 bytes,
// no line over 300 characters; the rest is in docs/.
func TestReadmeIsShort(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 20000 {
		t.Errorf("README.md is %d bytes, want at most 20,000", len(data))
	}
	for i, l := range strings.Split(string(data), "\n") {
		if n := utf8.RuneCountInString(l); n > 300 {
			t.Errorf("README.md line %d is %d characters, want at most 300", i+1, n)
		}
	}
}

// mdLink is a relative link of a Markdown page: its file and its anchor.
var mdLink = regexp.MustCompile(`\]\(([^)#\s:]*)(?:#([^)\s]+))?\)`)

// TestDocumentedLinksResolve: every relative link of the README and docs/
// names a file of the checkout, and an anchor names a heading there.
func TestDocumentedLinksResolve(t *testing.T) {
	t.Parallel()
	pages := append(docPages(t), filepath.Join(repoRoot(t), filepath.FromSlash(referencePath)))
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := page
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(page), filepath.FromSlash(m[1]))
			}
			st, err := os.Stat(target)
			if err != nil {
				t.Errorf("%s: link %q: %v", filepath.Base(page), m[0], err)
				continue
			}
			if m[2] == "" || st.IsDir() {
				continue
			}
			body, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(anchors(string(body)), m[2]) {
				t.Errorf("%s: link %q: %s has no heading %q", filepath.Base(page), m[0], filepath.Base(target), m[2])
			}
		}
	}
}

// anchors are the anchors GitHub gives a page's headings: lower case,
// punctuation but hyphens dropped, spaces made hyphens.
func anchors(page string) []string {
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimLeft(l, "# ")) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}
