package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/simengine"
)

func setup(t *testing.T, sc *simengine.Scenario) Input {
	t.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	src, sum, err := prompts.Template(b)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chattemplate.Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	sim := simengine.New(simengine.Config{PromptTPS: 1e6, DecodeTPS: 1e6, Bundle: b, Scenario: sc, Template: string(src), ContextTokens: 32768})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSim(t, sim) })
	engineTemplate := string(src)
	if sc != nil {
		if raw, ok := sc.Props["chat_template"]; ok {
			if err := json.Unmarshal(raw, &engineTemplate); err != nil {
				t.Fatalf("the scenario's chat_template: %v", err)
			}
		}
	}
	return Input{Client: client.New(client.Options{BaseURL: url}), Dialect: dialect.Dialect{Engine: dialect.LlamaCpp, Build: 10470},
		Bundle: b, Template: tmpl, TemplateSHA256: sum, EngineTemplate: engineTemplate}
}

func closeSim(t *testing.T, sim *simengine.Server) {
	t.Helper()
	if err := sim.Close(); err != nil {
		t.Errorf("closing the simulated engine: %v", err)
	}
}

// answer writes b as a test server's answer; a write the client did not
// take fails the test.
func answer(t *testing.T, w io.Writer, b []byte) {
	t.Helper()
	if _, err := w.Write(b); err != nil {
		t.Errorf("the test server's answer: %v", err)
	}
}

func TestAgrees(t *testing.T) {
	t.Parallel()
	in := setup(t, nil)
	var lines []string
	in.Progress = func(done, total int, f contract.PreflightFixture) { lines = append(lines, FixtureLine(f)) }
	r := Check(context.Background(), in)
	if !r.OK() || r.Agree != 34 || r.Differ != 0 || !r.TemplateAgrees || len(lines) != 34 {
		t.Fatalf("%+v", r)
	}
	if lines[0] != "warmup                       agree  rendering agrees; 30 tokens" {
		t.Errorf("line %q", lines[0])
	}
	if s := Summary(r); !strings.Contains(s[1], "34 fixtures: 34 agree, 0 differ") {
		t.Errorf("summary %v", s)
	}
}

// TestTemplateDiffers: an engine that serves another template renders the
// tool cases differently; the first differing byte is named.
func TestTemplateDiffers(t *testing.T) {
	t.Parallel()
	b, _ := prompts.Bundle()
	src, _, _ := prompts.Template(b)
	// The same template with the tool block's heading changed.
	other := strings.Replace(string(src), "# Tools", "# Functions", 1)
	quoted, _ := json.Marshal(other)
	in := setup(t, &simengine.Scenario{Props: map[string]json.RawMessage{"chat_template": quoted}})
	r := Check(context.Background(), in)
	if r.OK() || r.TemplateAgrees || r.Differ != 4 {
		t.Fatalf("agree %d differ %d template %v", r.Agree, r.Differ, r.TemplateAgrees)
	}
	for _, f := range r.Fixtures {
		isTool := strings.HasPrefix(f.RequestID, "sanity-T")
		if isTool == f.Agree || isTool && (f.FirstDifference == nil || !strings.Contains(FixtureLine(f), "rendering differs at byte")) {
			t.Errorf("%s", FixtureLine(f))
		}
	}
	if s := Summary(r); !strings.Contains(s[0], "DIFFERS") {
		t.Errorf("summary %v", s)
	}
}

// TestCountDiffers: a tokenizer that counts a 4K prompt 200 tokens longer
// breaks the 2 % rule, which is said before the run.
func TestCountDiffers(t *testing.T) {
	t.Parallel()
	in := setup(t, &simengine.Scenario{TokenizeSkew: map[string]int{"performance-prompt-4k-r2": 200, "sanity-I1": -1}})
	r := Check(context.Background(), in)
	if r.OK() || r.Differ != 2 {
		t.Fatalf("%+v", Summary(r))
	}
	probs := r.LengthProblems()
	if len(probs) != 1 || !strings.Contains(probs[0], "performance-prompt-4k-r2: the engine counts 4289 tokens, not within 2% of 4096") {
		t.Errorf("length problems %v", probs)
	}
	for _, f := range r.Fixtures {
		if f.RequestID == "sanity-I1" && !strings.Contains(FixtureLine(f), "frozen") {
			t.Errorf("%s", FixtureLine(f))
		}
	}
}

func TestNotVerifiable(t *testing.T) {
	t.Parallel()
	in := setup(t, &simengine.Scenario{NoTemplateEndpoints: true})
	r := Check(context.Background(), in)
	if r.OK() || r.Verifiable || !strings.Contains(r.Reason, "no POST /apply-template (HTTP 404)") || len(r.Fixtures) != 0 {
		t.Fatalf("%+v", r)
	}
}

