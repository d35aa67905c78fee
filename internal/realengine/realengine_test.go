//go:build linux

package realengine

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/cli"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/corpus"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/runner"
	"github.com/strata-bench/strata/internal/sharedpath"
	"github.com/strata-bench/strata/internal/tokenizer"
	"github.com/strata-bench/strata/internal/version"
)

// repoRoot is the checkout, where the runs start (it holds no Strata
// bundle, so they follow the stand-in's protocol).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

type cliResult struct {
	code           int
	stdout, stderr string
}

// strata runs the CLI in process in dir. stderr, when set, also sees what
// the command writes to its stderr as it writes it.
func strata(t testing.TB, dir string, stderr func(string), args ...string) cliResult {
	t.Helper()
	return strataWith(t, dir, nil, stderr, args...)
}

// strataWith is strata with a protocol table (nil: the one strata ships).
func strataWith(t testing.TB, dir string, table protocol.Table, stderr func(string), args ...string) cliResult {
	t.Helper()
	return strataIn(t, cliEnv(t, dir, table), stderr, args...)
}

// cliEnv is the state the CLI runs in, in dir with a protocol table (nil:
// the one strata ships). The machine's /proc is read (the engine's process
// is found by its port); its probe tools are not run. The test binary has
// no VCS stamp, and the HEAD of the checkout it was built from is no commit
// of it: the install is given the stamp a release or a -buildvcs=true
// build carries.
func cliEnv(t testing.TB, dir string, table protocol.Table) procstate.State {
	return procstate.State{Stdin: strings.NewReader(""), Dir: dir,
		Getenv: func(string) string { return "" }, Environ: os.Environ, CacheDir: t.TempDir(), Root: os.DirFS("/"), Protocols: table,
		Build: &version.Build{Commit: testCommit, ModuleVersion: "(devel)"}}
}

// strataIn runs the CLI in process in env; stderr, when set, also sees
// what the command writes to its stderr as it writes it.
func strataIn(t testing.TB, env procstate.State, stderr func(string), args ...string) cliResult {
	t.Helper()
	var out bytes.Buffer
	errw := &watchWriter{fn: stderr}
	env.Stdout, env.Stderr = &out, errw
	code := cli.Run(context.Background(), args, env)
	return cliResult{code, out.String(), errw.String()}
}

// testCommit is the install's commit in these runs.
const testCommit = "0123456789abcdef0123456789abcdef01234567"

// watchWriter keeps what is written and hands each complete line to fn.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line []byte
	fn   func(string)
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, c := range p {
		if c == '\n' || c == '\r' {
			if w.fn != nil && len(w.line) > 0 {
				w.fn(string(w.line))
			}
			w.line = w.line[:0]
			continue
		}
		w.line = append(w.line, c)
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

type folder struct {
	dir  string
	res  contract.Results
	outs map[string]contract.Output
	ext  map[string]json.RawMessage
}

// extension decodes extensions.<key> into v; an absent one leaves v as it
// is.
func (f folder) extension(t *testing.T, key string, v any) {
	t.Helper()
	if raw, ok := f.ext[key]; ok {
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("extensions.%s: %v", key, err)
		}
	}
}

func readFolder(t testing.TB, root string) folder {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "*-standard-*"))
	if len(dirs) != 1 {
		t.Fatalf("result folders under %s: %v", root, dirs)
	}
	f := folder{dir: dirs[0], outs: map[string]contract.Output{}}
	data, err := os.ReadFile(filepath.Join(f.dir, contract.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &f.res); err != nil {
		t.Fatal(err)
	}
	ext, err := json.Marshal(f.res.Extensions)
	if err == nil {
		err = json.Unmarshal(ext, &f.ext)
	}
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(filepath.Join(f.dir, contract.OutputsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = file.Close() }() // read only
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var o contract.Output
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		f.outs[o.RequestID] = o
	}
	return f
}

