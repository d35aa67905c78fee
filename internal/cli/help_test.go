package cli

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/spf13/cobra"
)

// commandPaths is every command of strata's tree (the root first, then
// depth first in the order help lists them) as its arguments after
// "strata", with the help command's own page.
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	var paths [][]string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || (c.Name() == "help" && c.HasParent()) {
			return
		}
		paths = append(paths, strings.Fields(c.CommandPath())[1:])
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(testEnv(t, t.TempDir(), nil, io.Discard, io.Discard)))
	if len(paths) < 20 {
		t.Fatalf("walked only %d commands", len(paths))
	}
	return paths
}

// TestHelpFitsEightyColumns: every line of every command's --help, and of
// strata --help, fits a standard terminal's 80 columns.
func TestHelpFitsEightyColumns(t *testing.T) {
	t.Parallel()
	for _, p := range append(commandPaths(t), []string{"help"}, []string{"help", "bench", "run"}) {
		args := append(append([]string{}, p...), "--help")
		if len(p) > 0 && p[0] == "help" {
			args = p
		}
		r := runIn(t, t.TempDir(), "", args...)
		if r.code != 0 {
			t.Fatalf("strata %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
		for i, line := range strings.Split(r.stdout, "\n") {
			if w := runewidth.StringWidth(line); w > helpWidth {
				t.Errorf("strata %s, line %d: %d columns, want at most %d:\n%s", strings.Join(args, " "), i+1, w, helpWidth, line)
			}
		}
	}
}

// TestHelpKeepsEveryWord: fitting the help to the width moves words to
// new lines, never drops, adds or changes one (but the shell's line
// continuations in examples and the shorter last line): each page has
// cobra's own page's words in cobra's order.
func TestHelpKeepsEveryWord(t *testing.T) {
	t.Parallel()
	root := newRoot(testEnv(t, t.TempDir(), nil, io.Discard, io.Discard))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		got := strings.ReplaceAll(helpText(c), "for more about a command.", "for more information about a command.")
		var def strings.Builder
		c.SetOut(&def)
		root.SetHelpFunc(nil)
		root.SetUsageFunc(nil)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		setHelp(root)
		gotWords, want := words(got), words(def.String())
		if i := firstDifference(gotWords, want); i >= 0 {
			t.Errorf("%s: word %d of the fitted help is %q, cobra's is %q", c.CommandPath(), i, at(gotWords, i), at(want, i))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// firstDifference is the index of the first word where a and b differ, or
// -1 when they are equal.
func firstDifference(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if at(a, i) != at(b, i) {
			return i
		}
	}
	return -1
}

// at is the i-th word, or "(end)" past the last.
func at(words []string, i int) string {
	if i < len(words) {
		return words[i]
	}
	return "(end)"
}

// words are the words of text but a shell's line continuations.
func words(text string) []string {
	return slices.DeleteFunc(strings.Fields(text), func(w string) bool { return w == `\` })
}