func TestFitContext(t *testing.T) {
	t.Parallel()
	b, _ := prompts.Bundle()
	c := FitContext(b, 2048)
	// The short sanity cases fit, but not with their 2,048-token cap.
	if len(c.TooLong) != 10 || len(c.MayFill) != 8 || len(Warnings(c)) != 2 {
		t.Errorf("2048: too long %v, may fill %v", c.TooLong, c.MayFill)
	}
	c = FitContext(b, 4200)
	if len(c.TooLong) != 5 || strings.Join(c.MayFill, ",") != "performance-prompt-4k-r1,performance-prompt-4k-r2,performance-prompt-4k-r3,sanity-R1,sanity-R2" {
		t.Errorf("4200: too long %v, may fill %v", c.TooLong, c.MayFill)
	}
	if c = FitContext(b, 20480); len(c.TooLong)+len(c.MayFill) != 0 || len(Warnings(c)) != 0 {
		t.Errorf("20480 fits everything: %+v", c)
	}
}

// TestOtherEngines: vLLM's /v1/chat/completions/render takes the chat
// body and answers its token ids and resolved sampling, and an older vLLM
// without it is counted by /tokenize with the difference said; SGLang's
// /v1/tokenize takes the chat body's messages (an older one refuses them
// and the check is not verifiable); the engines that cannot tokenize chat
// messages are not verifiable, and say why. Each is count only: none shows
// its rendering; /tokenize is off the chat path only for a template that
// reads reasoning_effort (TestOffChatPathFor). SGLang hands the template
// its own dump of the tools (simengine toolshape.go): its tool cases count
// 10 tokens more each, a difference of count alone that Differing leaves
// out.
func TestOtherEngines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		dialect string
		adjust  func(*simengine.Config)
		engine  dialect.Engine
		reason  string // "": verifiable
		source  string
		// toolDelta is what the engine counts more for each tool case.
		toolDelta int
	}{
		{"vllm", simengine.DialectVLLM, nil, dialect.VLLM, "", "POST /v1/chat/completions/render", 0},
		{"vllm without render", simengine.DialectVLLM, func(c *simengine.Config) { c.VLLMNoRender = true }, dialect.VLLM, "", "/tokenize reads no reasoning_effort", 0},
		{"sglang", simengine.DialectSGLang, nil, dialect.SGLang, "", "POST /v1/tokenize", 10},
		{"older sglang", simengine.DialectSGLang, func(c *simengine.Config) { c.SGLangPromptTokenize = true }, dialect.SGLang, "refuses chat messages", "", 0},
		{"ollama", simengine.DialectOllama, nil, dialect.Ollama, "no tokenize endpoint", "", 0},
		{"lmstudio", simengine.DialectLMStudio, nil, dialect.LMStudio, "no tokenize endpoint", "", 0},
		{"tabbyapi", simengine.DialectTabbyAPI, nil, dialect.TabbyAPI, "without the generation prompt", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, _ := prompts.Bundle()
			src, sum, _ := prompts.Template(b)
			tmpl, _ := chattemplate.Parse(string(src))
			cfg := simengine.Config{PromptTPS: 1e6, DecodeTPS: 1e6, Bundle: b, Template: string(src), ContextTokens: 32768, Dialect: c.dialect}
			if c.adjust != nil {
				c.adjust(&cfg)
			}
			sim := simengine.New(cfg)
			url, err := sim.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { closeSim(t, sim) })
			r := Check(context.Background(), Input{Client: client.New(client.Options{BaseURL: url}), Dialect: dialect.Dialect{Engine: c.engine},
				Bundle: b, Template: tmpl, TemplateSHA256: sum})
			if c.reason != "" {
				if r.Verifiable || !strings.Contains(r.Reason, c.reason) {
					t.Fatalf("verifiable %v, reason %q", r.Verifiable, r.Reason)
				}
				return
			}
			if !strings.Contains(r.Source, c.source) || !strings.Contains(r.Source, "compared") {
				t.Fatalf("%+v", Summary(r))
			}
			if c.toolDelta == 0 && (!r.OK() || r.Agree != 34) {
				t.Fatalf("%+v", Summary(r))
			}
			if c.toolDelta != 0 {
				var counted []string
				for _, f := range r.Fixtures {
					if !f.Agree {
						counted = append(counted, fmt.Sprintf("%s %d", f.RequestID, *f.EngineTokens-f.FrozenTokens))
					}
				}
				d := c.toolDelta
				if want := fmt.Sprintf("[sanity-T1 %d sanity-T2 %d sanity-T3 %d sanity-T4 %d]", d, d, d, d); fmt.Sprint(counted) != want ||
					len(r.Differing()) != 0 || !r.CountsAloneDiffer() {
					t.Fatalf("counted otherwise %v, want %s; differing %v; %+v", counted, want, r.Differing(), Summary(r))
				}
			}
			// /tokenize leaves out reasoning_effort, which the Qwen3
			// template does not read: every check here is on the chat path.
			if r.OffChatPath {
				t.Error("off_chat_path with a template that does not read reasoning_effort")
			}
			if l := FixtureLine(r.Fixtures[0]); !strings.Contains(l, "rendering not shown by the engine; 30 tokens") {
				t.Errorf("line %q", l)
			}
		})
	}
}

