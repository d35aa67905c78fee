// Package procstate is the one process state a command may touch: the
// streams, the working folder, the environment, the cache folder, the
// signals, the terminal, the machine's file system and the programs the
// probes run, this binary's path, what is private on this machine, the
// wall clock, and the protocols strata knows. The command layer and the
// run use case read them from here and from nothing else; OS builds the
// real one, and tests build their own (k6's state, restic's global
// options: injected, never global).
package procstate

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/strata-bench/strata/internal/abandon"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/install"
	"github.com/strata-bench/strata/internal/power"
	"github.com/strata-bench/strata/internal/power/nvml"
	"github.com/strata-bench/strata/internal/probe"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/tokenizer"
	"github.com/strata-bench/strata/internal/version"
	"golang.org/x/term"
)

// State is the process state of one command.
type State struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Dir is the working directory; relative paths are resolved against it.
	Dir    string
	Getenv func(string) string
	// Environ is the environment handed to an engine the runner starts
	// (nil: this process's).
	Environ func() []string
	// CacheDir holds strata's caches ("": the user cache folder).
	CacheDir string
	// Signals delivers the signals that end a command early (SIGINT,
	// SIGTERM, SIGHUP); nil when nothing is wired.
	Signals <-chan os.Signal
	// TTY says stderr is a terminal that takes the live status line (not
	// TERM=dumb); Width is its width in cells (nil: 80).
	TTY   bool
	Width func() int
	// Root is the machine's file system, for what probes read (/proc,
	// /sys); Probe runs the probes' programs (nvidia-smi, lsblk). nil: none
	// (every such fact is null with a reason).
	Root  fs.FS
	Probe probe.Runner
	// NVML loads NVIDIA's management library for the power sampler (nil:
	// none is loaded, and nvidia-smi samples); PowerInterval is how often
	// the GPUs' power is sampled (0: power.DefaultInterval; a test running
	// the simulator faster shortens it alike).
	NVML          power.OpenNVML
	PowerInterval time.Duration
	// Executable is this program (the simulator is started from it; a
	// release's COMMIT file is beside it).
	Executable string
	// Build is what this binary knows of its own build (nil: the running
	// binary's, version.Own(); tests choose one).
	Build *version.Build
	// Machine is what is private on this machine, for the redactor (nil:
	// nothing but the generic patterns).
	Machine *redact.Machine
	// Now is the wall clock (nil: time.Now).
	Now func() time.Time
	// SimulatorSpeed runs the simulated engine that much faster than real
	// time (0 or 1: real time); tests use it.
	SimulatorSpeed float64
	// Protocols is the table of protocols this strata knows (nil: the one
	// it ships; tests inject a corpus SHA-256).
	Protocols protocol.Table
	// StopNow is closed on a second signal: stop waiting for anything
	// graceful (an engine's shutdown) and write what there is. The command
	// layer sets it.
	StopNow <-chan struct{}
	// Keys are the secrets the command learns (the API key in use), so that
	// nothing it prints shows them. The command layer sets it.
	Keys *redact.Keyring
}

// Path resolves p against the working directory.
func (s State) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.Dir, p)
}

// Tokenizer reads the tokenizer at path (resolved against the working
// folder): a GGUF model file's from its metadata, any other from its
// files. It ends when ctx does: the JSON decoders and the GGUF reader take
// no context, and a hostile file takes them seconds.
func (s State) Tokenizer(ctx context.Context, path string) (*tokenizer.Tokenizer, error) {
	p := s.Path(path)
	return abandon.Do(ctx, func() (*tokenizer.Tokenizer, error) {
		if !gguf.Named(p) {
			return tokenizer.Load(p)
		}
		f, err := gguf.Open(p)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		return tokenizer.FromGGUF(p, f)
	})
}

// Template reads and compiles the chat template at path (resolved against
// the working folder): a GGUF model file's tokenizer.chat_template (its
// metadata read without the tokenizer's lists), or the file
// chattemplate.Load reads. It ends when ctx does.
func (s State) Template(ctx context.Context, path string) (*chattemplate.Template, error) {
	p := s.Path(path)
	if !gguf.Named(p) {
		return chattemplate.Load(ctx, p)
	}
	f, err := abandon.Do(ctx, func() (*gguf.File, error) { return gguf.OpenWithoutLists(p) })
	if err != nil {
		return nil, fmt.Errorf("chat template: %w", err)
	}
	return chattemplate.FromGGUF(ctx, p, f)
}

// Clock reads the wall clock.
func (s State) Clock() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// Private is what is private on this machine (nothing when the state
// names nothing: the redactor's generic patterns still apply).
func (s State) Private() redact.Machine {
	if s.Machine == nil {
		return redact.Machine{}
	}
	return *s.Machine
}

// Cache is strata's cache folder: CacheDir, else the user cache folder's
// strata.
func (s State) Cache() (string, error) {
	if s.CacheDir != "" {
		return s.CacheDir, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the user cache folder: %w", err)
	}
	return filepath.Join(d, "strata"), nil
}

// Install is where the running strata came from: its commit and where
// that was read, and what the checkout around the working folder says.
func (s State) Install() install.Info {
	b := version.Own()
	if s.Build != nil {
		b = *s.Build
	}
	return install.Detect(install.Inputs{Workdir: s.Dir, Executable: s.Executable, Build: b})
}

// Environment is the environment an engine the runner starts inherits.
func (s State) Environment() []string {
	if s.Environ != nil {
		return s.Environ()
	}
	return os.Environ()
}

// OS returns the real process state, with SIGINT, SIGTERM and SIGHUP (a
// closed terminal, a dropped SSH session) delivered on Signals and SIGPIPE
// ignored (a broken pipe on stdout or stderr is an error to ignore, not a
// reason to die mid-run).
func OS() State {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	signal.Ignore(syscall.SIGPIPE)
	wd, _ := os.Getwd()
	exe, _ := os.Executable()
	m := redact.Local(os.Getenv)
	fd := int(os.Stderr.Fd())
	// A dumb terminal takes no cursor movement: plain lines, as for a pipe.
	tty := term.IsTerminal(fd) && os.Getenv("TERM") != "dumb"
	width := func() int {
		if w, _, err := term.GetSize(fd); err == nil && w > 0 {
			return w
		}
		if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil {
			return n
		}
		return 80
	}
	return State{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Dir: wd, Getenv: os.Getenv, Environ: os.Environ,
		Signals: sigs, TTY: tty, Width: width, Root: os.DirFS("/"), Probe: probe.Exec{Timeout: 5 * time.Second},
		NVML:       nvml.Load,
		Executable: exe, Machine: &m, Now: time.Now}
}

// Args are the command's arguments (without the program name).
func Args() []string { return os.Args[1:] }
