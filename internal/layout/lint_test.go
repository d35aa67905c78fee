package layout_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTheLinterHoldsTheRules: CI runs the pinned golangci-lint, and its
// configuration holds the rules of ARCHITECTURE.md: forbidigo on the
// process's streams, environment, exit, wall clock and signals; funlen at
// 80 lines; revive's exported-doc and package-comment rules.
func TestTheLinterHoldsTheRules(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	ci, lint, cfg, tools := read(".ci/run"), read("scripts/lint.sh"), read(".golangci.yml"), read("tools/lint/go.mod")
	if !regexp.MustCompile(`(?m)^scripts/lint\.sh`).MatchString(ci) {
		t.Error(".ci/run does not run scripts/lint.sh")
	}
	if !strings.Contains(lint, "-modfile=tools/lint/go.mod") {
		t.Error("scripts/lint.sh does not build the linter from tools/lint/go.mod")
	}
	if !regexp.MustCompile(`(?m)^\tgithub\.com/golangci/golangci-lint/v2 v2\.15\.0\b`).MatchString(tools) ||
		!strings.Contains(tools, "tool github.com/golangci/golangci-lint/v2/cmd/golangci-lint") {
		t.Error("tools/lint/go.mod does not pin golangci-lint v2.15.0 as a tool")
	}
	for _, want := range []string{
		`version: "2"`, "default: none", "- forbidigo", "- funlen", "- revive",
		`os\.(Stdout|Stderr|Stdin|Getenv|LookupEnv|Environ|Exit|Args)`, `time\.(Now|Since|Until)`, `signal\.(Notify|Ignore)`,
		"lines: 80", "- name: exported", "- name: package-comments", "max-issues-per-linter: 0",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf(".golangci.yml lacks %q", want)
		}
	}
	// The only exclusions from forbidigo are the injected state, the
	// clock, main, generators, test support and tests.
	for _, m := range regexp.MustCompile(`(?m)^      - path: (\S+)\n(?:        text: .*\n)?        linters: \[([^\]]*)\]`).FindAllStringSubmatch(cfg, -1) {
		if !strings.Contains(m[2], "forbidigo") {
			continue
		}
		switch m[1] {
		case `_test\.go`, `^internal/(procstate|clock)/`, `^internal/redact/genvocab/`, `^cmd/`,
			`^internal/(resulttest|realengine|sharedpath)/`, `^bench/(ssebench|hashbench)/`:
		default:
			t.Errorf(".golangci.yml exempts %s from forbidigo", m[1])
		}
	}
}
