package dialect

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// ollamaEvidence is what a real Ollama 0.32.11 serving one model answers
// strata's probes (GET /api/version, GET /v1/models: openai/openai.go
// ToListCompletion), as captured from ../shared/engines/ollama.
func ollamaEvidence(models ...string) contract.ServerEvidence {
	var data []map[string]any
	for _, m := range models {
		data = append(data, map[string]any{"id": m, "object": "model", "created": 1765004520, "owned_by": "library"})
	}
	list, _ := json.Marshal(map[string]any{"object": "list", "data": data})
	return contract.ServerEvidence{OllamaVersion: json.RawMessage(`{"version":"0.32.11"}`), Models: list}
}

// TestOllamaSpeaksItsOwnAPI: an Ollama is spoken to in its own POST
// /api/chat, answered as NDJSON, naming the one model it lists; one that
// lists several cannot be run, and says why before the warm-up. A folder
// written before (OpenAI-compatible, no model) is still admitted by the
// same evidence; another engine's is not.
func TestOllamaSpeaksItsOwnAPI(t *testing.T) {
	t.Parallel()
	d := Identify(ollamaEvidence("tiny-qwen3-thinker:latest"))
	if d.Engine != Ollama || d.API != APINative || d.Model != "tiny-qwen3-thinker:latest" || d.CannotRun() != "" {
		t.Fatalf("identified %+v (%s)", d, d.CannotRun())
	}
	if w := d.Wire(); w != (Wire{Route: "/api/chat", NDJSON: true}) {
		t.Errorf("wire %+v", w)
	}
	if w := (Dialect{Engine: LlamaCpp}).Wire(); w != (Wire{Route: "/v1/chat/completions"}) {
		t.Errorf("llama.cpp's wire %+v", w)
	}
	if route, body := d.ShowRequest(); route != "/api/show" || string(body) != `{"model":"tiny-qwen3-thinker:latest"}` {
		t.Errorf("show %s %s", route, body)
	}
	two := Identify(ollamaEvidence("a:latest", "b:latest"))
	if two.Model != "" || !strings.Contains(two.CannotRun(), "does not list exactly one model") {
		t.Errorf("two models: %+v, %q", two, two.CannotRun())
	}
	if route, _ := two.ShowRequest(); route != "" {
		t.Errorf("a show request without a model: %s", route)
	}
	before := Dialect{Engine: Ollama, Version: "0.32.11", IdentifiedBy: d.IdentifiedBy}
	if !d.Admits(d) || !d.Admits(before) {
		t.Error("the evidence does not admit its own dialect or the one written before strata spoke /api/chat")
	}
	if other := (Dialect{Engine: VLLM, Version: "0.32.11", IdentifiedBy: d.IdentifiedBy}); d.Admits(other) {
		t.Error("Ollama's evidence admits a vLLM record")
	}
	if llama := Identify(contract.ServerEvidence{Props: json.RawMessage(`{"build_info":"b10470-34af94cd9"}`)}); llama.Admits(Dialect{Engine: LlamaCpp, Build: 10470}) {
		t.Error("llama.cpp's evidence admits a record that is not its dialect")
	}
}

