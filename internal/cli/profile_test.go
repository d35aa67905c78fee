package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/simengine"
)

func freeTestPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// simProfile writes a profile whose engine is this test binary acting as
// `strata engine simulate` (fast), and returns the working folder.
func simProfile(t *testing.T, port int, extraArgs ...string) string {
	work := t.TempDir()
	exe, _ := os.Executable()
	args := []string{exe, "engine", "simulate", "--port", fmt.Sprint(port), "--model-dir", work,
		"--prompt-tps", "5000000", "--decode-tps", "200000", "--load-time", "100ms"}
	args = append(args, extraArgs...)
	cmd, _ := json.Marshal(args)
	mustWrite(t, filepath.Join(work, "profiles", "fake.toml"), fmt.Sprintf(`url = "http://127.0.0.1:%d"
command = %s
load_timeout = "20s"
model_files = ["*.gguf"]
[env]
STRATA_TEST_AS_CLI = "1"
[identity]
quantization = "SIM-Q0"
track_notes = "from the profile"
`, port, cmd))
	return work
}

func readResults(t *testing.T, work string) (*contract.Results, string) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(work, "bench-results", "*"))
	if len(dirs) != 1 {
		t.Fatalf("result folders %v", dirs)
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r contract.Results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r, dirs[0]
}

func TestProfileStartsAndStopsTheEngine(t *testing.T) {
	t.Parallel()
	port := freeTestPort(t)
	work := simProfile(t, port)
	r := runIn(t, work, "", "bench", "run", "--profile", "fake", "--track-notes", "flag wins")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "starting the fake engine") || !strings.Contains(r.stderr, "the engine is ready") {
		t.Errorf("stderr %s", r.stderr)
	}
	if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		t.Error("the engine the runner started still runs")
	}
	res, dir := readResults(t, work)
	if *res.Model.Quantization != "SIM-Q0" || *res.Configuration.TrackNotes != "flag wins" {
		t.Errorf("identity: quantization %v, notes %v", res.Model.Quantization, *res.Configuration.TrackNotes)
	}
	if len(res.Model.Files) != 1 || res.Model.Files[0].Path != "simulated-qwen3.gguf" || res.Model.Files[0].SHA256 == nil {
		t.Errorf("model files %+v", res.Model.Files)
	}
	kinds := map[string]bool{}
	for _, a := range res.Artifacts {
		kinds[a.Kind] = true
	}
	if !kinds["engine_log"] || !kinds["config"] || !kinds["provenance"] || !kinds["outputs"] {
		t.Errorf("artifacts %+v", res.Artifacts)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if !strings.Contains(string(cfg), `"started_command"`) || strings.Contains(string(cfg), work) {
		t.Errorf("config artifact: %s", cfg)
	}
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Errorf("report: %s", rep.stdout)
	}
	noEngineOutputLeft(t, work)
}

