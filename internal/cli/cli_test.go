package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/simengine"
	"github.com/strata-bench/strata/internal/version"
)

// TestMain lets the test binary stand in for strata when a test starts it
// as an engine (the simulator profile runs os.Executable()).
func TestMain(m *testing.M) {
	if os.Getenv("STRATA_TEST_AS_CLI") == "1" {
		os.Exit(mainWith(func(e *procstate.State) {
			if v, err := strconv.ParseFloat(os.Getenv("STRATA_TEST_SPEED"), 64); err == nil {
				e.SimulatorSpeed = v
			}
		}))
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
func testEnv(t testing.TB, dir string, stdin io.Reader, stdout, stderr io.Writer) procstate.State {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return procstate.State{Stdin: stdin, Stdout: stdout, Stderr: stderr, Dir: dir,
		Getenv:     func(string) string { return "" },
		Environ:    func() []string { return append(os.Environ(), "STRATA_TEST_AS_CLI=1") },
		CacheDir:   t.TempDir(),
		Executable: exe, SimulatorSpeed: testSpeed,
		Build: &version.Build{Commit: testCommit, ModuleVersion: "(devel)"}}
}

// testCommit is the VCS stamp a test's strata claims, so that a run has
// its commit whatever the checkout the tests were compiled in.
const testCommit = "0123456789abcdef0123456789abcdef01234567"

// testSpeed is how much faster than real time the simulator runs in tests:
// fast enough that most tokens are due whenever the engine wakes to write,
// so a run waits for milliseconds, not seconds. The tests that watch a run
// from outside as it goes (the live line in a terminal, the energy
// sampler, a process killed mid-run) choose theirs.
const testSpeed = 1000

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
		if r.code != exitcode.Usage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, r.code, exitcode.Usage, r.stderr)
		}
		if !strings.Contains(r.stderr, "strata: ") {
			t.Errorf("%v: stderr %q has no error line", args, r.stderr)
		}
	}
}

// TestHelpEverywhere walks every command: each has a help page with a
// description and an example, and exits 0 for --help.
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	var paths [][]string
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		paths = append(paths, path)
		if c.Example == "" {
			t.Errorf("%q has no example", c.CommandPath())
		}
		if c.Short == "" {
			t.Errorf("%q has no description", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(testEnv(t, t.TempDir(), nil, io.Discard, io.Discard)))
	if len(paths) < 20 {
		t.Fatalf("walked only %d commands", len(paths))
	}
	for _, p := range paths {
		r := runIn(t, t.TempDir(), "", append(p, "--help")...)
		if r.code != exitcode.OK || !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%v --help: exit %d, stdout %q", p, r.code, r.stdout)
		}
	}
}

// TestUnknownCommands: a typo at any level is a usage error (exit 2) that
// suggests the command meant and points at that level's help.
func TestUnknownCommands(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args       []string
		want, help string
	}{
		{[]string{"bogus"}, `unknown command "bogus" for "strata" (its commands:`, "Run 'strata --help' for usage."},
		{[]string{"benhc"}, `did you mean "bench"?`, "Run 'strata --help' for usage."},
		{[]string{"bench", "runn"}, `did you mean "run"?`, "Run 'strata bench --help' for usage."},
		{[]string{"bench", "corpus", "verfy"}, `did you mean "verify"?`, "Run 'strata bench corpus --help' for usage."},
		{[]string{"bench", "manifest", "ad"}, `did you mean "add"?`, "Run 'strata bench manifest --help' for usage."},
		{[]string{"engine", "simulat"}, `did you mean "simulate"?`, "Run 'strata engine --help' for usage."},
		{[]string{"bench", "report"}, "", "Run 'strata bench report --help' for usage."},
		{[]string{"version", "extra"}, "takes no arguments", "Run 'strata version --help' for usage."},
	} {
		r := runIn(t, t.TempDir(), "", c.args...)
		if r.code != exitcode.Usage || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, c.help) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q and %q", c.args, r.code, r.stderr, exitcode.Usage, c.want, c.help)
		}
	}
}

// TestSimulateHelpDocumentsScenarios: every field a scenario file may hold
// is named in engine simulate --help, the scenario format's only manual.
func TestSimulateHelpDocumentsScenarios(t *testing.T) {
	t.Parallel()
	r := runIn(t, t.TempDir(), "", "engine", "simulate", "--help")
	for _, typ := range []reflect.Type{reflect.TypeFor[simengine.Scenario](), reflect.TypeFor[simengine.Behaviour](), reflect.TypeFor[simengine.ToolCallSpec]()} {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && !strings.Contains(r.stdout, `"`+name+`"`) {
				t.Errorf("scenario field %s.%s (%q) is not in engine simulate --help", typ.Name(), f.Name, name)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := runIn(t, t.TempDir(), "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, "strata-qwen38-thinking-v1-draft.1") {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
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

func mustRemove(t testing.TB, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