// TestOllamaBody: the exact /api/chat body: the model, the messages, the
// stream, think "max" (Ollama's own word for xhigh), every sampling
// setting, the seed and the cap as options under Ollama's names, and the
// tools of a tool case; nothing /api/chat does not read (tool_choice,
// chat_template_kwargs, reasoning_effort, max_tokens, stream_options, a
// budget).
func TestOllamaBody(t *testing.T) {
	t.Parallel()
	d := Dialect{Engine: Ollama, API: APINative, Model: "tiny-qwen3-thinker:latest"}
	b, err := d.Body(tool())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"model": "tiny-qwen3-thinker:latest", "messages": [{"role":"user","content":"[case sanity-T1]\nUse lookup_record to look up record A-17."}], "stream": true, "think": "max", ` +
		`"options": {"temperature": 1.0, "top_p": 0.95, "top_k": 20, "min_p": 0.0, "presence_penalty": 0.0, "repeat_penalty": 1.0, "seed": 1, "num_predict": 2048}, ` +
		`"tools": [{"type":"function","function":{"name":"lookup_record"}}]}`
	if string(b) != want {
		t.Errorf("body\n got %s\nwant %s", b, want)
	}
	f := tool()
	f.Tools, f.ToolChoice = []byte("null"), nil
	if b, _ := d.Body(f); strings.Contains(string(b), "tools") || !json.Valid(b) {
		t.Errorf("no tools outside T1-T4: %s", b)
	}
	n := 0
	for form, err := range d.BodyForms(tool()) {
		if err != nil || string(form) != want {
			t.Errorf("body form %s, %v", form, err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d body forms, want 1", n)
	}
	if _, err := (Dialect{Engine: Ollama, API: APINative, Model: "m\xff"}).Body(tool()); err == nil {
		t.Error("a model name that is no JSON string once quoted was sent")
	}
	if names := d.SettingNames(); names["repetition_penalty"] != "options.repeat_penalty" || names["reasoning_effort"] != "think" {
		t.Errorf("setting names %v", names)
	}
	// The body still carries the tool cases' additionalProperties: it is
	// the workload, and Ollama's reading drops it, which its source says
	// and its rendering shows.
	if nt, how := d.NotTaken(), d.ToolsReshaped(); len(nt) != 0 || !strings.Contains(how, "additionalProperties") || !strings.Contains(how, "api/types.go @96fb6d2fa") {
		t.Errorf("not taken on /api/chat: %q; tools reshaped: %q", nt, how)
	}
}

// TestOllamaThink: reasoning_effort said as think, by Ollama's own
// mapping (openai/openai.go @e0e1d3c7d thinkFromReasoningEffort).
func TestOllamaThink(t *testing.T) {
	t.Parallel()
	for effort, want := range map[string]string{"xhigh": `"max"`, "ultra": `"max"`, "max": `"max"`, "high": `"high"`, "medium": `"medium"`,
		"low": `"low"`, "minimal": `"low"`, "none": "false", "extreme": ""} {
		got, err := ollamaThink(effort)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("%s: %s, %v; want %s", effort, got, err, want)
		}
	}
}

// TestReadShow: Ollama's /api/show answer gives the template (the GGUF's
// Jinja on the native chat path) and, from its modelfile's FROM line, the
// blob the engine runs; a model Ollama renders with its built-in renderer
// has no template strata can record.
func TestReadShow(t *testing.T) {
	t.Parallel()
	const blob = "/tmp/olres.2btA/models/blobs/sha256-e9b0583ba9bbb4583a2ccf8b2a57b3930d9f61c3ed2e2d8380d1ede79d135391"
	show := func(extra string) json.RawMessage {
		return json.RawMessage(`{"modelfile":"# Modelfile generated by \"ollama show\"\n# FROM tiny-qwen3-thinker:latest\n\nFROM ` + blob +
			`\nTEMPLATE {{ .Prompt }}\n","template":"{%- if tools %}jinja{%- endif %}"` + extra + `,"capabilities":["tools","thinking","completion"]}`)
	}
	s := ReadShow(show(""))
	if s.Template != "{%- if tools %}jinja{%- endif %}" || s.NoTemplate != "" || s.ModelPath != blob || !strings.Contains(s.ModelPathNote, "rewrites") {
		t.Errorf("read %+v", s)
	}
	r := ReadShow(show(`,"renderer":"qwen3.8"`))
	if r.Template != "" || !strings.Contains(r.NoTemplate, `built-in renderer "qwen3.8"`) || r.ModelPath != blob {
		t.Errorf("with a renderer: %+v", r)
	}
	if n := ReadShow(json.RawMessage(`{"modelfile":"FROM tiny-qwen3-thinker:latest\n"}`)); n.ModelPath != "" || n.NoTemplate == "" {
		t.Errorf("no blob path, no template: %+v", n)
	}
	if bad := ReadShow(json.RawMessage(`[]`)); bad.NoTemplate == "" {
		t.Errorf("not an answer: %+v", bad)
	}
}

// TestOllamaFacts: on /api/chat nothing of the profile is left out, the
// counts and durations are the done line's, the resolved options are not
// shown, and the limitations say what the API cannot tell.
func TestOllamaFacts(t *testing.T) {
	t.Parallel()
	d := Dialect{Engine: Ollama, Version: "0.32.11", API: APINative, Model: "m"}
	f := d.Timers().Fields()
	if d.Timers() != TimersOllama || d.NoTimers() != "" || f.Counts == nil || f.Durations == nil || f.Durations.Scale != 1e-9 ||
		f.Counts.Input != "prompt_eval_count" || f.Durations.DecodeCount != "eval_count" || !IsTimerObject(f.Durations.Object) {
		t.Errorf("timers %q: %+v", d.Timers(), f)
	}
	if pf := d.Preflight(); d.HiddenSettings() == "" || pf.Unverifiable != "" || pf.ApplyTemplate != "/api/chat" || pf.Tokenize != "" || !strings.Contains(pf.Source, "_debug_render_only") {
		t.Errorf("hidden %q, preflight %+v", d.HiddenSettings(), d.Preflight())
	}
	ctx, slots := d.Unrevealed()
	if !strings.Contains(ctx, "/api/ps") || !strings.Contains(slots, "OLLAMA_NUM_PARALLEL") {
		t.Errorf("unrevealed %q, %q", ctx, slots)
	}
	if ctx, slots := (Dialect{Engine: LlamaCpp}).Unrevealed(); ctx != "" || slots != "" {
		t.Errorf("llama.cpp's unrevealed %q, %q", ctx, slots)
	}
	all := strings.Join(d.Limitations(), "\n")
	for _, want := range []string{"POST /api/chat", "preserve_thinking cannot be sent", "where the run keeps Ollama's log (--engine-log), read_tokens is the prompt eval line", "without it the three are null", "OLLAMA_NUM_PARALLEL", "no reasoning budget"} {
		if !strings.Contains(all, want) {
			t.Errorf("limitations lack %q:\n%s", want, all)
		}
	}
}

// TestSourcesNameTheRouteRead: the template and the model file are read
// from Ollama's POST /api/show when the dialect asks it (ShowRequest), and
// from /props otherwise, and the words that say where they came from name
// that route.
func TestSourcesNameTheRouteRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                string
		d                   Dialect
		template, modelPath string
	}{
		{"llama.cpp", Dialect{Engine: LlamaCpp}, "/props chat_template", "the server's model_path (/props)"},
		{"ollama native", Identify(ollamaEvidence("q:latest")), "POST /api/show template", "the FROM line of the server's POST /api/show modelfile"},
		{"ollama without a model", Dialect{Engine: Ollama, API: APINative}, "/props chat_template", "the server's model_path (/props)"},
	} {
		if got := c.d.TemplateRoute(); got != c.template {
			t.Errorf("%s: template route %q, want %q", c.name, got, c.template)
		}
		if got := c.d.ModelPathSource(); got != c.modelPath {
			t.Errorf("%s: model path source %q, want %q", c.name, got, c.modelPath)
		}
	}
}