// noEngineOutputLeft: the file the engine the runner started wrote its
// output to is gone once the run is over (the result keeps the log).
func noEngineOutputLeft(t *testing.T, work string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(work, ".strata-engine-*"))
	pending, _ := filepath.Glob(filepath.Join(work, "bench-results", ".*"))
	if left = append(left, pending...); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestProfileAlreadyServing(t *testing.T) {
	t.Parallel()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	port := freeTestPort(t)
	cfg := simengine.Config{PromptTPS: 5e6, DecodeTPS: 2e5, ReasoningTokens: 50, Accuracy: 1, Slots: 1, ContextTokens: 32768, ModelPath: "m.gguf", Bundle: b}
	// Its /metrics also has an empty summary, whose quantiles a Prometheus
	// client writes as NaN: JSON has no NaN, and the journal once failed on
	// it before the warm-up.
	sim := simengine.New(cfg).Handler()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sim.ServeHTTP(w, r)
		if r.URL.Path == "/metrics" {
			// A failed write is the run's to report.
			_, _ = fmt.Fprint(w, "# TYPE strata_test_seconds summary\nstrata_test_seconds{quantile=\"0.5\"} NaN\nstrata_test_seconds_sum +Inf\n")
		}
	})}
	// Serve returns ErrServerClosed once the deferred Close ends it.
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	work := simProfile(t, port)
	r := runIn(t, work, "", "bench", "run", "--profile", "fake", "--no-start")
	if r.code != 0 || !strings.Contains(r.stderr, "already serving") || strings.Contains(r.stderr, "starting the") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err != nil {
		t.Error("an engine the runner did not start is left running")
	}
	res, _ := readResults(t, work)
	var ext struct {
		Engine struct {
			StartedByRunner bool `json:"started_by_runner"`
			Served          struct {
				Answered *int64   `json:"requests_answered"`
				Ignored  []string `json:"ignored"`
			} `json:"served_before_run"`
		} `json:"engine"`
	}
	raw, _ := json.Marshal(res.Extensions)
	if err := json.Unmarshal(raw, &ext); err != nil {
		t.Fatal(err)
	}
	if ext.Engine.StartedByRunner || ext.Engine.Served.Answered == nil || *ext.Engine.Served.Answered != 0 {
		t.Errorf("engine extension %+v", res.Extensions.Engine)
	}
	if ig := strings.Join(ext.Engine.Served.Ignored, "; "); !strings.Contains(ig, `strata_test_seconds{quantile="0.5"} NaN: not a finite number`) || !strings.Contains(ig, "strata_test_seconds_sum +Inf") {
		t.Errorf("the non-finite samples are not named as ignored: %q", ig)
	}
	// The message says what /metrics showed, and the folder strata wrote
	// passes its own report.
	if !strings.Contains(r.stderr, "it had answered no request before this run") || strings.Contains(r.stderr, "not freshly loaded") {
		t.Errorf("stderr %s", r.stderr)
	}
	_, dir := readResults(t, work)
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Errorf("report of a run against an engine that served before: %s", rep.stdout)
	}
}

func TestProfileFailures(t *testing.T) {
	t.Parallel()
	port := freeTestPort(t)
	work := simProfile(t, port)
	r := runIn(t, work, "", "bench", "run", "--profile", "fake", "--no-start")
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "--no-start forbids") {
		t.Errorf("--no-start: exit %d %s", r.code, r.stderr)
	}
	// Something else holds the port.
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	otherPort := other.Listener.Addr().(*net.TCPAddr).Port
	work2 := simProfile(t, otherPort)
	r = runIn(t, work2, "", "bench", "run", "--profile", "fake")
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "not an inference engine") || !strings.Contains(r.stderr, "the port is taken, and profile fake's engine cannot listen there") {
		t.Errorf("port taken: exit %d %s", r.code, r.stderr)
	}
	// The same server named by --url is the user's: not a port taken.
	r = runIn(t, t.TempDir(), "", "bench", "run", "--url", other.URL)
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "not an inference engine") || strings.Contains(r.stderr, "port is taken") {
		t.Errorf("--url to a server that is not an engine: exit %d %s", r.code, r.stderr)
	}
	// The engine exits during load: a clear message with its log's tail.
	work3 := simProfile(t, port, "--accuracy", "7")
	r = runIn(t, work3, "", "bench", "run", "--profile", "fake")
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "exited during load") || !strings.Contains(r.stderr, "--accuracy must be between 0 and 1") {
		t.Errorf("crash during load: exit %d %s", r.code, r.stderr)
	}
	for _, w := range []string{work, work2, work3} {
		if _, err := os.Stat(filepath.Join(w, "bench-results")); !os.IsNotExist(err) {
			t.Errorf("a result folder was written for a run that never started")
		}
		noEngineOutputLeft(t, w)
	}
	// A profile that is not there, or not usable, is bad usage, said
	// before anything is started.
	r = runIn(t, work, "", "bench", "run", "--profile", "nope")
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, `profile "nope" not found`) {
		t.Errorf("missing profile: exit %d %s", r.code, r.stderr)
	}
	for name, body := range map[string]string{
		"typo":    "url = \"http://127.0.0.1:1\"\nload_timout = \"60s\"\n",
		"timeout": "url = \"http://127.0.0.1:1\"\nload_timeout = \"sixty\"\n",
		"command": "url = \"http://127.0.0.1:1\"\ncommand = \"llama-server\"\n",
	} {
		mustWrite(t, filepath.Join(work, "profiles", name+".toml"), body)
		if r := runIn(t, work, "", "bench", "run", "--profile", name); r.code != exitcode.Usage || !strings.Contains(r.stderr, name+".toml") {
			t.Errorf("profile %s: exit %d, want %d naming the file: %s", name, r.code, exitcode.Usage, r.stderr)
		}
	}
}

