package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/simengine"
)

// engineServer serves the simulator as one engine on 127.0.0.1 and counts
// the chat requests it was sent.
func engineServer(t *testing.T, adjust func(*simengine.Config)) (string, *atomic.Int64) {
	t.Helper()
	sim := simHandler(t, adjust)
	var chats atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" || r.URL.Path == "/api/chat" {
			// Ollama's preflight renders on /api/chat and runs nothing.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				t.Errorf("reading a chat body: %v", err)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if !bytes.Contains(body, []byte(`"_debug_render_only": true`)) {
				chats.Add(1)
			}
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &chats
}

// simHandler is the simulated engine engineServer serves, adjust
// changing its configuration first.
func simHandler(t *testing.T, adjust func(*simengine.Config)) http.Handler {
	t.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _, _ := prompts.Template(b)
	cfg := simengine.Config{PromptTPS: 5e6, DecodeTPS: 2e5, ReasoningTokens: 20, Accuracy: 1, Slots: 1, ContextTokens: 32768,
		ModelPath: "m.gguf", Bundle: b, Template: string(tmpl)}
	adjust(&cfg)
	return simengine.New(cfg).Handler()
}

// TestOllamaWithoutHealth: Ollama serves no /health (server/routes.go
// @fb30760 GenerateRoutes; GET / answers "Ollama is running", readiness and
// version are GET /api/version): a run against an Ollama-shaped server is
// not stopped as "not an inference engine", and the engine is Ollama.
func TestOllamaWithoutHealth(t *testing.T) {
	t.Parallel()
	url, chats := engineServer(t, func(c *simengine.Config) { c.Dialect = simengine.DialectOllama })
	if r, err := http.Get(url + "/health"); err != nil || r.StatusCode != 404 {
		t.Fatalf("the Ollama-shaped server answers /health: %v %v", r, err)
	}
	work := t.TempDir()
	r := runIn(t, work, "", "bench", "run", "--url", url)
	if r.code != 0 || strings.Contains(r.stderr, "not an inference engine") || !strings.Contains(r.stderr, "engine: ollama 0.32.15 (GET /api/version answers") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	res, _ := readResults(t, work)
	if ed := res.Extensions.EngineDialect; ed == nil || ed.Dialect.Engine != string(dialect.Ollama) || ed.Dialect.Version != "0.32.15" {
		t.Errorf("dialect %+v", res.Extensions.EngineDialect)
	}
	if chats.Load() != 22 {
		t.Errorf("%d chat requests, want 22", chats.Load())
	}
	// Its preflight renders every fixture on /api/chat, and the tool
	// cases' rendering, without their additionalProperties, is what makes
	// the run nonconforming (beside the simulator it is).
	var workload []string
	for _, why := range res.Extensions.StatusReasons.Nonconforming {
		if why.Kind == contract.PreflightDiffers || why.Kind == contract.SettingNotTaken {
			workload = append(workload, why.Text)
		}
	}
	if len(workload) != 1 || !strings.HasPrefix(workload[0], "the preflight showed the engine renders 4 of the 34 fixtures it checked, the tool cases, otherwise than the bundle (first sanity-T1: ") {
		t.Errorf("workload reasons %q", workload)
	}
}