// TestOllamaRendersOnItsChatRoute: Ollama renders the exact chat body on
// /api/chat with _debug_render_only and counts nothing before the run:
// its rendering alone is compared, and the tool cases, whose
// additionalProperties its reading drops, differ from the bundle's.
func TestOllamaRendersOnItsChatRoute(t *testing.T) {
	t.Parallel()
	b, _ := prompts.Bundle()
	src, sum, _ := prompts.Template(b)
	tmpl, _ := chattemplate.Parse(string(src))
	sim := simengine.New(simengine.Config{PromptTPS: 1e6, DecodeTPS: 1e6, Bundle: b, Template: string(src), ContextTokens: 32768,
		Dialect: simengine.DialectOllama, ModelPath: "tiny:latest"})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSim(t, sim) })
	d := dialect.Dialect{Engine: dialect.Ollama, Version: "0.32.11", API: dialect.APINative, Model: "tiny:latest"}
	r := Check(context.Background(), Input{Client: client.New(client.Options{BaseURL: url}), Dialect: d, Bundle: b, Template: tmpl, TemplateSHA256: sum})
	if !r.Verifiable || !strings.Contains(r.Source, "_debug_render_only") || r.Agree != 30 || r.Differ != 4 {
		t.Fatalf("verifiable %v (%s), agree %d, differ %d; want 30 and 4: %v", r.Verifiable, r.Reason, r.Agree, r.Differ, Summary(r))
	}
	for _, f := range r.Fixtures {
		tool := strings.HasPrefix(f.RequestID, "sanity-T")
		if f.EngineTokens != nil || tool == f.Agree || tool && f.FirstDifference == nil {
			t.Errorf("%s", FixtureLine(f))
		}
	}
	if got, want := FixtureLine(r.Fixtures[0]), "warmup                       agree  rendering agrees; tokens not counted by the engine"; got != want {
		t.Errorf("line\n got %q\nwant %q", got, want)
	}
	if diff := r.Differing(); len(diff) != 4 || diff[0].RequestID != "sanity-T1" {
		t.Errorf("differing %+v", diff)
	}
}

// TestStopsAtTheFirstRouteThatTimesOut: a /tokenize that never answers
// costs one wait, not one per fixture: the check stops there, names the
// route, and leaves the rest unchecked.
func TestStopsAtTheFirstRouteThatTimesOut(t *testing.T) {
	t.Parallel()
	in := setup(t, nil)
	var calls atomic.Int32
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == in.Dialect.Preflight().Tokenize {
			calls.Add(1)
			select { // never answers while the test runs
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		answer(t, w, []byte(`{"prompt":"a rendering"}`)) // /apply-template answers at once
	}))
	defer hang.Close()
	defer close(stop)
	in.Client = client.New(client.Options{BaseURL: hang.URL})
	in.Timeout = 400 * time.Millisecond // one real wait: the route never answers
	r := Check(context.Background(), in)
	if calls.Load() != 1 {
		t.Errorf("%d calls to a /tokenize that never answers, want 1", calls.Load())
	}
	if r.OK() || !strings.Contains(r.Stopped, "the check stopped at warmup") || !strings.Contains(r.Stopped, "33 fixtures were not checked") {
		t.Errorf("stopped %q, fixtures %d, reason %q", r.Stopped, len(r.Fixtures), r.Reason)
	}
}

// TestOverallDeadline: the whole check never takes longer than its
// deadline, however slowly each answer comes.
func TestOverallDeadline(t *testing.T) {
	t.Parallel()
	in := setup(t, nil)
	in.Deadline = time.Nanosecond
	r := Check(context.Background(), in)
	if r.OK() || !strings.Contains(r.Stopped, "it had taken its whole") {
		t.Errorf("stopped %q after %d fixtures", r.Stopped, len(r.Fixtures))
	}
}