func TestProfilesCommands(t *testing.T) {
	t.Parallel()
	port := freeTestPort(t)
	work := simProfile(t, port)
	mustWrite(t, filepath.Join(work, "profiles", "typo.toml"), "url = \"http://127.0.0.1:1\"\nmodel_file = [\"x\"]\n")
	r := runIn(t, work, "", "bench", "profiles")
	if r.code != exitcode.Failed || !strings.Contains(r.stdout, "fake") || !strings.Contains(r.stdout, "simulator") || !strings.Contains(r.stdout, "model_file") {
		t.Errorf("profiles: exit %d %s", r.code, r.stdout)
	}
	if r := runIn(t, work, "", "bench", "profile", "check", "fake"); r.code != 0 || !strings.Contains(r.stdout, "ok") {
		t.Errorf("check fake: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, work, "", "bench", "profile", "check", "typo"); r.code != exitcode.Failed || !strings.Contains(r.stderr, "unknown key") {
		t.Errorf("check typo: exit %d %s", r.code, r.stderr)
	}
}

// TestPlantedSecretsNeverReachTheFolder plants every private kind in the
// engine log, the profile (env, command), the API key and the machine's
// paths, and checks every file of the result folder.
func TestPlantedSecretsNeverReachTheFolder(t *testing.T) {
	t.Parallel()
	port := freeTestPort(t)
	banner := "operator alice@example.com on 192.168.1.77 (fe80::1c2d:3e4f:5a6b:7c8d) mac 00:1a:2b:3c:4d:5e key sk-live-ABCDEFGHIJKLMNOPQRST home /home/alice/models Authorization: Bearer abcdefghijklmnopqrstuvwxyz"
	work := simProfile(t, port, "--banner", banner)
	p := filepath.Join(work, "profiles", "fake.toml")
	b, _ := os.ReadFile(p)
	body := strings.Replace(string(b), "[env]\n", "api_key_env = \"STRATA_TEST_KEY\"\n[env]\nHF_TOKEN = \"hf_ABCDEFGHIJKLMNOPQRSTUVWXYZ\"\n", 1)
	mustWrite(t, p, body)
	var out, errb strings.Builder
	env := testEnv(t, work, strings.NewReader(""), &out, &errb)
	env.Getenv = func(k string) string { return map[string]string{"STRATA_TEST_KEY": "my-private-server-key-42"}[k] }
	if code := Run(t.Context(), []string{"bench", "run", "--profile", "fake"}, env); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	_, dir := readResults(t, work)
	planted := []string{"alice@example.com", "192.168.1.77", "fe80::1c2d", "00:1a:2b:3c:4d:5e", "sk-live-ABCDEFGH",
		"/home/alice", "abcdefghijklmnopqrstuvwxyz", "hf_ABCDEFGH", "my-private-server-key-42", work}
	entries, _ := os.ReadDir(dir)
	logSeen := false
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if e.Name() == "engine.log" {
			logSeen = strings.Contains(string(data), "<email>") && strings.Contains(string(data), "<private-ip>")
		}
		for _, s := range planted {
			if strings.Contains(string(data), s) {
				t.Errorf("%s contains %q", e.Name(), s)
			}
		}
	}
	if !logSeen {
		t.Error("the engine log was not kept (redacted) as an artifact")
	}
}

