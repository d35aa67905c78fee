package dialect

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/record"
)

func TestIdentify(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		props, status string
		engine        Engine
		build         int
		sim           bool
	}{
		{"llama.cpp b10470", `{"build_info":"b10470-34af94cd9"}`, "", LlamaCpp, 10470, false},
		{"llama.cpp b9928", `{"build_info":"b9928-81ff7ab"}`, "", LlamaCpp, 9928, false},
		{"simulator as llama.cpp", `{"build_info":"b9981-0123456","strata_simulator":true}`, "", LlamaCpp, 9981, true},
		// Strata's shapes (serve/server.py @452325a9 Handler._props,
		// Service.v1_status): build_info "Strata <version>", /v1/status
		// service "strata" with engine; the invented {"version"} is no
		// longer Strata's.
		{"strata by build_info", `{"build_info":"Strata 0.1.41"}`, "", StrataServer, 0, false},
		{"strata by /v1/status while /props is down", "", `{"service":"strata","engine":"0.1.41"}`, StrataServer, 0, false},
		{"strata's service wins over a llama build", `{"build_info":"b10470-34af94cd9"}`, `{"service":"strata","engine":null}`, StrataServer, 0, false},
		{"a /v1/status that is not Strata's", `{"build_info":"b10470-34af94cd9"}`, `{"version":"0.2.1"}`, LlamaCpp, 10470, false},
		{"strata's mock engine names no version", "", `{"service":"strata","engine":null}`, StrataServer, 0, false},
		{"not llama.cpp's form", `{"build_info":"v1.2.3"}`, "", Unknown, 0, false},
		{"nothing", "", "", Unknown, 0, false},
		{"status that is not an object", `{"build_info":"b10470-34af94cd9"}`, `[1]`, LlamaCpp, 10470, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Identify(contract.ServerEvidence{Props: raw(c.props), Status: raw(c.status)})
			if d.Engine != c.engine || d.Build != c.build || d.Simulated != c.sim || d.IdentifiedBy == "" {
				t.Errorf("got %+v", d)
			}
		})
	}
}

func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func tool() *fixtures.Fixture {
	choice := "auto"
	return &fixtures.Fixture{RequestID: "sanity-T1", Seed: 1, MaxTokens: 2048,
		Messages:   []fixtures.Message{{Role: "user", Content: "[case sanity-T1]\nUse lookup_record to look up record A-17."}},
		Tools:      []byte(`[{"type": "function", "function": {"name": "lookup_record"}}]`),
		ToolChoice: &choice}
}

// TestBody: the exact bytes sent, per dialect. Strata's server and an
// unknown engine get the spec's words; llama.cpp gets its own name for the
// penalty and, from b9982, a budget no cap reaches instead of 0 (which ends
// thinking there).
// TestRecordKeepsEveryField: a dialect recorded into the result's type
// and read back is the same dialect, and the two types have the same
// fields (one added to a side alone fails here).
func TestRecordKeepsEveryField(t *testing.T) {
	t.Parallel()
	d := Dialect{Engine: LlamaCpp, Version: "b10470-34af94cd9", Build: 10470, IdentifiedBy: "/props build_info", Simulated: true, API: APINative, Model: "m:latest"}
	if got := Of(d.Record()); got != d {
		t.Errorf("Of(Record()) = %+v, want %+v", got, d)
	}
	own, recorded := reflect.TypeFor[Dialect](), reflect.TypeFor[contract.Dialect]()
	if own.NumField() != recorded.NumField() {
		t.Fatalf("dialect.Dialect has %d fields, contract.Dialect %d", own.NumField(), recorded.NumField())
	}
	for i := range own.NumField() {
		if got, want := recorded.Field(i).Name, own.Field(i).Name; got != want {
			t.Errorf("field %d: contract.Dialect has %s, dialect.Dialect %s", i, got, want)
		}
	}
}

