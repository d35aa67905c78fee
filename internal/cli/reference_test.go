package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// referencePath is the command reference, relative to the checkout.
const referencePath = "docs/commands.md"

// TestCommandReference: docs/commands.md is every command's --help as
// strata prints it; -update (go generate ./internal/cli) writes it again
// after a command's help changed.
func TestCommandReference(t *testing.T) {
	t.Parallel()
	got := reference(t)
	p := filepath.Join(repoRoot(t), filepath.FromSlash(referencePath))
	if *update {
		mustWrite(t, p, got)
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go generate ./internal/cli)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s is not what --help says; run go generate ./internal/cli (-file +help):\n%s", referencePath, d)
	}
}

// reference is the command reference: a contents list, then each
// command's help in a text block under a heading of its own.
func reference(t *testing.T) string {
	t.Helper()
	var toc, body strings.Builder
	for _, p := range commandPaths(t) {
		name := strings.Join(append([]string{"strata"}, p...), " ")
		r := runIn(t, t.TempDir(), "", append(append([]string{}, p...), "--help")...)
		if r.code != 0 {
			t.Fatalf("%s --help: exit %d, stderr %q", name, r.code, r.stderr)
		}
		toc.WriteString(strings.Repeat("  ", len(p)) + "- [" + name + "](#" + strings.ReplaceAll(name, " ", "-") + ")\n")
		body.WriteString("\n## " + name + "\n\n```text\n" + r.stdout + "```\n")
	}
	return "# Command reference\n\n" +
		"Every command of strata with its help, exactly as `strata COMMAND --help`\n" +
		"prints it. This page is generated from the commands themselves: after a\n" +
		"change to a command's help, `go generate ./internal/cli` writes it again,\n" +
		"and a test fails while it differs from the help.\n\n" + toc.String() + body.String()
}