// TestProfileOldBuildServerBudget: the simulator speaking as llama.cpp
// b9928 (which ignores the per-request reasoning budget), started by a
// profile with --reasoning-budget 16: the runner sees the budget in the
// command line, cannot override it, and the run is nonconforming naming it.
// Its reasoning really is cut at 16 tokens.
func TestProfileOldBuildServerBudget(t *testing.T) {
	t.Parallel()
	port := freeTestPort(t)
	work := simProfile(t, port, "--dialect", "llama.cpp", "--build", "9928", "--reasoning-budget", "16")
	r := runIn(t, work, "", "bench", "run", "--profile", "fake")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: the run will be nonconforming: the server sets a reasoning budget, --reasoning-budget 16") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	res, dir := readResults(t, work)
	nonconforming := contract.Texts(res.Extensions.StatusReasons.Nonconforming)
	found := false
	for _, s := range nonconforming {
		found = found || strings.Contains(s, "--reasoning-budget 16") && strings.Contains(s, "b9928 ignores the per-request reasoning_budget_tokens")
	}
	if res.Run.Status != contract.StatusNonconforming || !found {
		t.Errorf("status %s, reasons %q", res.Run.Status, nonconforming)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "outputs.jsonl"))
	var line struct {
		Reasoning string `json:"reasoning"`
	}
	if err := json.Unmarshal(out[:strings.IndexByte(string(out), '\n')], &line); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(line.Reasoning)); n == 0 || n > 16 {
		t.Errorf("the server budget of 16 should cut the warm-up's reasoning to at most 16 tokens: %q", line.Reasoning)
	}
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Errorf("report: %s", rep.stdout)
	}
}

// TestRunAsUserBuild: the CLI takes the user name from the injected
// environment (USER, LOGNAME); a user called "build" (a word of T4's
// arguments and of strata's own text) leaves a folder that validates.
func TestRunAsUserBuild(t *testing.T) {
	t.Parallel()
	port := freeTestPort(t)
	work := simProfile(t, port)
	var out, errb strings.Builder
	env := testEnv(t, work, strings.NewReader(""), &out, &errb)
	env.Getenv = func(k string) string { return map[string]string{"USER": "build", "LOGNAME": "short"}[k] }
	m := redact.Local(env.Getenv)
	env.Machine = &m
	if code := Run(t.Context(), []string{"bench", "run", "--profile", "fake"}, env); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	_, dir := readResults(t, work)
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Errorf("report: %s", rep.stdout)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "outputs.jsonl"))
	if strings.Contains(string(data), "<user>") {
		t.Error("a protocol word was taken for the user's name")
	}
}

// TestServerNamedFileIsNotHashed: a server whose model_path climbs to
// /etc/passwd from the engine's folder gets a refusal, never a hash in
// results.json or an entry in the hash cache, and the result validates.
// provenance's TestServerNamedFilesAreRefused holds the same refusal for
// /etc/passwd itself and a split name claiming 99,999 shards (refused
// without 99,999 lookups); a whole run for each repeated this one.
func TestServerNamedFileIsNotHashed(t *testing.T) {
	t.Parallel()
	for _, modelPath := range []string{"../../../../../../../../etc/passwd"} {
		port := freeTestPort(t)
		work := t.TempDir()
		exe, _ := os.Executable()
		cmd, _ := json.Marshal([]string{exe, "engine", "simulate", "--port", fmt.Sprint(port), "--model-path", modelPath,
			"--prompt-tps", "5000000", "--decode-tps", "200000", "--load-time", "100ms"})
		mustWrite(t, filepath.Join(work, "profiles", "p.toml"), fmt.Sprintf("url = \"http://127.0.0.1:%d\"\ncommand = %s\n[env]\nSTRATA_TEST_AS_CLI = \"1\"\n", port, cmd))
		cache := t.TempDir()
		var out, errb strings.Builder
		env := testEnv(t, work, strings.NewReader(""), &out, &errb)
		env.CacheDir = cache
		if code := Run(t.Context(), []string{"bench", "run", "--profile", "p"}, env); code != 0 {
			t.Fatalf("%s: exit %d\n%s", modelPath, code, errb.String())
		}
		res, dir := readResults(t, work)
		data, _ := os.ReadFile(filepath.Join(dir, "results.json"))
		if res.Model.Files != nil || strings.Contains(string(data), "root:x:0") || !strings.Contains(res.Missing["/model/files"], "refused") {
			t.Errorf("%s: files %+v, missing %q", modelPath, res.Model.Files, res.Missing["/model/files"])
		}
		if c, _ := os.ReadFile(filepath.Join(cache, "model-hashes.json")); strings.Contains(string(c), "passwd") {
			t.Errorf("%s entered the hash cache", modelPath)
		}
		if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
			t.Errorf("report: %s", rep.stdout)
		}
	}
}

