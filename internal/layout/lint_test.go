package layout_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTheLinterHoldsTheRules: CI runs the pinned golangci-lint and
// deadcode, and the linter's configuration holds the rules of
// ARCHITECTURE.md: forbidigo on the process's streams, environment, exit,
// wall clock and signals; funlen at 80 lines; revive's exported-doc and
// package-comment rules; every error handled (errcheck, errorlint, nilerr);
// nothing dead or needless (unused, unparam, staticcheck); gocognit at 30.
func TestTheLinterHoldsTheRules(t *testing.T) {
	t.Parallel()
	read := func(name string) string { return repoFile(t, name) }
	ci, lint, cfg, tools := read(".ci/run"), read("scripts/lint.sh"), read(".golangci.yml"), read("tools/lint/go.mod")
	if !regexp.MustCompile(`(?m)^scripts/lint\.sh`).MatchString(ci) {
		t.Error(".ci/run does not run scripts/lint.sh")
	}
	if !strings.Contains(lint, "-modfile=tools/lint/go.mod") {
		t.Error("scripts/lint.sh does not build the linter from tools/lint/go.mod")
	}
	if !regexp.MustCompile(`(?m)^\tgithub\.com/golangci/golangci-lint/v2 v2\.15\.0\b`).MatchString(tools) ||
		!isTool(tools, "github.com/golangci/golangci-lint/v2/cmd/golangci-lint") {
		t.Error("tools/lint/go.mod does not pin golangci-lint v2.15.0 as a tool")
	}
	if !regexp.MustCompile(`(?m)^\tgolang\.org/x/tools v0\.52\.0\b`).MatchString(tools) || !isTool(tools, "golang.org/x/tools/cmd/deadcode") {
		t.Error("tools/lint/go.mod does not pin deadcode (golang.org/x/tools v0.52.0) as a tool")
	}
	if !strings.Contains(lint, `"$bin/deadcode" -test ./...`) {
		t.Error("scripts/lint.sh does not run deadcode -test ./...")
	}
	for _, want := range []string{
		`version: "2"`, "default: none", "- forbidigo", "- funlen", "- revive",
		"- errcheck", "- errorlint", "- gocognit", "- nilerr", "- staticcheck", "- unparam", "- unused", "min-complexity: 30",
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

// isTool reports whether a go.mod names path in a tool directive, alone
// or in a tool block.
func isTool(gomod, path string) bool {
	return regexp.MustCompile(`(?m)^(tool |\t)` + regexp.QuoteMeta(path) + `$`).MatchString(gomod)
}

// TestCIBuildsTheRelease: CI runs the release test (which runs
// scripts/release.sh), and the script builds its tools from
// tools/release/go.mod, pinned: nfpm v2.45.2 and cyclonedx-gomod v1.10.0.
func TestCIBuildsTheRelease(t *testing.T) {
	t.Parallel()
	read := func(name string) string { return repoFile(t, name) }
	ci, script, tools := read(".ci/run"), read("scripts/release.sh"), read("tools/release/go.mod")
	if !regexp.MustCompile(`(?m)^go test -count=1 \./internal/releasetest -strata\.release$`).MatchString(ci) {
		t.Error(".ci/run does not run the release test with -strata.release")
	}
	for _, tool := range []string{"github.com/goreleaser/nfpm/v2/cmd/nfpm", "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"} {
		if !strings.Contains(script, "-modfile=tools/release/go.mod -o \"$tmp/bin/"+filepath.Base(tool)+"\" "+tool) {
			t.Errorf("scripts/release.sh does not build %s from tools/release/go.mod", tool)
		}
		if !regexp.MustCompile(`(?m)^\t` + regexp.QuoteMeta(tool) + `$`).MatchString(tools) {
			t.Errorf("tools/release/go.mod does not hold %s as a tool", tool)
		}
	}
	for _, pin := range []string{"github.com/goreleaser/nfpm/v2 v2.45.2", "github.com/CycloneDX/cyclonedx-gomod v1.10.0"} {
		if !regexp.MustCompile(`(?m)^\t` + regexp.QuoteMeta(pin) + `\b`).MatchString(tools) {
			t.Errorf("tools/release/go.mod does not pin %s", pin)
		}
	}
}

// repoFile is a file of the checkout, by its path from the root.
func repoFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
