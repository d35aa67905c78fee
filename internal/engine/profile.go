// Package engine manages inference engines for a run: profiles (small TOML
// files saying what an engine serves and how to start it), starting the
// engine in its own process group with its output captured, waiting for it
// to load, noticing an engine that is already serving, and stopping only an
// engine the runner started.
package engine

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/inputfile"
	"github.com/strata-bench/strata/internal/protocol"
)

// Identity is the operator-declared part of a profile; keys are named like
// the run flags, and a flag given on the command line wins.
type Identity struct {
	Track             *string  `toml:"track"`
	TrackNotes        *string  `toml:"track_notes"`
	ModelRevision     *string  `toml:"model_revision"`
	SourceRevision    *string  `toml:"source_revision"`
	TokenizerRevision *string  `toml:"tokenizer_revision"`
	Quantization      *string  `toml:"quantization"`
	CustomPack        *string  `toml:"custom_pack"`
	BuildOptions      []string `toml:"build_options"`
	Background        []string `toml:"background"`
}

// Profile is one engine profile.
type Profile struct {
	Name string `toml:"-"`
	// Path is the file it was read from ("built-in" for the simulator).
	Path        string            `toml:"-"`
	URL         string            `toml:"url"`
	Command     []string          `toml:"command"`
	Workdir     string            `toml:"workdir"`
	Env         map[string]string `toml:"env"`
	LoadTimeout string            `toml:"load_timeout"`
	APIKeyEnv   string            `toml:"api_key_env"`
	ModelFiles  []string          `toml:"model_files"`
	Identity    Identity          `toml:"identity"`
	// Builtin is set for the simulator profile, whose command is strata
	// itself.
	Builtin bool `toml:"-"`
}

// SimulatorName is the built-in profile that starts `strata engine simulate`.
const SimulatorName = "simulator"

// DefaultLoadTimeout is used when a profile sets none.
const DefaultLoadTimeout = 10 * time.Minute

// Timeout returns the profile's load timeout.
func (p *Profile) Timeout() (time.Duration, error) {
	if p.LoadTimeout == "" {
		return DefaultLoadTimeout, nil
	}
	d, err := time.ParseDuration(p.LoadTimeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("load_timeout %q: expected a positive duration such as \"10m\"", p.LoadTimeout)
	}
	return d, nil
}

// Dirs returns the folders profiles are looked up in, in order:
// ./profiles, then the user config folder's strata/profiles.
func Dirs(workdir string) []string {
	dirs := []string{filepath.Join(workdir, "profiles")}
	if cfg, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(cfg, "strata", "profiles"))
	}
	return dirs
}

// Simulator is the built-in simulator profile: strata's own binary serving
// `engine simulate` on a loopback port.
func Simulator(exe string, port int, modelDir string) *Profile {
	return &Profile{
		Name: SimulatorName, Path: "built-in", Builtin: true,
		URL:         fmt.Sprintf("http://127.0.0.1:%d", port),
		Command:     []string{exe, "engine", "simulate", "--port", fmt.Sprint(port), "--model-dir", modelDir},
		LoadTimeout: "30s",
	}
}

// Load finds and reads profile name: a plain name is looked up in Dirs, a
// path to a .toml file (relative to workdir) is read as it is.
func Load(name, workdir string) (*Profile, error) {
	if strings.HasSuffix(name, ".toml") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(workdir, p)
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("profile file %s: %w", name, err)
		}
		return Read(p)
	}
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return nil, fmt.Errorf("profile name %q: expected a plain name such as \"llama-3060\" or a path to a .toml file", name)
	}
	for _, d := range Dirs(workdir) {
		p := filepath.Join(d, name+".toml")
		if _, err := os.Stat(p); err == nil {
			return Read(p)
		}
	}
	return nil, fmt.Errorf("profile %q not found (looked for %s.toml in %s)", name, name, strings.Join(Dirs(workdir), " and "))
}

// MaxProfileBytes bounds a profile file: a profile is a few lines.
const MaxProfileBytes = 1 << 20

// Read parses a profile file. Unknown keys are an error, so a typo never
// silently drops a setting.
func Read(path string) (*Profile, error) {
	data, err := inputfile.Read(path, MaxProfileBytes)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return Parse(data, path)
}

// Parse parses a profile's text; path names it in errors and resolves a
// relative workdir.
func Parse(data []byte, path string) (*Profile, error) {
	var p Profile
	md, err := toml.Decode(string(data), &p)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		var keys []string
		for _, k := range und {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("profile %s: unknown key(s) %s (known: url, command, workdir, env, load_timeout, api_key_env, model_files, [identity])", path, strings.Join(keys, ", "))
	}
	p.Name = strings.TrimSuffix(filepath.Base(path), ".toml")
	p.Path = path
	if p.Workdir != "" && !filepath.IsAbs(p.Workdir) {
		p.Workdir = filepath.Join(filepath.Dir(path), p.Workdir)
	}
	return &p, nil
}

// Check validates a profile and returns every problem found.
func (p *Profile) Check() []error {
	errs := append(p.checkURL(), p.checkCommand()...)
	if _, err := p.Timeout(); err != nil {
		errs = append(errs, err)
	}
	if p.Workdir != "" {
		if st, err := os.Stat(p.Workdir); err != nil || !st.IsDir() {
			errs = append(errs, fmt.Errorf("workdir %q: no such folder", p.Workdir))
		}
	}
	if p.APIKeyEnv != "" && strings.ContainsAny(p.APIKeyEnv, " =") {
		errs = append(errs, fmt.Errorf("api_key_env %q: name an environment variable, never the key itself", p.APIKeyEnv))
	}
	return append(errs, p.Identity.check()...)
}

