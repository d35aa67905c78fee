package dialect

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/record"
)

// TestAskReady: readiness is /health, and for an engine that serves none
// (Ollama: server/routes.go @fb30760 registers no /health) its own route;
// a 404 everywhere is still a 404.
func TestAskReady(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		routes map[string]int
		status int
		route  string
	}{
		{"llama-server's /health", map[string]int{"/health": 200}, 200, "/health"},
		{"loading", map[string]int{"/health": 503}, 503, "/health"},
		{"Ollama: no /health, /api/version answers", map[string]int{"/health": 404, "/api/version": 200}, 200, "/api/version"},
		{"something else on the port", map[string]int{"/health": 404}, 404, "/health"},
		{"a key is wanted", map[string]int{"/health": 401}, 401, "/health"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, route, err := AskReady(func(path string) (int, error) {
				if s, ok := c.routes[path]; ok {
					return s, nil
				}
				return 404, nil
			})
			if err != nil || status != c.status || route != c.route {
				t.Errorf("got %d %s %v, want %d %s", status, route, err, c.status, c.route)
			}
		})
	}
	if _, _, err := AskReady(func(string) (int, error) { return 0, errors.New("refused") }); err == nil {
		t.Error("a server that does not answer is ready")
	}
}

// TestOllamaRefusesXHighByVersion: on the OpenAI-compatible endpoint
// reasoning_effort "xhigh" is taken from v0.32.12 (e0e1d3c7d, the first
// release whose every build has 01d04d50f, #17594) and refused (or
// dropped) before v0.32.11; v0.32.11 names two commits (the Go module's
// 96fb6d2fa refuses it, the moved tag's 39df91c98 takes it), so it cannot
// tell, nor can a version that names no release ("0.0.0", a source
// build). On Ollama's own /api/chat it is think "max", taken from
// v0.22.0 (c2ebb4d57, #15787).
func TestOllamaRefusesXHighByVersion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		api     API
		version string
		refused string // "" : taken or unknown
		first   string
	}{
		{APIOpenAI, "0.32.10", `invalid reasoning value`, "0.32.12"},
		{APIOpenAI, "0.22.0", `invalid reasoning value`, "0.32.12"},
		{APIOpenAI, "0.12.6", `invalid reasoning value`, "0.32.12"},
		{APIOpenAI, "0.12.0", `invalid think value`, "0.32.12"},
		{APIOpenAI, "0.11.4", "drops it", "0.32.12"},
		{APIOpenAI, "0.32.11", "", ""}, {APIOpenAI, "0.32.12", "", ""}, {APIOpenAI, "0.32.15", "", ""}, {APIOpenAI, "0.33.0-rc2", "", ""},
		{APIOpenAI, "1.0.0", "", ""}, {APIOpenAI, "0.0.0", "", ""}, {APIOpenAI, "", "", ""}, {APIOpenAI, "strata-simulator-1", "", ""},
		{APINative, "0.21.2", `invalid think value`, "0.22.0"},
		{APINative, "0.11.4", `invalid think value`, "0.22.0"},
		{APINative, "0.22.0", "", ""}, {APINative, "0.32.10", "", ""}, {APINative, "0.32.11", "", ""}, {APINative, "0.0.0", "", ""},
	} {
		ref := Dialect{Engine: Ollama, Version: c.version, API: c.api}.Refuses()
		switch {
		case c.refused == "" && ref != nil:
			t.Errorf("%s %s refused: %s", c.api, c.version, ref.Text())
		case c.refused != "" && ref == nil:
			t.Errorf("%s %s: no refusal", c.api, c.version)
		case ref != nil:
			text := ref.Text()
			for _, want := range []string{"ollama " + c.version, "reasoning_effort xhigh", "the first version that takes it is " + c.first, c.refused, "GET /api/version"} {
				if !strings.Contains(text, want) {
					t.Errorf("%s %s: %q lacks %q", c.api, c.version, text, want)
				}
			}
		}
	}
	for _, e := range []Engine{LlamaCpp, VLLM, SGLang, TabbyAPI, Unknown} {
		if ref := (Dialect{Engine: e, Version: "0.1.0"}).Refuses(); ref != nil {
			t.Errorf("%s refused by version: %s", e, ref.Text())
		}
	}
}