// TestOllamaRefusesThinkMaxBeforeTheWarmup: strata speaks Ollama's own
// /api/chat, where the profile's xhigh is think "max" (Ollama's own
// mapping: openai/openai.go @e0e1d3c7d thinkFromReasoningEffort), which
// Ollama takes from v0.22.0 (c2ebb4d57, #15787) and answers HTTP 400
// "invalid think value" before it. Identified at 0.21.2 the run stops
// before the warm-up, naming the engine, its version, the setting and
// 0.22.0, and sends no request; at 0.32.11, whose OpenAI-compatible
// endpoint refuses xhigh in its Go module build, it runs every request
// on /api/chat.
func TestOllamaRefusesThinkMaxBeforeTheWarmup(t *testing.T) {
	t.Parallel()
	url, chats := engineServer(t, func(c *simengine.Config) { c.Dialect, c.OllamaVersion = simengine.DialectOllama, "0.21.2" })
	work := t.TempDir()
	r := runIn(t, work, "", "bench", "run", "--url", url)
	if r.code != exitcode.Failed {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"before the warm-up", "ollama 0.21.2", "reasoning_effort xhigh", "the first version that takes it is 0.22.0", "invalid think value"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := chats.Load(); n != 0 {
		t.Errorf("%d chat requests were sent", n)
	}
	if _, err := os.Stat(filepath.Join(work, "bench-results")); !os.IsNotExist(err) {
		t.Errorf("a result folder was written for a run that never started")
	}
	url, chats = engineServer(t, func(c *simengine.Config) { c.Dialect, c.OllamaVersion = simengine.DialectOllama, "0.32.11" })
	if r := runIn(t, t.TempDir(), "", "bench", "run", "--url", url); r.code != 0 || chats.Load() != 22 {
		t.Errorf("0.32.11: exit %d, %d requests\n%s", r.code, chats.Load(), r.stderr)
	}
}

// TestOllamaWithTwoModels: /api/chat must name the model to run, and an
// Ollama listing two cannot say which is to be measured: the run stops
// before the warm-up saying so, and sends no request.
func TestOllamaWithTwoModels(t *testing.T) {
	t.Parallel()
	url, chats := engineServer(t, func(c *simengine.Config) { c.Dialect = simengine.DialectOllama })
	two := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"a:latest","object":"model","created":1,"owned_by":"library"},{"id":"b:latest","object":"model","created":1,"owned_by":"library"}]}`) // the run's reading is under test, not this proxy's writes
			return
		}
		proxy, _ := http.NewRequestWithContext(r.Context(), r.Method, url+r.URL.Path, r.Body)
		resp, err := http.DefaultClient.Do(proxy)
		if err != nil {
			w.WriteHeader(502)
			return
		}
		defer func() { _ = resp.Body.Close() }() // read to its end below
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body) // as above
	}))
	t.Cleanup(two.Close)
	r := runIn(t, t.TempDir(), "", "bench", "run", "--url", two.URL)
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "before the warm-up: ollama 0.32.15 does not list exactly one model") || chats.Load() != 0 {
		t.Errorf("exit %d, %d chat requests\n%s", r.code, chats.Load(), r.stderr)
	}
}

// TestVLLMRefusesXHighAtTheWarmup: a vLLM whose reasoning_effort Literal
// lacks xhigh answers 400 "Input should be 'low', 'medium' or 'high'"; its
// version cannot tell, so the warm-up's answer does: the run stops there,
// one request sent, with the engine, its version, the setting and what is
// known of the first version that takes it, and the folder records it.
func TestVLLMRefusesXHighAtTheWarmup(t *testing.T) {
	t.Parallel()
	url, chats := engineServer(t, func(c *simengine.Config) { c.Dialect, c.VLLMRejectXHigh = simengine.DialectVLLM, true })
	work := t.TempDir()
	r := runIn(t, work, "", "bench", "run", "--url", url)
	if r.code != exitcode.Failed || chats.Load() != 1 {
		t.Fatalf("exit %d, %d chat requests\n%s", r.code, chats.Load(), r.stderr)
	}
	for _, want := range []string{"stopped after the warm-up", "vllm 0.11.2", "reasoning_effort xhigh", "first version that takes it is not known to strata", "Input should be 'low', 'medium' or 'high'"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	res, _ := readResults(t, work)
	if ab := res.Extensions.Aborted; !strings.Contains(ab, "the warm-up was refused: vllm 0.11.2 does not take the profile's reasoning_effort xhigh") {
		t.Errorf("aborted %q", ab)
	}
}

// TestAnotherTemplateIsNonconforming: an engine serving another chat
// template than the profile's (here the simulator's minimal one, which, as
// llama-server --chat-template chatml, drops the tools and the thinking
// switch) renders the fixtures otherwise; the preflight shows it, the run
// warns before the warm-up that it will be nonconforming, goes on, and is
// nonconforming for it; report agrees.
func TestAnotherTemplateIsNonconforming(t *testing.T) {
	t.Parallel()
	url, _ := engineServer(t, func(c *simengine.Config) { c.Template = "" })
	work := t.TempDir()
	r := runIn(t, work, "", "bench", "run", "--url", url)
	warn := strings.Index(r.stderr, "warning: the run will be nonconforming: the preflight showed the engine's chat template or tokenizer is not the profile's")
	if r.code != 0 || warn < 0 || warn > strings.Index(r.stderr, "== warmup") {
		t.Fatalf("exit %d; no warning before the warm-up:\n%s", r.code, r.stderr)
	}
	res, dir := readResults(t, work)
	var found *contract.StatusReason
	for _, why := range res.Extensions.StatusReasons.Nonconforming {
		if why.Kind == contract.PreflightDiffers {
			found = &why
		}
	}
	if res.Run.Status != contract.StatusNonconforming || found == nil || !strings.Contains(found.Text, "34 of the 34 fixtures it checked became another prompt") {
		t.Errorf("status %s, reasons %+v", res.Run.Status, res.Extensions.StatusReasons.Nonconforming)
	}
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Errorf("report: exit %d\n%s", rep.code, rep.stdout)
	}
}

// TestSGLangToolCountsShowNothing: SGLang hands the template its own dump
// of the tools (serving_chat.py @004c82e0: Tool.model_dump(), with
// "strict" and "defer_loading"), so its /v1/tokenize counts T1-T4 ten
// tokens more than the bundle froze while every other fixture agrees. The
// run says so as what it is, a count of the tool cases alone: no warning
// before the warm-up, no nonconforming reason, and the README's preflight
// line names the four and why they show nothing of the workload.
func TestSGLangToolCountsShowNothing(t *testing.T) {
	t.Parallel()
	url, _ := engineServer(t, func(c *simengine.Config) { c.Dialect = simengine.DialectSGLang })
	work := t.TempDir()
	r := runIn(t, work, "", "bench", "run", "--url", url)
	if r.code != 0 || strings.Contains(r.stderr, "chat template or tokenizer is not the profile's") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	res, dir := readResults(t, work)
	pf := res.Extensions.Preflight
	if pf == nil || pf.Agree != 30 || pf.Differ != 4 || len(pf.Differing()) != 0 || !pf.CountsAloneDiffer() {
		t.Fatalf("preflight %+v", pf)
	}
	for _, why := range res.Extensions.StatusReasons.Nonconforming {
		if why.Kind == contract.PreflightDiffers {
			t.Errorf("a count of the tool cases alone made a reason: %s", why.Text)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(dir, contract.ReadmeFile))
	if !strings.Contains(string(readme), "4 of 34 fixtures count otherwise (sanity-T1, sanity-T2, sanity-T3, sanity-T4), tool cases only") {
		t.Errorf("README preflight line:\n%s", readme)
	}
}

// TestOllamaNamesTheRoutesItRead: an Ollama run reads the template and the
// model file from POST /api/show, so no sentence of its folder names
// /props, llama-server's route, as their source (here a template other
// than the bundle's and a model file that cannot be hashed); the same
// llama.cpp run names /props.
func TestOllamaNamesTheRoutesItRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		dialect  string
		props    bool
		template string
	}{
		{"ollama", simengine.DialectOllama, false, "POST /api/show template"},
		{"llama.cpp", simengine.DialectLlamaCpp, true, "/props chat_template"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url, _ := engineServer(t, func(cfg *simengine.Config) {
				cfg.Dialect, cfg.ModelPath = c.dialect, "/nonexistent/m-00003-of-00002.gguf"
				cfg.Template += "{# not the bundle's #}"
			})
			work := t.TempDir()
			if r := runIn(t, work, "", "bench", "run", "--url", url); r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			res, dir := readResults(t, work)
			if pf := res.Extensions.Preflight; pf == nil || !strings.Contains(pf.TemplateNote, c.template) {
				t.Errorf("the preflight's template note does not name %q (preflight %v)", c.template, pf != nil)
				if pf != nil {
					t.Logf("template note %q", pf.TemplateNote)
				}
			}
			var folder []byte
			for _, f := range []string{"results.json", "README.md"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				folder = append(folder, b...)
			}
			if !bytes.Contains(folder, []byte("refused")) {
				t.Errorf("the folder does not say the model file was refused")
			}
			if got := bytes.Contains(folder, []byte("/props")); got != c.props {
				i := bytes.Index(folder, []byte("/props"))
				t.Errorf("the folder names /props: %v, want %v (%q)", got, c.props, folder[max(0, i-200):max(0, i+50)])
			}
		})
	}
}