func TestBody(t *testing.T) {
	t.Parallel()
	const head = `{"messages": [{"role":"user","content":"[case sanity-T1]\nUse lookup_record to look up record A-17."}], "stream": true, "stream_options": {"include_usage": true}, "temperature": 1.0, "top_p": 0.95, "top_k": 20, "min_p": 0.0, "presence_penalty": 0.0, "repetition_penalty": 1.0, `
	const tail = `"tools": [{"type":"function","function":{"name":"lookup_record"}}], "tool_choice": "auto"}`
	const mid = `"seed": 1, "max_tokens": 2048, "chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true}, "reasoning_effort": "xhigh", `
	// llama.cpp hands every chat_template_kwargs key to the template, but
	// reads the top-level reasoning_effort only from b10434 (only "none"
	// from b10117): the effort goes in both.
	const llamaMid = `"seed": 1, "max_tokens": 2048, "chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true, "reasoning_effort": "xhigh"}, "reasoning_effort": "xhigh", `
	for _, c := range []struct {
		d    Dialect
		want string
	}{
		{Dialect{Engine: StrataServer}, head + mid + `"reasoning_budget_tokens": 0, ` + tail},
		{Dialect{Engine: Unknown}, head + mid + `"reasoning_budget_tokens": 0, ` + tail},
		{Dialect{Engine: LlamaCpp, Build: 10470}, head + `"repeat_penalty": 1.0, ` + llamaMid + `"reasoning_budget_tokens": 2147483647, ` + tail},
		{Dialect{Engine: LlamaCpp, Build: 9982}, head + `"repeat_penalty": 1.0, ` + llamaMid + `"reasoning_budget_tokens": 2147483647, ` + tail},
		{Dialect{Engine: LlamaCpp, Build: 9928}, head + `"repeat_penalty": 1.0, ` + llamaMid + `"reasoning_budget_tokens": 2147483647, ` + tail},
		{Dialect{Engine: LlamaCpp, Version: "b0-unknown"}, head + `"repeat_penalty": 1.0, ` + llamaMid + `"reasoning_budget_tokens": 2147483647, ` + tail},
		{Dialect{Engine: IKLlamaCpp}, head + `"repeat_penalty": 1.0, ` + llamaMid + tail},
		{Dialect{Engine: TabbyAPI}, head + `"max_tokens": 2048, "chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true}, "reasoning_effort": "xhigh", "reasoning_budget_tokens": 2147483647, ` + tail},
	} {
		b, err := c.d.Body(tool())
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s body\n got %s\nwant %s", c.d.Name(), b, c.want)
		}
	}
	f := tool()
	f.Tools, f.ToolChoice = []byte("null"), nil
	b, _ := Dialect{Engine: LlamaCpp, Build: 10470}.Body(f)
	if strings.Contains(string(b), "tools") || strings.Contains(string(b), "system") {
		t.Errorf("no tools and no system prompt outside T1-T4: %s", b)
	}
}

// TestBodyIsJSON: every body is JSON without a check of the whole (the
// parts are JSON by construction); the one string from the bundle quoted
// by strata, tool_choice, is refused where quoting would not make it a JSON
// string, and kept byte for byte where it does.
func TestBodyIsJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		choice string
		ok     bool
	}{
		{"auto", true}, {"required", true}, {"café \"q\" <&>", true},
		{"a\x01b", false}, {"\xff", false}, {"tab\there", true},
	} {
		f := tool()
		f.ToolChoice = &c.choice
		for _, e := range []Engine{StrataServer, LlamaCpp, TabbyAPI} {
			b, err := Dialect{Engine: e, Build: 10470}.Body(f)
			switch {
			case c.ok && (err != nil || !json.Valid(b)):
				t.Errorf("%s, tool_choice %q: %v\n%s", e, c.choice, err, b)
			case c.ok:
				var got struct {
					ToolChoice string `json:"tool_choice"`
				}
				if err := json.Unmarshal(b, &got); err != nil || got.ToolChoice != c.choice {
					t.Errorf("%s: tool_choice %q sent as %q (%v)", e, c.choice, got.ToolChoice, err)
				}
			case err == nil || !strings.Contains(err.Error(), "tool_choice"):
				t.Errorf("%s, tool_choice %q: built %s (err %v)", e, c.choice, b, err)
			}
		}
	}
}