// checkURL checks the url: an http(s) server on loopback, at the port
// the command (if any) listens on.
func (p *Profile) checkURL() []error {
	u, err := url.Parse(p.URL)
	switch {
	case p.URL == "":
		return []error{errors.New("url is required (what the engine serves, e.g. http://127.0.0.1:8080)")}
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return []error{fmt.Errorf("url %q: expected http://HOST:PORT", p.URL)}
	}
	var errs []error
	if remote, why := protocol.Remote(p.URL); remote {
		errs = append(errs, fmt.Errorf("url %q: %s", p.URL, why))
	}
	if port, ok := commandPort(p.Command); ok && port != urlPort(u) {
		errs = append(errs, fmt.Errorf("command listens on --port %s but url %q names port %s: strata would wait at a port the engine never opens", port, p.URL, urlPort(u)))
	}
	return errs
}

// checkCommand checks that a user's profile's command names an
// executable (the built-in one runs strata itself).
func (p *Profile) checkCommand() []error {
	if len(p.Command) == 0 || p.Builtin {
		return nil
	}
	if _, err := exec.LookPath(p.Command[0]); err != nil && !filepath.IsAbs(p.Command[0]) {
		return []error{fmt.Errorf("command %q: not found on PATH", p.Command[0])}
	} else if filepath.IsAbs(p.Command[0]) {
		if st, err := os.Stat(p.Command[0]); err != nil || st.IsDir() {
			return []error{fmt.Errorf("command %q: no such executable", p.Command[0])}
		}
	}
	return nil
}

// check checks the declared identity: a known track, and each value that
// names one thing on one line.
func (id Identity) check() []error {
	var errs []error
	if t := id.Track; t != nil {
		if ok, why := protocol.ValidTrack(*t); !ok {
			errs = append(errs, fmt.Errorf("identity.track %q: %s", *t, why))
		}
	}
	for _, f := range []struct {
		key  string
		vals []string
	}{{"model_revision", Values(id.ModelRevision)}, {"source_revision", Values(id.SourceRevision)},
		{"tokenizer_revision", Values(id.TokenizerRevision)}, {"quantization", Values(id.Quantization)},
		{"background", id.Background}, {"build_options", id.BuildOptions}} {
		for _, v := range f.vals {
			if why := OneLine(v); why != "" {
				errs = append(errs, fmt.Errorf("identity.%s %q %s", f.key, v, why))
			}
		}
	}
	return errs
}

// OneLine is the rule for an identity value that names one thing (a
// revision, a quantization, a background workload, a build option): such a
// name is one line of visible text, so a control character (a newline, a
// terminal escape), a bidirectional override or a byte that is not UTF-8
// in it is a paste gone wrong, refused before the run. Track notes and a
// custom pack's description are prose and may span lines. It says why v is
// not one line ("" when it is).
func OneLine(v string) string {
	for i, r := range v {
		if r == utf8.RuneError && !strings.HasPrefix(v[i:], string(utf8.RuneError)) {
			return fmt.Sprintf("has a byte that is not UTF-8 at byte %d: it names one thing, on one line", i)
		}
		if escape.Hidden(r) {
			return fmt.Sprintf("has the control or bidirectional character %U at byte %d: it names one thing, on one line", r, i)
		}
	}
	return ""
}

// Values is an optional value as a list (none when it is not given).
func Values(v *string) []string {
	if v == nil {
		return nil
	}
	return []string{*v}
}

// Listed is a profile found on disk.
type Listed struct {
	Name, Path string
	Err        error
}

// List returns every profile found, the first of each name winning.
func List(workdir string) []Listed {
	seen := map[string]bool{SimulatorName: true}
	out := []Listed{{Name: SimulatorName, Path: "built-in"}}
	for _, d := range Dirs(workdir) {
		matches, _ := filepath.Glob(filepath.Join(d, "*.toml"))
		sort.Strings(matches)
		for _, m := range matches {
			name := strings.TrimSuffix(filepath.Base(m), ".toml")
			if seen[name] {
				continue
			}
			seen[name] = true
			_, err := Read(m)
			out = append(out, Listed{Name: name, Path: m, Err: err})
		}
	}
	return out
}

// Sanitized is the profile as the config artifact records it: the command
// and settings, the API key variable's name but never a value, and env
// values hidden unless they are plainly not secret.
func (p *Profile) Sanitized() map[string]any {
	env := map[string]string{}
	for k, v := range p.Env {
		if looksSecret(k) {
			v = "<secret>"
		}
		env[k] = v
	}
	return map[string]any{
		"name": p.Name, "url": p.URL, "command": p.Command, "env": env,
		"load_timeout": p.LoadTimeout, "api_key_env": p.APIKeyEnv, "model_files": p.ModelFiles,
	}
}

func looksSecret(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASS", "AUTH", "CREDENTIAL"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// commandPort is the port the command gives its engine with --port N or
// --port=N, if any: llama-server's flag (common/arg.cpp `{"--port"},
// "PORT"`; `llama-server --help` of b10470, commit 34af94cd9, in
// ../shared/engines); another engine given --port is read the same way. Its
// value wins over LLAMA_ARG_PORT, so the environment is not read here.
func commandPort(command []string) (string, bool) {
	for i, a := range command {
		v, ok := strings.CutPrefix(a, "--port=")
		if !ok && a == "--port" && i+1 < len(command) {
			v, ok = command[i+1], true
		}
		if _, err := strconv.Atoi(v); ok && err == nil {
			return v, true
		}
	}
	return "", false
}

// urlPort is the URL's port, its scheme's when it names none.
func urlPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}
