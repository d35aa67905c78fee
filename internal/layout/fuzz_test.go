package layout_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFuzzScriptListsEveryTarget: scripts/fuzz.sh names every fuzz target
// of the tree in its package, so none is left unfuzzed and none is named
// where it does not live (two once were: go test passes quietly when -fuzz
// matches nothing); likewise every package whose random-input tests take
// -strata.full, which it runs at their full count.
func TestFuzzScriptListsEveryTarget(t *testing.T) {
	t.Parallel()
	script := filepath.Join("..", "..", "scripts", "fuzz.sh")
	if out, err := exec.Command("bash", script, "--check").CombinedOutput(); err != nil {
		t.Fatalf("scripts/fuzz.sh --check: %v\n%s", err, out)
	}
	// The check itself: in a tree with a target the list lacks, and none of
	// the listed ones, it names both and fails.
	tree := t.TempDir()
	body, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"scripts/fuzz.sh":                   string(body),
		"internal/extra/extra_test.go":      "package extra\n\nfunc FuzzExtra(f *testing.F) {}\n",
		"internal/extra/testdata/x_test.go": "package x\n\nfunc FuzzIgnored(f *testing.F) {}\n",
		"internal/extra/full_test.go":       "package extra\n\nvar full = flag.Bool(\"strata.full\", false, \"\")\n",
	} {
		p := filepath.Join(tree, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("bash", filepath.Join(tree, "scripts", "fuzz.sh"), "--check").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not in scripts/fuzz.sh:\n./internal/extra FuzzExtra\n") ||
		!strings.Contains(string(out), "do not exist:\n./internal/chattemplate FuzzRender\n") || strings.Contains(string(out), "FuzzIgnored") ||
		!strings.Contains(string(out), "not in scripts/fuzz.sh full_tests:\n./internal/extra\n") ||
		!strings.Contains(string(out), "do not define -strata.full:\n./internal/tokenizer\n") {
		t.Errorf("the check in a tree it does not match: %v\n%s", err, out)
	}
}