func TestCheckBudget(t *testing.T) {
	t.Parallel()
	old := Dialect{Engine: LlamaCpp, Build: 9928}
	cur := Dialect{Engine: LlamaCpp, Build: 10470}
	profile := func(args []string, env ...string) record.EngineView {
		return record.EngineView{Args: args, Env: env, Where: "the profile's command line and environment"}
	}
	for _, c := range []struct {
		name  string
		d     Dialect
		view  record.EngineView
		state string
		nonc  bool
		says  string
	}{
		{"old build, budget in the profile", old, profile([]string{"-m", "x.gguf", "--reasoning-budget", "16"}), "limited", true, "--reasoning-budget 16"},
		{"old build, budget as key=value", old, profile([]string{"--reasoning-budget=0"}), "limited", true, "--reasoning-budget=0"},
		{"old build, budget in the environment", old, profile([]string{"-m", "x"}, "LLAMA_ARG_THINK_BUDGET=32"), "limited", true, "LLAMA_ARG_THINK_BUDGET=32"},
		{"old build, the argument wins over the environment", old, profile([]string{"--reasoning-budget", "-1"}, "LLAMA_ARG_THINK_BUDGET=32"), "unlimited", false, "unrestricted"},
		{"old build, no budget set", old, profile([]string{"-m", "x"}), "unlimited", false, "default"},
		{"old build, command line not visible", old, record.EngineView{}, "not verifiable", false, "cannot see"},
		{"old build, environment not readable", old, record.EngineView{Args: []string{"-m", "x"}, EnvUnreadable: "permission denied", Where: "/proc"}, "not verifiable", false, "permission denied"},
		{"current build overrides the server", cur, profile([]string{"--reasoning-budget", "0"}), "overridden per request", false, "overridden"},
		{"current build, nothing visible", cur, record.EngineView{}, "overridden per request", false, "2147483647"},
		{"strata server", Dialect{Engine: StrataServer}, record.EngineView{}, "sent per request", false, "no custom budget"},
		{"unknown engine", Dialect{Engine: Unknown}, profile(nil), "not verifiable", false, "not identified"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.d.CheckBudget(c.view)
			if got.State != c.state || (got.Nonconforming != "") != c.nonc || !strings.Contains(got.Detail, c.says) {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func TestLimitationsFollowTheBuild(t *testing.T) {
	t.Parallel()
	cur := strings.Join(Dialect{Engine: LlamaCpp, Build: 10470}.Limitations(), " ")
	old := strings.Join(Dialect{Engine: LlamaCpp, Build: 9928}.Limitations(), " ")
	if !strings.Contains(cur, "reads reasoning_budget_tokens per request") || strings.Contains(cur, "ignores reasoning_effort") {
		t.Errorf("b10470: %s", cur)
	}
	if !strings.Contains(old, "ignores reasoning_budget_tokens and the top-level reasoning_effort") || !strings.Contains(old, "inside chat_template_kwargs") {
		t.Errorf("b9928: %s", old)
	}
	// The top-level reasoning_effort: only "none" acts from b10117 to
	// b10433 (tools/server/server-common.cpp @27209a598), the value reaches
	// the template from b10434 (7e4c0a968).
	if mid := strings.Join(Dialect{Engine: LlamaCpp, Build: 10200}.Limitations(), " "); !strings.Contains(mid, `only when it is "none"`) || strings.Contains(mid, "From b10434") {
		t.Errorf("b10200: %s", mid)
	}
	if !strings.Contains(cur, "From b10434 the top-level reasoning_effort reaches the chat template") {
		t.Errorf("b10470 effort: %s", cur)
	}
	if unk := strings.Join(Dialect{Engine: LlamaCpp, Version: "b0-unknown"}.Limitations(), " "); !strings.Contains(unk, "build number of this llama.cpp is unknown") {
		t.Errorf("b0-unknown: %s", unk)
	}
	sim := Dialect{Engine: LlamaCpp, Build: 10470, Simulated: true}.Limitations()
	if !strings.Contains(sim[len(sim)-1], "simulated") {
		t.Errorf("simulated: %v", sim)
	}
}

// TestIdentifyEngines: each engine by what it serves, in the shapes of its
// own source (cited in engines.go).
func TestIdentifyEngines(t *testing.T) {
	t.Parallel()
	models := func(owner string) json.RawMessage {
		return json.RawMessage(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"` + owner + `"}]}`)
	}
	for _, c := range []struct {
		name    string
		ev      contract.ServerEvidence
		engine  Engine
		version string
	}{
		{"vLLM by owned_by", contract.ServerEvidence{Models: models("vllm"), Version: raw(`{"version":"0.11.2"}`)}, VLLM, "0.11.2"},
		{"vLLM by a string /version alone", contract.ServerEvidence{Version: raw(`{"version":"0.11.2"}`)}, VLLM, "0.11.2"},
		{"ik_llama.cpp by header", contract.ServerEvidence{ServerHeader: "ik_llama.cpp", Props: raw(`{"model_name":"m"}`), Models: models("llamacpp")}, IKLlamaCpp, ""},
		{"ik_llama.cpp by /version", contract.ServerEvidence{Version: raw(`{"version":4,"features":{"sql":false}}`), Props: raw(`{"n_ctx":4096}`)}, IKLlamaCpp, "4"},
		{"ik_llama.cpp before a build_info", contract.ServerEvidence{Version: raw(`{"version":4,"features":{}}`), Props: raw(`{"build_info":"b10470-34af94cd9"}`)}, IKLlamaCpp, "4"},
		{"SGLang by owned_by", contract.ServerEvidence{Models: models("sglang")}, SGLang, ""},
		{"SGLang by /get_server_info", contract.ServerEvidence{ServerInfo: raw(`{"version":"0.5.6","tp_size":1}`)}, SGLang, "0.5.6"},
		{"Ollama", contract.ServerEvidence{OllamaVersion: raw(`{"version":"0.12.6"}`), Models: models("library")}, Ollama, "0.12.6"},
		{"TabbyAPI", contract.ServerEvidence{Models: models("tabbyAPI")}, TabbyAPI, ""},
		// endpoints/core/router.py @e632af4 l.72–98: served without the API
		// key that /v1/models needs (auth is on by default).
		{"TabbyAPI by /.well-known/serviceinfo", contract.ServerEvidence{ServiceInfo: raw(`{"version":0.1,"software":{"name":"TabbyAPI"}}`)}, TabbyAPI, ""},
		{"SGLang by /server_info", contract.ServerEvidence{ServerInfo: raw(`{"version":"0.5.9","tp_size":1}`)}, SGLang, "0.5.9"},
		// vllm/entrypoints/serve/dev/server_info @09cb327 (dev mode only).
		{"vLLM's dev-mode /server_info is not SGLang's", contract.ServerEvidence{ServerInfo: raw(`{"vllm_config":"x","vllm_env":{}}`), Version: raw(`{"version":"0.11.2"}`)}, VLLM, "0.11.2"},
		// cmake/build-info.cmake: no git gives b0-unknown.
		{"llama.cpp built without git", contract.ServerEvidence{Props: raw(`{"build_info":"b0-unknown"}`)}, LlamaCpp, "b0-unknown"},
		{"LM Studio", contract.ServerEvidence{LMStudioModels: raw(`{"object":"list","data":[]}`), Models: models("organization_owner")}, LMStudio, ""},
		{"llama.cpp's owned_by is not enough", contract.ServerEvidence{Models: models("llamacpp")}, Unknown, ""},
		{"nothing at all", contract.ServerEvidence{}, Unknown, ""},
		// Spoofs and overlaps: a route only one engine serves wins over
		// owned_by, which Ollama fills with a model's namespace.
		{"Ollama with a model under vllm/", contract.ServerEvidence{OllamaVersion: raw(`{"version":"0.12.6"}`), Models: models("vllm")}, Ollama, "0.12.6"},
		{"SGLang whose /v1/models did not answer", contract.ServerEvidence{ServerInfo: raw(`{"version":"0.5.6"}`), Version: raw(`{"version":"0.5.6"}`)}, SGLang, "0.5.6"},
		{"a /v1/status of null is not Strata's server", contract.ServerEvidence{Status: raw(`null`), Props: raw(`{"build_info":"b10470-34af94cd9"}`)}, LlamaCpp, "b10470-34af94cd9"},
		{"a /version that is an array", contract.ServerEvidence{Version: raw(`[1]`)}, Unknown, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Identify(c.ev)
			if d.Engine != c.engine || d.Version != c.version || d.IdentifiedBy == "" {
				t.Errorf("got %+v, want %s %q", d, c.engine, c.version)
			}
		})
	}
	if d := Identify(contract.ServerEvidence{Models: models("vllm"), SimulatorHeader: "strata-simulator 1"}); !d.Simulated {
		t.Error("the simulator's header does not mark the dialect simulated")
	}
}

// TestBodyPerEngine: a setting an engine cannot take is not sent and is
// named; the engine's own field names are used; no engine but llama.cpp,
// Strata's and an unknown one gets a budget field.
func TestBodyPerEngine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		engine        Engine
		has, hasNot   []string
		notTaken      []string
		timers        Timers
		budgetDefault bool
	}{
		{VLLM, []string{`"top_k": 20`, `"min_p": 0.0`, `"repetition_penalty": 1.0`, `"chat_template_kwargs"`, `"reasoning_effort": "xhigh"`, `"seed": 1`}, []string{"reasoning_budget_tokens", "repeat_penalty", "thinking_token_budget"}, nil, TimersVLLM, true},
		{SGLang, []string{`"top_k": 20`, `"repetition_penalty": 1.0`, `"chat_template_kwargs"`}, []string{"reasoning_budget_tokens"}, nil, TimersNone, true},
		{Ollama, []string{`"temperature": 1.0`, `"seed": 1`, `"reasoning_effort": "xhigh"`}, []string{`"top_k"`, `"min_p"`, "repetition_penalty", "chat_template_kwargs", "reasoning_budget_tokens"}, []string{"top_k", "min_p", "repetition_penalty", "chat_template_kwargs"}, TimersNone, true},
		{IKLlamaCpp, []string{`"repetition_penalty": 1.0, "repeat_penalty": 1.0`, `"reasoning_effort": "xhigh"}`}, []string{"reasoning_budget_tokens"}, nil, TimersIKLlamaCpp, false},
		{LMStudio, []string{`"repeat_penalty": 1.0`, `"top_k": 20`}, []string{"repetition_penalty", `"min_p"`, "chat_template_kwargs", "reasoning_effort"}, []string{"min_p", "chat_template_kwargs", "reasoning_effort"}, TimersNone, true},
	} {
		t.Run(string(c.engine), func(t *testing.T) {
			d := Dialect{Engine: c.engine}
			b, err := d.Body(tool())
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(b) {
				t.Fatalf("invalid JSON: %s", b)
			}
			for _, want := range c.has {
				if !strings.Contains(string(b), want) {
					t.Errorf("body lacks %s: %s", want, b)
				}
			}
			for _, bad := range c.hasNot {
				if strings.Contains(string(b), bad) {
					t.Errorf("body has %s: %s", bad, b)
				}
			}
			got := d.NotTaken()
			if len(got) != len(c.notTaken) {
				t.Fatalf("not taken %q, want %q", got, c.notTaken)
			}
			for i, n := range c.notTaken {
				if !strings.HasPrefix(got[i], n+": ") || !strings.Contains(got[i], "@") && c.engine != LMStudio && c.engine != TabbyAPI {
					t.Errorf("not taken %q: want %s with its source", got[i], n)
				}
			}
			if d.Timers() != c.timers || (c.timers == TimersNone) != (d.NoTimers() != "") {
				t.Errorf("timers %q (%q), want %q", d.Timers(), d.NoTimers(), c.timers)
			}
			bud := d.ReasoningBudget()
			if bud.ByDefault != c.budgetDefault || bud.Field != nil || !bud.Known || strings.Contains(bud.Meaning, "only the native think takes one") {
				t.Errorf("budget %+v", bud)
			}
			if c.budgetDefault {
				if chk := d.CheckBudget(record.EngineView{}); chk.State != "none by default" || chk.Nonconforming != "" {
					t.Errorf("budget check %+v", chk)
				}
			}
			if len(d.Limitations()) < 2 {
				t.Errorf("limitations %q", d.Limitations())
			}
		})
	}
}

// TestStreamFieldsOfEveryEngine: the client reads reasoning and timers
// from the fields IsReasoningField and IsTimerObject accept; every
// engine's own field in the table is one of them, and nothing else is.
func TestStreamFieldsOfEveryEngine(t *testing.T) {
	t.Parallel()
	reasoning := map[string]bool{}
	for _, e := range []Engine{LlamaCpp, StrataServer, Unknown, VLLM, SGLang, Ollama, IKLlamaCpp, LMStudio, TabbyAPI} {
		f := factsOf(e)
		if f.reasoning != "" {
			reasoning[f.reasoning] = true
			if !IsReasoningField(f.reasoning) {
				t.Errorf("%s streams reasoning as %q, which the client does not read", e, f.reasoning)
			}
		}
		switch tf := f.timers.Fields(); {
		case tf.Timings && !IsTimerObject("timings"):
			t.Errorf("%s: the client does not keep llama-server's timings", e)
		case tf.Durations != nil && !tf.Durations.InUsage && !IsTimerObject(tf.Durations.Object):
			t.Errorf("%s keeps its timers in %q, which the client does not keep", e, tf.Durations.Object)
		case !tf.Timings && tf.Durations == nil && !tf.None:
			t.Errorf("%s: timers %q name no fields", e, f.timers)
		}
	}
	if !reasoning["reasoning_content"] || !reasoning["reasoning"] {
		t.Errorf("the engines' reasoning fields are %v", reasoning)
	}
	for _, name := range []string{"content", "role", "tool_calls", "thinking", "usage"} {
		if IsReasoningField(name) || IsTimerObject(name) {
			t.Errorf("%q is read as reasoning or timers", name)
		}
	}
}

// TestPreflightOfEveryEngine: llama-server's two routes where the engine
// has them, vLLM's count-only /tokenize, and a reason for each engine
// whose rendering and count cannot be had.
func TestPreflightOfEveryEngine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		engine       Engine
		countOnly    bool
		unverifiable string
	}{
		{LlamaCpp, false, ""}, {Unknown, false, ""}, {IKLlamaCpp, false, ""},
		{VLLM, true, ""}, {StrataServer, true, ""}, {SGLang, true, ""},
		{Ollama, false, "no tokenize endpoint"}, {LMStudio, false, "no tokenize endpoint"},
		{TabbyAPI, false, "without the generation prompt"},
	} {
		p := Dialect{Engine: c.engine}.Preflight()
		own := map[Engine]string{StrataServer: "/v1/messages/count_tokens", VLLM: "/v1/chat/completions/render", SGLang: "/v1/tokenize"}
		tokenize := orElse(own[c.engine], "/tokenize")
		switch {
		case c.engine == StrataServer && (p.CountField != "input_tokens" || p.CountBody == nil):
			t.Errorf("%s counts by %+v", c.engine, p)
		case c.engine == VLLM && (p.CountField != "token_ids" || p.Sampling != "sampling_params" || p.Fallback == nil || p.Fallback.Tokenize != "/tokenize" ||
			!strings.Contains(p.Fallback.Source, "reads no reasoning_effort")):
			t.Errorf("vLLM preflight %+v", p)
		case c.engine == SGLang && p.Refused == "":
			t.Errorf("SGLang preflight says nothing of an older build: %+v", p)
		case p.CountOnly != c.countOnly || p.Tokenize != tokenize || p.Source == "":
			t.Errorf("%s: %+v", c.engine, p)
		case !c.countOnly && p.ApplyTemplate != "/apply-template":
			t.Errorf("%s renders on %q", c.engine, p.ApplyTemplate)
		case (c.unverifiable == "") != (p.Unverifiable == "") || !strings.Contains(p.Unverifiable, c.unverifiable):
			t.Errorf("%s: unverifiable %q, want %q", c.engine, p.Unverifiable, c.unverifiable)
		}
	}
}

func orElse(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// TestOffChatPathFor: vLLM's /tokenize fallback leaves out reasoning_effort,
// so it is off the chat path for a template that reads it and on it for
// one that does not (Qwen3's); its render route is on the chat path.
func TestOffChatPathFor(t *testing.T) {
	t.Parallel()
	vllm := Dialect{Engine: VLLM}.Preflight()
	reads := "{%- if reasoning_effort is defined %}<effort>{{ reasoning_effort }}</effort>{%- endif %}"
	plain := "{%- for message in messages %}{{ message.content }}{%- endfor %}"
	for _, c := range []struct {
		name string
		pf   Preflight
		src  string
		want bool
	}{
		{"/tokenize, a template reading the effort", *vllm.Fallback, reads, true},
		{"/tokenize, Qwen3's kind of template", *vllm.Fallback, plain, false},
		{"render", vllm, reads, false},
		{"llama.cpp", Dialect{Engine: LlamaCpp}.Preflight(), reads, false},
	} {
		if got := c.pf.OffChatPathFor(c.src); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