// TestRenderSamplingOtherwise: a vLLM whose render resolves a request's
// temperature to another value (a generation config or a server default
// over the request's) makes the fixture differ, with the setting named.
func TestRenderSamplingOtherwise(t *testing.T) {
	t.Parallel()
	b, _ := prompts.Bundle()
	src, sum, _ := prompts.Template(b)
	tmpl, _ := chattemplate.Parse(string(src))
	sim := simengine.New(simengine.Config{PromptTPS: 1e6, DecodeTPS: 1e6, Bundle: b, Template: string(src), ContextTokens: 32768, Dialect: simengine.DialectVLLM}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, r)
		var m map[string]any
		if r.URL.Path == "/v1/chat/completions/render" && json.Unmarshal(rec.Body.Bytes(), &m) == nil {
			m["sampling_params"].(map[string]any)["temperature"] = 0.6
			if err := json.NewEncoder(w).Encode(m); err != nil {
				t.Errorf("the test server's answer: %v", err)
			}
			return
		}
		w.WriteHeader(rec.Code)
		answer(t, w, rec.Body.Bytes())
	}))
	defer srv.Close()
	r := Check(context.Background(), Input{Client: client.New(client.Options{BaseURL: srv.URL}), Dialect: dialect.Dialect{Engine: dialect.VLLM},
		Bundle: b, Template: tmpl, TemplateSHA256: sum})
	if r.OK() || r.Differ != 34 || !strings.Contains(r.Fixtures[0].Problem, "temperature 0.6, sent 1.0") {
		t.Fatalf("%v; first %+v", Summary(r), r.Fixtures[0])
	}
}

// TestTokenCount: a tokenize answer's list is counted whatever its values
// are (ids, or objects with pieces, whose own lists are not counted); null
// is none; anything but a list is refused.
func TestTokenCount(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want int
		err  bool
	}{
		{`{"tokens":[151644,872,198]}`, 3, false},
		{`{"tokens":[{"id":151644,"piece":"<|im_start|>"},{"id":872,"piece":[117,115]}]}`, 2, false},
		{`{"tokens":[]}`, 0, false},
		{`{"tokens":null}`, 0, false},
		{`{}`, 0, false},
		{`{"tokens":[[1,2],"x",{"a":[3]}]}`, 3, false},
		{`{"tokens":7}`, 0, true},
		{`{"tokens":{"id":1}}`, 0, true},
	} {
		var v struct {
			Tokens tokenCount `json:"tokens"`
		}
		err := json.Unmarshal([]byte(c.in), &v)
		if (err != nil) != c.err || err == nil && int(v.Tokens) != c.want {
			t.Errorf("%s: %d, %v; want %d (error %v)", c.in, v.Tokens, err, c.want, c.err)
		}
	}
}

// TestExcerptsAreRedactedBeforeTheyAreCut: the excerpt
// of the engine's rendering around the first difference is cut from the
// redacted rendering, so a token the cut would leave too short for the
// rules to know is gone, and so is one in an error body cut to 200 bytes.
func TestExcerptsAreRedactedBeforeTheyAreCut(t *testing.T) {
	t.Parallel()
	b, _ := prompts.Bundle()
	src, _, _ := prompts.Template(b)
	const token = "ghp_R8m2kQv7Xz4Lp9Tw3Nb6Yc1Hd5Fg0Ja8Se2U"
	other := strings.Replace(string(src), "# Tools", "# "+token+" Tools", 1)
	quoted, _ := json.Marshal(other)
	in := setup(t, &simengine.Scenario{Props: map[string]json.RawMessage{"chat_template": quoted}})
	r := Check(context.Background(), in)
	if r.Differ != 4 {
		t.Fatalf("differ %d, want the 4 tool cases", r.Differ)
	}
	for _, f := range r.Fixtures {
		if f.Agree {
			continue
		}
		if strings.Contains(f.EngineText, "ghp_") || strings.Contains(FixtureLine(f), "R8m2kQv7") || !strings.Contains(f.EngineText, "<secret>") {
			t.Errorf("%s: engine text %q", f.RequestID, f.EngineText)
		}
		if !strings.Contains(f.StrataText, "Tools") {
			t.Errorf("%s: strata text %q", f.RequestID, f.StrataText)
		}
	}

	body := strings.Repeat("x", 186) + " token " + token
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		answer(t, w, []byte(body))
	}))
	defer srv.Close()
	in.Client = client.New(client.Options{BaseURL: srv.URL})
	r = Check(context.Background(), in)
	if len(r.Fixtures) == 0 || strings.Contains(r.Fixtures[0].Problem, "ghp_") || !strings.Contains(r.Fixtures[0].Problem, "HTTP 500") {
		t.Errorf("first fixture %+v", r.Fixtures[:min(1, len(r.Fixtures))])
	}
}