// TestRefusalNeverContradictsItself: whatever version refuses the effort
// at the warm-up, the refusal never names as the first version that takes
// it one the engine's own version has reached (never "ollama 0.32.11
// does not take … xhigh …; the first version that takes it is 0.32.11").
func TestRefusalNeverContradictsItself(t *testing.T) {
	t.Parallel()
	first := regexp.MustCompile(`first version that takes it is (\d+\.\d+\.\d+)`)
	answers := map[API]string{
		APIOpenAI: `{"error":{"message":"invalid reasoning value: 'xhigh' (must be \"high\", \"medium\", \"low\", \"max\", or \"none\")","type":"invalid_request_error","param":null,"code":null}}`,
		APINative: `{"error":"invalid think value: \"max\" (must be \"high\", \"medium\", \"low\", true, or false)"}`,
	}
	for _, api := range []API{APIOpenAI, APINative} {
		for _, v := range []string{"0.0.0", "0.21.2", "0.22.0", "0.32.10", "0.32.11", "0.32.12", "0.33.0", "1.2.3"} {
			ref := Dialect{Engine: Ollama, Version: v, API: api}.RefusedIn(400, answers[api])
			if ref == nil {
				t.Fatalf("%q %s: the answer is no refusal", api, v)
			}
			text := ref.Text()
			m := first.FindStringSubmatch(text)
			own, ownOK := parseRelease(v)
			switch {
			case m == nil && !strings.Contains(text, "yet this build names version "+v+" and refuses it"):
				t.Errorf("%q %s names no first version: %s", api, v, text)
			case m != nil && ownOK:
				if at, _ := parseRelease(m[1]); !releaseBefore(own, at) {
					t.Errorf("%q %s: %s", api, v, text)
				}
			}
		}
	}
}

// TestRefusedInTheWarmupAnswer: the engines' own 400 bodies for a
// reasoning_effort they do not take (vLLM's and SGLang's pydantic
// literal_error, Ollama's "invalid reasoning value") name the setting;
// another failure is not a refusal.
func TestRefusedInTheWarmupAnswer(t *testing.T) {
	t.Parallel()
	vllm := `{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'reasoning_effort'), 'msg': \"Input should be 'low', 'medium' or 'high'\", 'input': 'xhigh'}","type":"Bad Request","param":"body.reasoning_effort","code":400}`
	sglang := `{"object":"error","message":"1 validation error for ChatCompletionRequest\nreasoning_effort\n  Input should be 'low', 'medium' or 'high' [type=literal_error, input_value='xhigh', input_type=str]","type":"Bad Request","param":null,"code":400}`
	ollama := `{"error":{"message":"invalid reasoning value: 'xhigh' (must be \"high\", \"medium\", \"low\", \"max\", or \"none\")","type":"invalid_request_error","param":null,"code":null}}`
	for _, c := range []struct {
		name   string
		d      Dialect
		status int
		body   string
		first  string // "": no refusal
	}{
		{"vLLM", Dialect{Engine: VLLM, Version: "0.10.1"}, 400, vllm, "not known to strata"},
		{"SGLang", Dialect{Engine: SGLang, Version: "0.4.9"}, 400, sglang, "not known to strata"},
		{"Ollama of a source build", Dialect{Engine: Ollama, Version: "0.0.0"}, 400, ollama, "0.32.12"},
		{"the Go module's Ollama 0.32.11", Dialect{Engine: Ollama, Version: "0.32.11"}, 400, ollama, "the first version that takes it is 0.32.12"},
		{"a 500", Dialect{Engine: VLLM}, 500, vllm, ""},
		{"another 400", Dialect{Engine: VLLM}, 400, `{"error":{"message":"max_tokens is too large"}}`, ""},
		{"a context overflow naming nothing", Dialect{Engine: SGLang}, 400, `{"message":"too long"}`, ""},
	} {
		ref := c.d.RefusedIn(c.status, c.body)
		if (ref == nil) != (c.first == "") {
			t.Errorf("%s: refusal %+v", c.name, ref)
			continue
		}
		if ref != nil {
			text := ref.Text()
			for _, want := range []string{c.d.Name(), "reasoning_effort xhigh", c.first, "answer to the warm-up, HTTP 400"} {
				if !strings.Contains(text, want) {
					t.Errorf("%s: %q lacks %q", c.name, text, want)
				}
			}
		}
	}
}

// TestTabbyAPIForcedOverrides: a forced sampler override of a profile
// setting replaces every request's value (common/sampling.py @e632af4
// apply_forced_sampler_overrides), so it is named as not taken; a forced
// value equal to the profile's, a falsy one (never applied, l.478) and one
// not forced are not.
func TestTabbyAPIForcedOverrides(t *testing.T) {
	t.Parallel()
	ov := json.RawMessage(`{"selected_preset":"p","overrides":{
		"temperature":{"override":0.6,"force":true,"additive":false},
		"top_p":{"override":0.95,"force":true},
		"top_k":{"override":0,"force":true},
		"min_p":{"override":0.1,"force":false},
		"repetition_penalty":{"override":1.1,"force":true}},"presets":[]}`)
	got := Dialect{Engine: TabbyAPI}.NotTakenIn(contract.ServerEvidence{SamplingOverrides: ov})
	joined := strings.Join(got, "\n")
	if len(got) != 3 || !strings.HasPrefix(got[0], "seed: ") || !strings.Contains(joined, "temperature: TabbyAPI's /v1/sampling/overrides forces temperature to 0.6") ||
		!strings.Contains(joined, "repetition_penalty: ") || strings.Contains(joined, "top_p") || strings.Contains(joined, "top_k") || strings.Contains(joined, "min_p") {
		t.Errorf("not taken:\n%s", joined)
	}
	if got := (Dialect{Engine: VLLM}).NotTakenIn(contract.ServerEvidence{SamplingOverrides: ov}); len(got) != 0 {
		t.Errorf("vLLM read TabbyAPI's overrides: %q", got)
	}
}

