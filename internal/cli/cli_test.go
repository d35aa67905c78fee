package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for strata when a test starts it
// as an engine (the simulator profile runs os.Executable()).
func TestMain(m *testing.M) {
	if os.Getenv("STRATA_TEST_AS_CLI") == "1" {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

// repoRoot is the checkout's root (two levels above this package).
func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

type cliResult struct {
	code           int
	stdout, stderr string
}

// testEnv is the process state of a command run in a test: its own
// working and cache folders, no probes of this machine (no nvidia-smi, no
// lsblk, no /proc), this test binary as strata (STRATA_TEST_AS_CLI) and the
// simulator at testSpeed.
func testEnv(t testing.TB, dir string, stdin io.Reader, stdout, stderr io.Writer) Env {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Dir: dir,
		Getenv:     func(string) string { return "" },
		Environ:    func() []string { return append(os.Environ(), "STRATA_TEST_AS_CLI=1") },
		CacheDir:   t.TempDir(),
		Executable: exe, SimulatorSpeed: testSpeed}
}

// testSpeed is how much faster than real time the simulator runs in tests:
// a protocol run takes about 16 s at real time.
const testSpeed = 20

// runIn runs the CLI in process with dir as the working directory.
func runIn(t testing.TB, dir string, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, testEnv(t, dir, strings.NewReader(stdin), &out, &errb))
	return cliResult{code, out.String(), errb.String()}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"bench", "bogus"},
		{"tokens", "--bogus"},
		{"tokens"},
		{"bench", "corpus", "build", "--out", "x"},
		{"bench", "corpus", "build", "--tokenizer", "t.json", "--out", "x"}, // no --template, not a GGUF
		{"bench", "corpus", "verify", "a", "b"},
		{"tokens", "--tokenizer", "t.json", "--tools", "x.json"},
	} {
		r := runIn(t, dir, "", args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, r.code, ExitUsage, r.stderr)
		}
		if !strings.Contains(r.stderr, "strata: ") {
			t.Errorf("%v: stderr %q has no error line", args, r.stderr)
		}
	}
}

func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--help"}, {"bench", "--help"}, {"bench", "corpus", "--help"},
		{"bench", "corpus", "build", "--help"}, {"bench", "corpus", "verify", "--help"}, {"tokens", "--help"},
	} {
		r := runIn(t, t.TempDir(), "", args...)
		if r.code != ExitOK || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := runIn(t, t.TempDir(), "", "--version")
	if r.code != 0 || !strings.Contains(r.stdout, "strata-qwen38-thinking-v1-draft.1") {
		t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
	}
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