// TestOutcomeWords: a fixture's line and the tally say agree,
// DIFFER or not checked as contract.PreflightFixture.Outcome does (the
// README's words): a fixture whose count could not be had is not
// checked, even where its rendering agrees; one shown to differ differs.
func TestOutcomeWords(t *testing.T) {
	t.Parallel()
	n, at := 30, 7
	for _, c := range []struct {
		name string
		f    contract.PreflightFixture
		word string
	}{
		{"agrees", contract.PreflightFixture{RequestID: "warmup", Agree: true, RenderingAgrees: true, EngineTokens: &n, FrozenTokens: 30}, "agree"},
		{"rendering differs, count failed", contract.PreflightFixture{RequestID: "warmup", FirstDifference: &at, Problem: "HTTP 500", FrozenTokens: 30}, "DIFFER"},
		{"rendering agrees, count failed", contract.PreflightFixture{RequestID: "warmup", RenderingAgrees: true, Problem: "HTTP 500", FrozenTokens: 30}, "not checked"},
		{"route refused", contract.PreflightFixture{RequestID: "warmup", Problem: "POST /tokenize answered HTTP 400", FrozenTokens: 30}, "not checked: POST /tokenize"},
	} {
		if l := FixtureLine(c.f); !strings.HasPrefix(strings.Join(strings.Fields(l)[1:], " "), c.word) {
			t.Errorf("%s: line %q, want the verdict %q", c.name, l, c.word)
		}
	}
	pf := &contract.Preflight{Verifiable: true, Agree: 1, Differ: 2, Fixtures: []contract.PreflightFixture{
		{RequestID: "warmup", Agree: true}, {RequestID: "sanity-I1", FirstDifference: &at}, {RequestID: "sanity-I2", Problem: "HTTP 400"},
	}}
	if s := Summary(pf); s[1] != "3 fixtures: 1 agree, 1 differ, 1 not checked" {
		t.Errorf("tally %q", s[1])
	}
}

// TestOllamaThatRunsTheRenderOnlyRequest: a server that does not take
// _debug_render_only (an Ollama before it, or one that ignores it) runs
// the request and streams its answer: the check stops at the first
// fixture, not verifiable, saying so, instead of running the bundle's
// prompts before the warm-up.
func TestOllamaThatRunsTheRenderOnlyRequest(t *testing.T) {
	t.Parallel()
	b, _ := prompts.Bundle()
	src, sum, _ := prompts.Template(b)
	tmpl, _ := chattemplate.Parse(string(src))
	var chats atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chats.Add(1)
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = io.WriteString(w, `{"model":"tiny:latest","message":{"role":"assistant","content":"Hi"},"done":false}`+"\n"+
			`{"model":"tiny:latest","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":30,"eval_count":1}`+"\n")
	}))
	t.Cleanup(srv.Close)
	d := dialect.Dialect{Engine: dialect.Ollama, Version: "0.32.11", API: dialect.APINative, Model: "tiny:latest"}
	r := Check(context.Background(), Input{Client: client.New(client.Options{BaseURL: srv.URL}), Dialect: d, Bundle: b, Template: tmpl, TemplateSHA256: sum})
	if got := chats.Load(); got != 1 {
		t.Errorf("%d requests to /api/chat, want 1: the check ran the bundle's prompts", got)
	}
	if want := "ran it"; r.Verifiable || !strings.Contains(r.Reason, want) {
		t.Errorf("verifiable %v, reason %q; want not verifiable with %q", r.Verifiable, r.Reason, want)
	}
}

// TestDeadlineDuringARequest: a check whose deadline ends while a route is
// still answering says it had taken its whole deadline, not that the
// route did not answer (each request's own timeout had not passed).
func TestDeadlineDuringARequest(t *testing.T) {
	t.Parallel()
	in := setup(t, nil)
	var calls atomic.Int32
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			select { // answers only after the check's deadline
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		answer(t, w, []byte(`{"prompt":"a rendering"}`))
	}))
	defer slow.Close()
	defer close(stop)
	in.Client = client.New(client.Options{BaseURL: slow.URL})
	in.Deadline = 300 * time.Millisecond // one real wait: the deadline passes during the second request
	r := Check(context.Background(), in)
	if want := "it had taken its whole 300ms"; !strings.Contains(r.Stopped, want) || strings.Contains(r.Stopped, "did not answer") {
		t.Errorf("stopped %q, want it to say %q", r.Stopped, want)
	}
}