// TestBudgetRows: TabbyAPI from f1f2c85 reads reasoning_budget_tokens per
// request and defers to a server budget it shows nowhere when absent, so
// it is sent the unreachable value; ik_llama.cpp cannot override a server
// --reasoning-budget and reads no LLAMA_ARG_THINK_BUDGET; Ollama has no
// budget at all.
func TestBudgetRows(t *testing.T) {
	t.Parallel()
	tb := Dialect{Engine: TabbyAPI}.ReasoningBudget()
	if tb.Field == nil || *tb.Field != "reasoning_budget_tokens" || tb.Value == nil || *tb.Value != LlamaNoBudget || !tb.PerRequest || tb.ByDefault {
		t.Errorf("TabbyAPI budget %+v", tb)
	}
	if chk := (Dialect{Engine: TabbyAPI}).CheckBudget(record.EngineView{}); chk.State != "overridden per request" || !strings.Contains(chk.Detail, "2147483647") {
		t.Errorf("TabbyAPI check %+v", chk)
	}
	ik := Dialect{Engine: IKLlamaCpp, Version: "4"}
	view := func(args []string, env ...string) record.EngineView {
		return record.EngineView{Args: args, Env: env, Where: "the profile's command line and environment"}
	}
	if chk := ik.CheckBudget(view([]string{"-m", "x"}, "LLAMA_ARG_THINK_BUDGET=32")); chk.State != "unlimited" || chk.Nonconforming != "" {
		t.Errorf("ik with an environment variable it does not read: %+v", chk)
	}
	if chk := ik.CheckBudget(view([]string{"--reasoning-budget", "16"})); chk.State != "limited" || !strings.Contains(chk.Nonconforming, "cannot override a server budget per request") {
		t.Errorf("ik with a server budget: %+v", chk)
	}
	if m := (Dialect{Engine: Ollama}).ReasoningBudget().Meaning; !strings.Contains(m, "no reasoning budget at all") || strings.Contains(m, "native think takes one") {
		t.Errorf("Ollama budget: %s", m)
	}
	unk := Dialect{Engine: LlamaCpp, Version: "b0-unknown"}
	if chk := unk.CheckBudget(view([]string{"--reasoning-budget", "8"})); chk.State != "limited" || !strings.Contains(chk.Nonconforming, "build number cannot tell") {
		t.Errorf("llama.cpp of unknown build with a server budget: %+v", chk)
	}
}

// TestBudgetValueOnlyWithItsField: a budget value stands only beside the
// field it is sent in; an engine sent no field has no value (null in the
// result, with a reason), never a 0 that would read as a budget.
func TestBudgetValueOnlyWithItsField(t *testing.T) {
	t.Parallel()
	for _, e := range []Engine{LlamaCpp, IKLlamaCpp, StrataServer, VLLM, SGLang, Ollama, LMStudio, TabbyAPI, Unknown} {
		b := Dialect{Engine: e, Build: LlamaPerRequestBudgetBuild}.ReasoningBudget()
		if (b.Field == nil) != (b.Value == nil) {
			t.Errorf("%s: field %v, value %v; want both or neither", e, b.Field, b.Value)
		}
	}
}

// TestRefusalQuotesRedactedFirst: the warm-up answer a
// refusal quotes is cut to 240 characters after the secret forms are
// replaced, so a token the cut falls inside does not survive.
func TestRefusalQuotesRedactedFirst(t *testing.T) {
	t.Parallel()
	msg := strings.Repeat("x", 225) + " ghp_R8m2kQv7Xz4Lp9Tw3Nb6Yc1Hd5Fg0Ja8Se2U reasoning_effort input should be low, not 'xhigh'"
	body, _ := json.Marshal(map[string]any{"message": msg})
	ref := Dialect{Engine: SGLang}.RefusedIn(400, string(body))
	if ref == nil || strings.Contains(ref.By, "ghp_") || !strings.Contains(ref.By, "<secret>") {
		t.Errorf("refusal %+v", ref)
	}
}
