//go:build linux

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/tokenizer"
)

// cpuTime is the CPU time process pid has spent, from /proc.
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name (which may hold spaces), from
	// field 3: utime and stime are fields 14 and 15, in clock ticks.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// sigtermWhenBusy runs this test binary as strata with args in dir (stdin
// the file named, if any), sends SIGTERM once the process has spent half a
// second of CPU (it is then deep in the work, long past starting and
// reading its small inputs), and returns its exit code and its stderr.
func sigtermWhenBusy(t *testing.T, dir, stdin string, args ...string) (int, string) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	if stdin != "" {
		f, err := os.Open(filepath.Join(dir, stdin))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = f.Close() }() // read only; the child has its own copy
		cmd.Stdin = f
	}
	cmd.Env = append(os.Environ(), "STRATA_TEST_AS_CLI=1", "XDG_CACHE_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	// The exit code is read from ProcessState once exited is closed, and
	// by the cleanup the process may be gone.
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	deadline := time.After(60 * time.Second)
	for cpuTime(cmd.Process.Pid) < 500*time.Millisecond {
		select {
		case <-exited:
			t.Fatalf("%v ended before it was busy: %s", args, stderr.String())
		case <-deadline:
			t.Fatalf("%v was not busy within 60 s", args)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("%v still runs 30 s after SIGTERM", args)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// slowPack writes Qwen3's tokenizer as a Strata pack's tokenizer folder
// whose pre_pattern looks to the end of the text at every character:
// quadratic in the text.
func slowPack(t *testing.T, tokPath, dir string) {
	t.Helper()
	if err := tokenizer.WritePack(tokPath, dir); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{}
	data, err := os.ReadFile(filepath.Join(dir, tokenizer.PackConfig))
	if err == nil {
		err = json.Unmarshal(data, &cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg["pre_pattern"] = `[\s\S](?=[\s\S]*$)`
	data, _ = json.Marshal(cfg)
	mustWrite(t, filepath.Join(dir, tokenizer.PackConfig), string(data))
}

// TestSIGTERMEndsBusyWork: the first SIGTERM ends a command whatever it is
// doing: rendering a template that would loop for hours, tokenizing with a
// pattern quadratic in the text, building a corpus with it. None of that
// work ends by itself while the test waits (the render's own time bound
// would end it with exit 1), so exit 130 naming SIGTERM is the signal's
// doing.
func TestSIGTERMEndsBusyWork(t *testing.T) {
	t.Parallel()
	tokPath, tmplPath := qwenPaths(t)
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "m.json"), `[{"role":"user","content":"hi"}]`)
	mustWrite(t, filepath.Join(dir, "loop.jinja"), `{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}`)
	slowPack(t, tokPath, filepath.Join(dir, "pack"))
	mustWrite(t, filepath.Join(dir, "text.txt"), strings.Repeat("a quick brown fox. ", 20_000))
	for _, c := range []struct {
		name, stdin string
		args        []string
	}{
		{"rendering", "", []string{"tokens", "--tokenizer", tokPath, "--template", "loop.jinja", "--messages", "m.json"}},
		{"tokenizing", "text.txt", []string{"tokens", "--tokenizer", "pack"}},
		{"building a corpus", "", []string{"bench", "corpus", "build", "--tokenizer", "pack", "--template", tmplPath, "--out", "bundle"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stderr := sigtermWhenBusy(t, dir, c.stdin, c.args...)
			if code != exitcode.Interrupted || !strings.Contains(stderr, "SIGTERM") {
				t.Errorf("exit %d after SIGTERM, stderr %q; want exit %d naming SIGTERM", code, stderr, exitcode.Interrupted)
			}
		})
	}
	if _, err := os.Lstat(filepath.Join(dir, "bundle")); err == nil {
		t.Error("an interrupted build left a bundle")
	}
}