// TestModelFilesHashWhileTheEngineLoads: the files a profile names are
// hashed while the engine it starts loads; both durations are reported, the
// file is hashed once (fresh, not from a cache), and the result validates.
func TestModelFilesHashWhileTheEngineLoads(t *testing.T) {
	t.Parallel()
	port := freeTestPort(t)
	work := simProfile(t, port, "--load-time", "1s")
	// 32 MiB to hash, written as a sparse file: its zeros cost no memory.
	big := filepath.Join(work, "profiles", "big-model.gguf")
	mustWrite(t, big, "GGUF")
	if err := os.Truncate(big, 4+32<<20); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, work, "", "bench", "run", "--profile", "fake")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "while the engine loaded") {
		t.Errorf("stderr does not say the files were hashed during the load:\n%s", r.stderr)
	}
	res, dir := readResults(t, work)
	var ext struct {
		Hashing struct {
			DurationS float64 `json:"duration_s"`
			Files     []struct {
				Path      string `json:"path"`
				FromCache bool   `json:"from_cache"`
			} `json:"files"`
			During *struct {
				HashingS    float64 `json:"hashing_s"`
				EngineLoadS float64 `json:"engine_load_s"`
				Files       int     `json:"files_hashed"`
			} `json:"while_engine_loaded"`
		} `json:"model_hashing"`
	}
	raw, _ := json.Marshal(res.Extensions)
	if err := json.Unmarshal(raw, &ext); err != nil {
		t.Fatal(err)
	}
	h := ext.Hashing
	if h.During == nil || h.During.Files != 1 || h.During.HashingS <= 0 || h.During.EngineLoadS < 0.9 || h.DurationS < h.During.HashingS {
		t.Fatalf("model_hashing %+v, during the load %+v", h, h.During)
	}
	found := false
	for _, f := range h.Files {
		if f.Path == "big-model.gguf" {
			found = true
			if f.FromCache {
				t.Error("the file hashed during the load is reported as from the cache")
			}
		}
	}
	if !found || len(res.Model.Files) != 2 {
		t.Errorf("model files %+v (hashing %+v)", res.Model.Files, h.Files)
	}
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Errorf("report: %s", rep.stdout)
	}
}

// TestReusedHashesAreSaid: a second run over an unchanged model file
// reuses its cached hash and says so, on the terminal and in
// extensions.model_hashing, with how to hash it again; the first run,
// which hashed it, says nothing of the cache.
func TestReusedHashesAreSaid(t *testing.T) {
	t.Parallel()
	work := simProfile(t, freeTestPort(t))
	mustWrite(t, filepath.Join(work, "profiles", "big-model.gguf"), "GGUF weights")
	cache := t.TempDir()
	const said = "reused from the hash cache"
	for i, wantSaid := range []bool{false, true} {
		var out, errb strings.Builder
		env := testEnv(t, work, strings.NewReader(""), &out, &errb)
		env.CacheDir = cache
		results := filepath.Join(work, fmt.Sprint("results-", i))
		if code := Run(t.Context(), []string{"bench", "run", "--profile", "fake", "--results-dir", results}, env); code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i+1, code, errb.String())
		}
		dirs, _ := filepath.Glob(filepath.Join(results, "*", "results.json"))
		if len(dirs) != 1 {
			t.Fatalf("run %d: result folders %v", i+1, dirs)
		}
		data, _ := os.ReadFile(dirs[0])
		var res contract.Results
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		note := res.Extensions.ModelHashing.Note
		if strings.Contains(errb.String(), said) != wantSaid || strings.Contains(note, said) != wantSaid || wantSaid && !strings.Contains(note, "--rehash") {
			t.Errorf("run %d: the reuse said %v on the terminal, %v in the note %q; want %v\n%s", i+1,
				strings.Contains(errb.String(), said), strings.Contains(note, said), note, wantSaid, errb.String())
		}
	}
}
