package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/simengine"
)

// strataProfile writes a profile whose engine is the simulator speaking as
// Strata's server (serve/server.py @452325a9) with an API key and a Strata
// config file (strata-test.json, as setup writes one: --max-context, --kv,
// a --native shard set) whose shards are in the working folder; the
// profile names no model_files, so only the config file can name them.
func strataProfile(t *testing.T, key string, extra ...string) string {
	t.Helper()
	work := t.TempDir()
	port := freeTestPort(t)
	for i, body := range []string{"GGUF first shard", "GGUF second shard"} {
		mustWrite(t, filepath.Join(work, fmt.Sprintf("model-%05d-of-00002.gguf", i+1)), body)
	}
	mustWrite(t, filepath.Join(work, "strata-test.json"), `{"exe": "engine/strata", "cwd": ".", "model_name": "qwen3.8-flash-next-test",
 "args": ["--max-context", "32768", "--kv", "q8_0", "--native", "model-00001-of-00002.gguf"], "port": 8080}`)
	exe, _ := os.Executable()
	args := append([]string{exe, "engine", "simulate", "--port", fmt.Sprint(port), "--dialect", "strata", "--api-key-env", "SIM_STRATA_KEY",
		"--config", "strata-test.json", "--prompt-tps", "5000000", "--decode-tps", "200000", "--load-time", "100ms"}, extra...)
	cmd, _ := json.Marshal(args)
	mustWrite(t, filepath.Join(work, "profiles", "strata.toml"), fmt.Sprintf(`url = "http://127.0.0.1:%d"
command = %s
workdir = %q
load_timeout = "20s"
[env]
STRATA_TEST_AS_CLI = "1"
SIM_STRATA_KEY = %q
`, port, cmd, work, key))
	return work
}

// runWithKey runs the CLI with STRATA_TEST_KEY holding key.
func runWithKey(t *testing.T, work, key string, args ...string) cliResult {
	t.Helper()
	var out, errb strings.Builder
	env := testEnv(t, work, strings.NewReader(""), &out, &errb)
	env.Getenv = func(k string) string { return map[string]string{"STRATA_TEST_KEY": key}[k] }
	code := Run(t.Context(), args, env)
	return cliResult{code, out.String(), errb.String()}
}

// TestStrataServerRun: a run against the simulator as Strata's server:
// without --api-key-env the run stops before the warm-up naming the key's
// flag; with it the run completes, engine_version is the
// build_info version, the preflight checks the template and all 34 counts
// (by count_tokens), the key is nowhere in the folder, and the config
// file's --max-context, --kv and both --native shards are recorded.
func TestStrataServerRun(t *testing.T) {
	t.Parallel()
	const key = "strata-server-key-8f3e2a"
	work := strataProfile(t, key)
	r := runWithKey(t, work, "", "bench", "run", "--profile", "strata")
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, "the server needs an API key") || !strings.Contains(r.stderr, "--api-key-env") ||
		!strings.Contains(r.stderr, "HTTP 401") || strings.Contains(r.stderr, "warm-up") {
		t.Fatalf("without the key: exit %d\n%s", r.code, r.stderr)
	}
	if dirs, _ := filepath.Glob(filepath.Join(work, "bench-results", "*")); len(dirs) != 0 {
		t.Fatalf("a refused run left %v", dirs)
	}
	if r := runWithKey(t, work, "n0t-the-servers-k3y", "bench", "run", "--profile", "strata", "--api-key-env", "STRATA_TEST_KEY"); r.code != exitcode.Usage ||
		!strings.Contains(r.stderr, "refused the API key from --api-key-env STRATA_TEST_KEY") || strings.Contains(r.stderr, "n0t-the-servers-k3y") {
		t.Fatalf("a wrong key: exit %d\n%s", r.code, r.stderr)
	}

	r = runWithKey(t, work, key, "bench", "run", "--profile", "strata", "--api-key-env", "STRATA_TEST_KEY")
	if r.code != 0 {
		t.Fatalf("with the key: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	res, dir := readResults(t, work)
	if v := res.Software.EngineVersion; v == nil || *v != simengine.Version() {
		t.Errorf("engine_version %v, want build_info's version %q", v, simengine.Version())
	}
	// Strata's server counts T1-T4 with their tools as the inner function
	// objects (simengine strataToolWrapTokens), so their counts differ from
	// the bundle's; a count alone of a tool case makes no reason.
	pf := res.Extensions.Preflight
	if pf == nil || !pf.Verifiable || !pf.TemplateAgrees || pf.Agree != 30 || pf.Differ != 4 || len(pf.Fixtures) != 34 ||
		!strings.Contains(pf.Source, "/v1/messages/count_tokens") {
		t.Errorf("preflight %+v", pf)
	}
	var differ []string
	for _, f := range pf.Fixtures {
		if !f.Agree {
			differ = append(differ, f.RequestID)
		}
	}
	if strings.Join(differ, " ") != "sanity-T1 sanity-T2 sanity-T3 sanity-T4" || len(pf.Differing()) != 0 {
		t.Errorf("differing %v, making a reason %+v", differ, pf.Differing())
	}
	for _, why := range res.Extensions.StatusReasons.Nonconforming {
		if why.Kind == contract.PreflightDiffers {
			t.Errorf("a tool count alone made a reason: %+v", why)
		}
	}
	if c := res.Configuration.ContextTokens; c == nil || *c != 32768 {
		t.Errorf("context_tokens %v", c)
	}
	var kv map[string]any
	if json.Unmarshal(res.Configuration.KVCache, &kv) != nil || len(kv) != 1 || kv["--kv"] != "q8_0" {
		got := string(res.Configuration.KVCache)
		t.Errorf("kv_cache %s", got)
	}
	hashed := map[string]bool{}
	for _, f := range res.Model.Files {
		hashed[f.Path] = f.SHA256 != nil
	}
	for _, name := range []string{"model-00001-of-00002.gguf", "model-00002-of-00002.gguf"} {
		if !hashed[name] {
			t.Errorf("%s not hashed: %+v", name, res.Model.Files)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if strings.Contains(string(data), key) {
			t.Errorf("%s holds the API key", e.Name())
		}
	}
	if rep := runIn(t, work, "", "bench", "report", dir); rep.code != 0 {
		t.Errorf("report: exit %d\n%s\n%s", rep.code, rep.stderr, rep.stdout)
	}
}

// TestStrataPropsDown: with /props answering 503 (the engine down), the
// version comes from /v1/status engine, and the context from the config
// file's --max-context.
func TestStrataPropsDown(t *testing.T) {
	t.Parallel()
	const key = "strata-server-key-8f3e2a"
	work := strataProfile(t, key, "--scenario", "down.json")
	mustWrite(t, filepath.Join(work, "down.json"), `{"strata_props_unavailable": true}`)
	r := runWithKey(t, work, key, "bench", "run", "--profile", "strata", "--api-key-env", "STRATA_TEST_KEY")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	res, _ := readResults(t, work)
	if v := res.Software.EngineVersion; v == nil || *v != simengine.Version() {
		t.Errorf("engine_version %v, want /v1/status engine %q", v, simengine.Version())
	}
	if c := res.Configuration.ContextTokens; c == nil || *c != 32768 {
		t.Errorf("context_tokens %v", c)
	}
}