func (f folder) report(t testing.TB) {
	t.Helper()
	r := strata(t, t.TempDir(), nil, "bench", "report", "-q", f.dir)
	if r.code != 0 {
		t.Errorf("bench report: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// budgets are the reasoning budgets the run's request bodies carried.
func (f folder) budgets(t testing.TB) map[int]int {
	out := map[int]int{}
	for id, o := range f.outs {
		if string(o.Request) == "null" {
			continue
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(o.Request, &body); err != nil {
			t.Fatalf("%s: request body: %v", id, err)
		}
		var v int
		if err := json.Unmarshal(body["reasoning_budget_tokens"], &v); err != nil {
			t.Fatalf("%s: reasoning_budget_tokens: %v", id, err)
		}
		out[v]++
	}
	return out
}

// checkThinkerRun holds a whole run against the model that thinks to what
// it must show: complete with a commit, the frozen counts, reasoning first
// on every request, an answer, finish stop, and no budget that ends
// thinking.
func checkThinkerRun(t *testing.T, f folder, requests int) {
	t.Helper()
	r := f.res
	if r.Run.Status != contract.StatusComplete || r.Software.StrataCommit == nil {
		t.Errorf("status %s, commit %v; reasons %s", r.Run.Status, r.Software.StrataCommit, f.ext["status_reasons"])
	}
	b, _ := prompts.Bundle()
	if len(r.Requests) != requests {
		t.Fatalf("%d requests, want %d", len(r.Requests), requests)
	}
	for _, q := range r.Requests {
		fx, _ := b.Fixture(q.ID)
		switch {
		case q.Tokens.InputTokens == nil || int(*q.Tokens.InputTokens) != fx.InputTokens:
			t.Errorf("%s: input_tokens %v, frozen %d", q.ID, q.Tokens.InputTokens, fx.InputTokens)
		case q.FirstDeltaKind == nil || *q.FirstDeltaKind != "reasoning":
			t.Errorf("%s: first delta %v, want reasoning", q.ID, q.FirstDeltaKind)
		case q.Timings.FirstAnswerS == nil || q.FinishReason == nil || *q.FinishReason != "stop" || q.Status != contract.Completed:
			t.Errorf("%s: first answer %v, finish %v, status %s", q.ID, q.Timings.FirstAnswerS, q.FinishReason, q.Status)
		}
		if o := f.outs[q.ID]; o.Reasoning == nil || *o.Reasoning != "Checking records" {
			t.Errorf("%s: reasoning %v", q.ID, o.Reasoning)
		}
	}
	if got := f.budgets(t); len(got) != 1 || got[dialect.LlamaNoBudget] != requests {
		t.Errorf("reasoning budgets sent: %v; every request to b10470 carries %d", got, dialect.LlamaNoBudget)
	}
	var thinking struct {
		Without []string `json:"requests_without_reasoning"`
	}
	f.extension(t, "thinking", &thinking)
	if len(thinking.Without) != 0 {
		t.Errorf("requests without reasoning: %v", thinking.Without)
	}
	f.report(t)
}

type span struct {
	id         string
	first, end float64
}

// spans are each concurrency request's first delta and end, on the round's
// clock.
func (f folder) spans(round int) []span {
	var out []span
	for _, q := range f.res.Requests {
		if q.Round == nil || *q.Round != round {
			continue
		}
		off := *f.outs[q.ID].RoundOffsetS
		out = append(out, span{q.ID, off + *q.Timings.TTFTS, off + *q.Timings.TotalS})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].first < out[j].first })
	return out
}

// profileRun: the whole protocol with --profile against the thinker on
// four slots, the server started with --reasoning-budget 0 (which this
// build's per-request value overrides), the optional stage decoded
// together; the engine is stopped after. The folder is written under out.
//
// The server reads prompts in micro-batches of 128 tokens (-ub 128, not
// 512): a micro-batch's attention scores then stay in the CPU's cache,
// which makes the run's 16K prefills faster on one thread.
func profileRun(t *testing.T, out string) {
	port := FreePort(t)
	argv := Command(t, Options{Model: Thinker, Slots: 4, Context: 4 * 20480, Args: []string{"--reasoning-budget", "0", "-ub", "128"}}, port)
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	profile := filepath.Join(t.TempDir(), "thinker.toml")
	if err := os.WriteFile(profile, []byte(fmt.Sprintf("url = \"http://127.0.0.1:%d\"\ncommand = [%s]\nload_timeout = \"60s\"\n", port, strings.Join(quoted, ", "))), 0o644); err != nil {
		t.Fatal(err)
	}
	r := strata(t, repoRoot(), nil, "bench", "run", "--profile", profile, "--optional-concurrency", "--results-dir", out,
		"--background", "none", "--track-notes", "real-engine test")
	if r.code != 0 || !strings.Contains(r.stderr, "starting the thinker engine") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		_ = c.Close() // it only had to connect
		t.Error("the engine the runner started is still serving after the run")
	}
	f := readFolder(t, out)
	checkThinkerRun(t, f, 34)
	mc := f.res.Extensions.ModelCheck
	if f.res.Protocol.ID != protocol.StandInID || mc == nil || mc.State != contract.ModelAdmitted {
		t.Errorf("protocol %s, model check %+v", f.res.Protocol.ID, mc)
	}
	var d struct {
		Check contract.BudgetCheck `json:"budget_check"`
	}
	f.extension(t, "engine_dialect", &d)
	if d.Check.State != "overridden per request" || !strings.Contains(d.Check.Server, "--reasoning-budget 0") {
		t.Errorf("budget check %+v", d.Check)
	}
	if len(f.res.Model.Files) != 1 || f.res.Model.Files[0].SHA256 == nil || *f.res.Model.Files[0].SHA256 != thinkerSHA {
		t.Errorf("model files %+v", f.res.Model.Files)
	}
	var pf struct {
		Agree, Differ int
	}
	f.extension(t, "preflight", &pf)
	if pf.Agree != 34 || pf.Differ != 0 {
		t.Errorf("preflight in the result: %+v", pf)
	}
	parallel := 0
	for round := 1; round <= protocol.ConcurrencyRounds; round++ {
		s := f.spans(round)
		if len(s) == 4 && s[3].first < s[0].end {
			parallel++
		}
	}
	if parallel == 0 {
		t.Errorf("on four slots no round had all four requests streaming at once: %+v", f.spans(1))
	}
	readme, _ := os.ReadFile(filepath.Join(f.dir, contract.ReadmeFile))
	if !strings.Contains(string(readme), "capacity is 4 slots, enough for the 4 requests") {
		t.Error("README misstates the four-slot capacity")
	}
}

// TestSpecProfileHoldsTheModel: a bundle built under the spec's protocol
// ID in a checkout (its corpus SHA injected, since the spec's own bundle is
// not here) makes the spec's profile the run's, and the thinker, a Qwen3
// model, is not that profile's model: the run is nonconforming with both
// models named, and report, in the checkout, agrees. The model is judged
// from its file, not from its answers, so the server has a 2,048-token
// context: the 4K and 16K requests fail at once with the engine's 400 (as
// in the small-context run of TestRealEngineRuns) instead of prefilling 100,000 tokens on CPU;
// the model's reasons are asserted by name.
//
// The server also serves llama-server's built-in chatml template instead
// of the model's (--chat-template chatml), which drops the tools: T1–T4
// render otherwise than the bundle while every other fixture and the long
// prompts' lengths agree, so the 2 % rule alone would leave the run alone;
// the preflight makes it nonconforming, said before the warm-up. One run
// holds both rules: a second real-engine run for the template would cost
// the package another engine start and run.
func TestSpecProfileHoldsTheModel(t *testing.T) {
	t.Parallel()
	checkout := t.TempDir()
	bundle := filepath.Join(checkout, "bench", "prompts", protocol.BundleName)
	tok, tmpl := sharedpath.Path(t, "tokenizer", "qwen3", "tokenizer.json"), sharedpath.Path(t, "tokenizer", "qwen3", "chat_template.jinja")
	specBundle(t, tok, tmpl, bundle)
	src, err := os.ReadFile(tmpl)
	if err == nil {
		err = os.MkdirAll(filepath.Join(checkout, "serve"), 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(checkout, "serve", "chat_template.jinja"), src, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := os.ReadFile(filepath.Join(bundle, "MANIFEST.sha256"))
	sum := sha256.Sum256(manifest)
	table := protocol.Known().WithCorpus(protocol.SpecID, hex.EncodeToString(sum[:]))

	srv := Start(t, Options{Model: Thinker, Context: 2048, Args: []string{"--chat-template", "chatml"}})
	out := t.TempDir()
	r := strataWith(t, checkout, table, nil, "bench", "run", "--url", srv.URL, "--results-dir", out)
	if r.code != 0 || !strings.Contains(r.stderr, "\nprotocol: "+protocol.SpecID) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	f := readFolder(t, out)
	checkChatMLTemplate(t, r.stderr, f)
	mc := *f.res.Extensions.ModelCheck
	all := strings.Join(contract.Texts(f.res.Extensions.StatusReasons.Nonconforming), "\n")
	if f.res.Protocol.ID != protocol.SpecID || f.res.Protocol.Profile != "qwen3.8-flash-next-thinking" || f.res.Run.Status != contract.StatusNonconforming ||
		mc.State != contract.ModelOther || !strings.Contains(all, `"tiny-qwen3-thinker"`) || !strings.Contains(all, "Qwen/Qwen3.8-Flash-Next") {
		t.Errorf("protocol %s/%s, status %s, model check %+v, reasons:\n%s", f.res.Protocol.ID, f.res.Protocol.Profile, f.res.Run.Status, mc, all)
	}
	if rep := strataWith(t, checkout, table, nil, "bench", "report", "-q", f.dir); rep.code != 0 {
		t.Errorf("report in the checkout: exit %d\n%s%s", rep.code, rep.stdout, rep.stderr)
	}
	// Outside the checkout the spec's bundle is not there, and report says
	// where to find it.
	if rep := strataWith(t, t.TempDir(), table, nil, "bench", "report", "-q", f.dir); rep.code == 0 || !strings.Contains(rep.stderr, "run this inside one, or pass --bundle DIR") {
		t.Errorf("report outside the checkout: exit %d\n%s%s", rep.code, rep.stdout, rep.stderr)
	}
}

// thinkerSHA is the model file's SHA-256 from the package's SHA256SUMS.
const thinkerSHA = "0a6781594a1e9724ea0d617bcd2fc7396b7617b512df1ea9cfa21322c6da6ec6"

// urlRunSmallContext: a server the user started in its models folder with
// a relative -m, one slot and -c 2048. The preflight agrees on every
// fixture and warns, before the warm-up, that the 4K and 16K prompts do not
// fit; those requests fail with the engine's 400 and the run is
// nonconforming for it (never retried); strata finds the process by its
// port to hash the model (and reads LLAMA_ARG_* from its environment); the
// optional stage queues behind the one slot; and the folder says what a
// --url run could not see (checkURLEvidence). The folder is written under
// out.
func urlRunSmallContext(t *testing.T, out string) {
	srv := Start(t, Options{Model: Thinker, Context: 2048, RelativeModel: true, Env: []string{"LLAMA_ARG_BATCH=1024", "LLAMA_ARG_UBATCH=256"}})
	chk := strata(t, t.TempDir(), nil, "bench", "check", "--url", srv.URL)
	if chk.code != 0 || !strings.Contains(chk.stdout, "34 fixtures: 34 agree, 0 differ") || !strings.Contains(chk.stdout, "template: the engine's chat template is the bundle's") {
		t.Fatalf("bench check: exit %d\n%s\n%s", chk.code, chk.stdout, chk.stderr)
	}
	r := strata(t, repoRoot(), nil, "bench", "run", "--url", srv.URL, "--optional-concurrency", "--results-dir", out)
	if r.code != 0 || !strings.Contains(r.stderr, "it had answered no request before this run") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	warn := strings.Index(r.stderr, "have prompts longer than the engine's per-slot context of 2048 tokens and will fail")
	if warn < 0 || warn > strings.Index(r.stderr, "warmup") {
		t.Errorf("no context warning before the warm-up:\n%s", r.stderr)
	}
	f := readFolder(t, out)
	for _, q := range f.res.Requests {
		long := strings.Contains(q.CaseID, "k") || strings.HasPrefix(q.CaseID, "R")
		switch {
		case long && (q.Status != contract.Failed || q.Error == nil || !strings.Contains(q.Error.Message, "HTTP 400")):
			t.Errorf("%s: %s %+v", q.ID, q.Status, q.Error)
		case !long && q.Status != contract.Completed:
			t.Errorf("%s: %s", q.ID, q.Status)
		}
	}
	if f.res.Run.Status != contract.StatusNonconforming || !strings.Contains(string(f.ext["status_reasons"]), "HTTP 400") {
		t.Errorf("status %s: %s", f.res.Run.Status, f.ext["status_reasons"])
	}
	if len(f.res.Model.Files) != 1 || f.res.Model.Files[0].SHA256 == nil || *f.res.Model.Files[0].SHA256 != thinkerSHA {
		t.Errorf("the relative model_path was not resolved and hashed: %+v", f.res.Model.Files)
	}
	var hashing struct {
		Resolved string `json:"model_path_resolved"`
	}
	f.extension(t, "model_hashing", &hashing)
	if !strings.Contains(hashing.Resolved, "found by its listening port") {
		t.Errorf("the result does not say how the relative model_path was resolved: %q", hashing.Resolved)
	}
	// One slot: the four requests of a round are served one after another,
	// so each begins streaming after the one before it has streamed; on
	// four slots they begin together. The spans are the client's readings
	// of four streams, each by its own goroutine, which may read its
	// stream's end a little after the engine sent it while another reads
	// the next stream's first token: the order is asserted against the
	// middle of the earlier stream, not its end.
	for round := 1; round <= protocol.ConcurrencyRounds; round++ {
		s := f.spans(round)
		for i := 1; i < len(s); i++ {
			if mid := (s[i-1].first + s[i-1].end) / 2; s[i].first < mid {
				t.Errorf("round %d on one slot: %s began streaming at %.4f s, before %s had streamed half (%.4f to %.4f s)", round, s[i].id, s[i].first, s[i-1].id, s[i-1].first, s[i-1].end)
			}
		}
	}
	readme, _ := os.ReadFile(filepath.Join(f.dir, contract.ReadmeFile))
	if !strings.Contains(string(readme), "capacity is 1 slot(s): with fewer than 4, the requests queue") {
		t.Error("README does not say the requests queued on one slot")
	}
	checkURLEvidence(t, f)
	f.report(t)
}

// checkURLEvidence: a --url run against a server the user started (found
// by its port: its command line and environment are read from /proc) and
// not given its log file says in its README and results.json that there is
// no engine log and why, and how many requests the server had answered,
// and bench submit refuses it naming --engine-log; it records
// context_tokens, server_capacity and the engine's reported defaults as the
// engine typed them, the options it was given (on the command line and as
// LLAMA_ARG_*) typed as llama-server reads them, each object with its
// source; and on one slot only the request of each concurrency round whose
// seed /slots shows is verified. It reads the small-context run's folder:
// a second whole run on CPU for these facts would double the package's
// time.
func checkURLEvidence(t *testing.T, f folder) {
	readme, _ := os.ReadFile(filepath.Join(f.dir, contract.ReadmeFile))
	noLog := "the engine at --url was already serving when the run began, not started by strata, so strata could not keep its output: there is no engine log; name the log file the server writes (llama-server --log-file FILE) with --engine-log FILE"
	for _, want := range []string{"| Engine | already serving, not started by strata; it had answered no request before this run |",
		"| Engine log | **none**: " + noLog + " |", "No engine log: " + noLog + ".",
		"Requests the server had answered before this run: it had answered no request before this run"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README does not say %q:\n%s", want, readme)
		}
	}
	e := f.res.Extensions
	if e.Engine == nil || e.Engine.Log != nil || !strings.Contains(f.res.Missing[contract.PtrEngineLog], "no engine log") {
		t.Errorf("extensions.engine.log %+v, reason %q", e.Engine, f.res.Missing[contract.PtrEngineLog])
	}
	for _, a := range f.res.Artifacts {
		if a.Kind == contract.ArtifactEngineLog {
			t.Errorf("an engine log artifact in a --url run: %+v", a)
		}
	}
	var raw struct {
		Configuration map[string]json.RawMessage `json:"configuration"`
	}
	data, err := os.ReadFile(filepath.Join(f.dir, contract.ResultsFile))
	if err == nil {
		err = json.Unmarshal(data, &raw)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c := raw.Configuration; string(c["context_tokens"]) != "2048" || string(c["server_capacity"]) != "1" {
		t.Errorf("context_tokens %s, server_capacity %s: want the numbers 2048 and 1", c["context_tokens"], c["server_capacity"])
	}
	// -t 1 on the command line, LLAMA_ARG_BATCH and LLAMA_ARG_UBATCH in the
	// environment: numbers, as llama-server reads them.
	var prefill bytes.Buffer
	if err := json.Compact(&prefill, raw.Configuration["prefill"]); err != nil {
		t.Fatalf("configuration.prefill %s: %v", raw.Configuration["prefill"], err)
	}
	if got := prefill.String(); got != `{"--batch-size":1024,"--threads":1,"--ubatch-size":256}` {
		t.Errorf("prefill %s", got)
	}
	ec := e.EngineConfig
	if ec == nil || ec.Given == nil || ec.Given.LlamaArgEnv["LLAMA_ARG_BATCH"] != "1024" || !strings.Contains(ec.Given.CommandLine, "--reasoning-format deepseek") {
		t.Fatalf("engine_config %+v", ec)
	}
	if !strings.HasPrefix(ec.Sources["context_tokens"], "reported by the engine") || !strings.Contains(ec.Sources["prefill"], "LLAMA_ARG_*") {
		t.Errorf("sources %v", ec.Sources)
	}
	var defaults struct {
		NCtx   int64          `json:"n_ctx"`
		Params map[string]any `json:"params"`
	}
	for _, rep := range ec.Reported {
		if rep.Source == "GET /props default_generation_settings" {
			if err := json.Unmarshal(rep.Values, &defaults); err != nil {
				t.Fatalf("%s: %v", rep.Source, err)
			}
		}
	}
	if temp, ok := defaults.Params["temperature"].(float64); defaults.NCtx != 2048 || !ok || temp < 0.79 || temp > 0.81 {
		t.Errorf("the engine's defaults: n_ctx %d, params %v", defaults.NCtx, defaults.Params)
	}
	if _, ok := defaults.Params["ignore_eos"].(bool); !ok {
		t.Errorf("params.ignore_eos %#v: not the engine's boolean", defaults.Params["ignore_eos"])
	}
	// One slot: a round's four requests end together and /slots keeps the
	// last task only; the 22 required requests are each checked alone.
	if sc := e.SettingsCheck; sc == nil || sc.Checked != 34 || sc.Revealed != 22+protocol.ConcurrencyRounds {
		t.Errorf("settings check %+v: want 34 checked, %d revealed", sc, 22+protocol.ConcurrencyRounds)
	}
	sub := strata(t, t.TempDir(), nil, "bench", "submit", f.dir)
	if sub.code != exitcode.Failed || !strings.Contains(sub.stdout, "incomplete: no engine log: "+noLog) || !strings.Contains(sub.stderr, "no engine log (--engine-log)") {
		t.Errorf("bench submit does not refuse the folder without an engine log, naming --engine-log (exit %d):\n%s\n%s", sub.code, sub.stdout, sub.stderr)
	}
}

// engineKilledMidRun: the engine dies after the first performance request;
// the next one fails, the rest are skipped, and the partial result passes
// report. The folder is written under out.
func engineKilledMidRun(t *testing.T, out string) {
	srv := Start(t, Options{Model: Thinker})
	var once sync.Once
	r := strata(t, repoRoot(), func(line string) {
		if strings.Contains(line, "performance-short-r1: completed") {
			once.Do(srv.Kill)
		}
	}, "bench", "run", "--url", srv.URL, "--results-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	f := readFolder(t, out)
	if f.res.Run.Status != contract.StatusPartial {
		t.Errorf("status %s: %s", f.res.Run.Status, f.ext["status_reasons"])
	}
	byID := map[string]contract.Request{}
	for _, q := range f.res.Requests {
		byID[q.ID] = q
	}
	if q := byID["performance-prompt-4k-r1"]; q.Status != contract.Failed {
		t.Errorf("the request after the kill: %s %+v", q.Status, q.Error)
	}
	skipped := 0
	for _, q := range f.res.Requests {
		if q.Status == contract.Skipped {
			skipped++
		}
	}
	if skipped != 19 || !strings.Contains(string(f.ext["status_reasons"]), "19 of the 22 required requests") {
		t.Errorf("%d skipped; reasons %s", skipped, f.ext["status_reasons"])
	}
	f.report(t)
}

// one sends a single fixture's request to srv exactly as a run does and
// returns its record.
func one(t *testing.T, srv *Server, id string) (contract.Request, contract.Output) {
	t.Helper()
	c := client.New(client.Options{BaseURL: srv.URL})
	return sendOne(t, c, dialect.Of(runner.ProbeServer(context.Background(), c).Dialect), id)
}

// TestScriptedModel sends single requests, as a run sends them, to one
// server of the scripted model with a 4,200-token context (one engine start
// for both checks; a start reads the 151,936-token vocabulary):
//   - ToolCall: it answers T1 with one structured call to lookup_record,
//     which passes;
//   - ContextFillsDuringGeneration: without tools it writes until it is
//     stopped, so a 4K retrieval prompt with its 2,048-token cap stops with
//     finish_reason length well below the cap (the context is full); the
//     request is truncated, and the verdict says the context filled, not
//     that the cap was reached.
func TestScriptedModel(t *testing.T) {
	t.Parallel()
	srv := Start(t, Options{Model: Scripted, Context: 4200})
	t.Run("ToolCall", func(t *testing.T) {
		q, o := one(t, srv, "sanity-T1")
		if q.Status != contract.Completed || *q.FinishReason != "tool_calls" || q.Evaluation == nil || !q.Evaluation.Passed {
			t.Fatalf("T1: %s %v %+v; calls %+v", q.Status, q.FinishReason, q.Evaluation, o.ToolCalls)
		}
		if len(o.ToolCalls) != 1 || o.ToolCalls[0].Name != "lookup_record" || *q.FirstDeltaKind != "reasoning" {
			t.Errorf("calls %+v, first delta %v", o.ToolCalls, q.FirstDeltaKind)
		}
	})
	t.Run("ContextFillsDuringGeneration", func(t *testing.T) {
		q, _ := one(t, srv, "sanity-R1")
		if q.Status != contract.Truncated || q.Tokens.OutputTokens == nil || *q.Tokens.OutputTokens >= 2048 {
			t.Fatalf("R1: %s, output tokens %v", q.Status, q.Tokens.OutputTokens)
		}
		if !strings.Contains(q.Evaluation.Reason, "the context window filled first") || strings.Contains(q.Evaluation.Reason, "reached the output cap") {
			t.Errorf("verdict reason %q", q.Evaluation.Reason)
		}
	})
}

func TestThinkerSHA(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(Model(t, Thinker))
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	if hex.EncodeToString(s[:]) != thinkerSHA {
		t.Fatal("the thinker model is not the one the package's SHA256SUMS names")
	}
}

// checkChatMLTemplate: a run against llama-server --chat-template chatml
// warned before the warm-up that it will be nonconforming, its preflight
// shows exactly T1–T4 rendered otherwise, and the result names it.
func checkChatMLTemplate(t *testing.T, stderr string, f folder) {
	t.Helper()
	warn := strings.Index(stderr, "warning: the run will be nonconforming: the preflight showed the engine's chat template or tokenizer is not the profile's")
	if warn < 0 || warn > strings.Index(stderr, "== warmup") {
		t.Errorf("no template warning before the warm-up:\n%s", stderr)
	}
	var differ []string
	for _, d := range f.res.Extensions.Preflight.Differing() {
		differ = append(differ, d.RequestID)
	}
	if got, want := strings.Join(differ, " "), "sanity-T1 sanity-T2 sanity-T3 sanity-T4"; got != want {
		t.Errorf("the fixtures chatml renders otherwise: %s, want %s", got, want)
	}
	var reason string
	for _, why := range f.res.Extensions.StatusReasons.Nonconforming {
		if why.Kind == contract.PreflightDiffers {
			reason = why.Text
		}
	}
	if !strings.Contains(reason, "4 of the 34 fixtures it checked became another prompt than the bundle's (first sanity-T1: its rendering differs") {
		t.Errorf("preflight reason %q", reason)
	}
}

// specBundle builds the spec's bundle from the Qwen3 tokenizer and
// template into dir, in process: bench corpus build refuses a bundle for
// the spec's protocol under another corpus than the spec pins, which is
// what this stand-in checkout holds (its SHA is injected into the table).
func specBundle(t *testing.T, tokPath, tmplPath, dir string) {
	t.Helper()
	ctx := t.Context()
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chattemplate.Load(ctx, tmplPath)
	if err != nil {
		t.Fatal(err)
	}
	in := corpus.Inputs{ProtocolID: protocol.SpecID, BundleName: protocol.BundleName, Tokenizer: tok, Template: tmpl}
	if in.TemplateSource, err = corpus.SourceOf(ctx, tmplPath); err != nil {
		t.Fatal(err)
	}
	files, err := tokenizer.SourceFiles(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		src, err := corpus.SourceOf(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		in.TokenizerSources = append(in.TokenizerSources, src)
	}
	b, err := corpus.Build(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Write(dir); err != nil {
		t.Fatal(err)
	}
}
