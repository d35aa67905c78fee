package dialect

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/redact"
)

// A setting an engine version is known to refuse (or to drop) would make
// every request of a run fail, or run another workload than the profile's.
// It is caught before the warm-up from the identified version where the
// version tells; where it cannot, the engine's own answer to the warm-up
// tells, and the run stops there. Either way the words name the engine, its
// version, the setting and the first version that takes it.

// Refusal is a profile setting this engine does not take.
type Refusal struct {
	// Engine is the engine as Name says it (its version included).
	Engine string `json:"engine"`
	// Setting is the profile's setting and value ("reasoning_effort
	// xhigh").
	Setting string `json:"setting"`
	// Why is what the engine does with it, with its source.
	Why string `json:"why"`
	// Taking is the clause that says which version first takes it, or
	// what is known of it (gate.taking, which never names a version the
	// engine's own has reached).
	Taking string `json:"taking"`
	// By is the evidence: the identified version, or the engine's answer.
	By string `json:"by"`
}

// Text is the refusal in the run's words.
func (r Refusal) Text() string {
	return fmt.Sprintf("%s does not take the profile's %s: %s; %s (found by %s)", r.Engine, r.Setting, r.Why, r.Taking, r.By)
}

// notKnown is the taking clause of an engine whose first version taking
// the setting is not recorded.
func notKnown(why string) string {
	return "the first version that takes it is not known to strata (" + why + ")"
}

// effortSetting is the profile's reasoning_effort as a refusal names it.
func effortSetting() (value, setting string) {
	v := protocol.ProfileSampling().ReasoningEffort
	return v, "reasoning_effort " + v
}

// ollamaEfforts are the reasoning_effort values each Ollama release line
// takes on its OpenAI-compatible endpoint, newest first, read at the tags:
// from v0.32.12 thinkFromReasoningEffort (ollamaOpenAIGate); v0.32.11
// names two commits, the Go module's 96fb6d2fa, which refuses xhigh, and
// the moved GitHub tag's 39df91c98, which takes it, so that version cannot
// tell and the warm-up's answer does; from v0.22.0 (c2ebb4d57, #15787)
// high, medium, low, max and none; from v0.12.4 (90d429f5a, #12533) high,
// medium, low and none, anything else a 400 "invalid reasoning value"
// (openai/openai.go @v0.12.6 l.585–586, @v0.32.10 l.683–684; returned by
// middleware/openai.go as invalid_request_error); from v0.11.5 (d0cf6c828,
// #11868) the value is handed to think, whose decoder answers a 400
// "invalid think value" to anything but high, medium and low (api/types.go
// @v0.12.3 l.920–940); before it the field does not exist and is dropped.
var ollamaEfforts = []struct {
	from    [3]int
	takes   []string
	refuses string
	// unknown: this version names builds that differ (the warm-up tells).
	unknown bool
}{
	{[3]int{0, 32, 12}, []string{"minimal", "low", "medium", "high", "xhigh", "ultra", "max", "none"}, "", false},
	{[3]int{0, 32, 11}, nil, "", true},
	{[3]int{0, 22, 0}, []string{"high", "medium", "low", "max", "none"}, `answers any other value HTTP 400 "invalid reasoning value" (openai/openai.go @v0.32.10 l.683–684, through middleware/openai.go), so every request would fail`, false},
	{[3]int{0, 12, 4}, []string{"high", "medium", "low", "none"}, `answers any other value HTTP 400 "invalid reasoning value" (openai/openai.go @v0.12.6 l.585–586, through middleware/openai.go), so every request would fail`, false},
	{[3]int{0, 11, 5}, []string{"high", "medium", "low"}, `hands the value to think, whose decoder answers any other value HTTP 400 "invalid think value" (api/types.go @v0.12.3 l.920–940), so every request would fail`, false},
	{[3]int{0, 0, 0}, nil, "has no reasoning_effort field and drops it (openai/openai.go before d0cf6c828, v0.11.5), so thinking would run at the model's default effort", false},
}

// ollamaRelease reads an Ollama version ("0.32.10", "0.33.0-rc2"); ok is
// false for one that names no release, as a source build's "0.0.0"
// (version/version.go; release builds set it by -ldflags, scripts/env.sh).
var ollamaRelease = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)`)

func parseRelease(v string) (r [3]int, ok bool) {
	m := ollamaRelease.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return r, false
	}
	for i := range r {
		r[i], _ = strconv.Atoi(m[i+1])
	}
	return r, r != [3]int{}
}

func releaseBefore(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// Refuses is the profile setting this engine's identified version is known
// not to take (nil when none is, or the version cannot tell): the run stops
// before the warm-up. Only a version that names a release is read; a
// feature test by route or field would be preferred, but Ollama has none
// that shows the values it takes.
func (d Dialect) Refuses() *Refusal {
	if d.Engine != Ollama {
		return nil
	}
	rel, ok := parseRelease(d.Version)
	if !ok {
		return nil
	}
	effort, setting := effortSetting()
	if d.API == APINative {
		return d.ollamaRefusesNative(rel, setting)
	}
	for _, line := range ollamaEfforts {
		if releaseBefore(rel, line.from) {
			continue
		}
		if line.unknown {
			return nil
		}
		for _, v := range line.takes {
			if v == effort {
				return nil
			}
		}
		return &Refusal{Engine: d.Name(), Setting: setting, Why: "this version " + line.refuses,
			Taking: ollamaOpenAIGate.taking(d.Version), By: "its version, " + d.Version + ", from GET " + ollamaVersionRoute}
	}
	return nil
}

// RefusedIn is the profile setting the engine's answer to a request says it
// refused (nil when the answer says no such thing): an HTTP 400 or 422
// whose error names the setting. It is read from the warm-up's answer,
// where the version could not tell before.
func (d Dialect) RefusedIn(status int, body string) *Refusal {
	if status != 400 && status != 422 {
		return nil
	}
	effort, setting := effortSetting()
	msg := errorMessage(body)
	by := fmt.Sprintf("its answer to the warm-up, HTTP %d: %s", status, clipRunes(msg, 240))
	switch {
	case d.Engine == Ollama && (strings.Contains(msg, "invalid reasoning value") || strings.Contains(msg, "invalid think value")):
		// The two errors of openai/openai.go and api/types.go above: on
		// /api/chat it is think "max" that was refused.
		g := ollamaOpenAIGate
		if d.API == APINative {
			g = ollamaNativeGate
		}
		return &Refusal{Engine: d.Name(), Setting: setting, Why: "it answers HTTP " + strconv.Itoa(status) + " to it",
			Taking: g.taking(d.Version), By: by}
	case !strings.Contains(msg, "reasoning_effort") || !strings.Contains(msg, effort):
		return nil
	case d.Engine == VLLM:
		// Pydantic's literal_error for ChatCompletionRequest.reasoning_effort
		// (Literal["low", "medium", "high"] at d5dba2d7; the seven values
		// with xhigh at 002032ee and 055e47c2,
		// vllm/entrypoints/openai/chat_completion/protocol.py), returned by
		// validation_exception_handler as HTTP 400.
		return &Refusal{Engine: d.Name(), Setting: setting, Why: "its ChatCompletionRequest.reasoning_effort takes only low, medium and high (vllm/entrypoints/openai/chat_completion/protocol.py @d5dba2d)",
			Taking: notKnown("vLLM's source takes xhigh at 002032e, whose release is not recorded"), By: by}
	case d.Engine == SGLang:
		// The same literal_error (python/sglang/srt/entrypoints/openai/
		// protocol.py; xhigh taken at 004c82e), HTTP 400 from http_server.py
		// @0025436 validation_exception_handler.
		return &Refusal{Engine: d.Name(), Setting: setting, Why: "its ChatCompletionRequest.reasoning_effort takes only low, medium and high (python/sglang/srt/entrypoints/openai/protocol.py before #20556)",
			Taking: notKnown("SGLang's source takes xhigh at 004c82e, whose release is not recorded"), By: by}
	}
	return &Refusal{Engine: d.Name(), Setting: setting, Why: "its answer names the setting as refused",
		Taking: "the first version that takes it is not known to strata", By: by}
}

// errorMessage is the message of an error body ({"error": {"message"}},
// {"error": "…"}, {"message"} or {"detail"}), else the body.
func errorMessage(body string) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return body
	}
	var inner struct {
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
		return inner.Message
	case json.Unmarshal(v.Error, &s) == nil && s != "":
		return s
	case v.Message != "":
		return v.Message
	case len(v.Detail) > 0:
		return string(v.Detail)
	}
	return body
}

// clipRunes is the start of s, n runes at the most, with the secret forms
// the redactor knows replaced before it is cut (a secret cut short is no
// longer one the rules know).
func clipRunes(s string, n int) string {
	r := []rune(redact.SecretsOnly(s))
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// tabbyForced is what strata reads of TabbyAPI's GET /v1/sampling/overrides
// ({"selected_preset", "overrides": {"<param>": {"override", "force",
// "additive"}}, "presets"}: endpoints/core/router.py @e632af4 l.546).
type tabbyForced struct {
	Overrides map[string]struct {
		Override json.RawMessage `json:"override"`
		Force    bool            `json:"force"`
	} `json:"overrides"`
}

// NotTakenIn is NotTaken with what the server's own evidence adds: a
// profile setting TabbyAPI's sampler overrides force to another value. A
// forced override replaces the request's value after validation
// (common/sampling.py @e632af4 apply_forced_sampler_overrides, l.461ff),
// but only when it is truthy (l.478: a forced 0, false or "" is never
// applied); a forced value equal to the profile's changes nothing.
func (d Dialect) NotTakenIn(ev contract.ServerEvidence) []string {
	out := d.NotTaken()
	if d.Engine != TabbyAPI || !isObject(ev.SamplingOverrides) {
		return out
	}
	var f tabbyForced
	if json.Unmarshal(ev.SamplingOverrides, &f) != nil {
		return out
	}
	s := protocol.ProfileSampling()
	for _, p := range []struct {
		name string
		want float64
	}{{"temperature", s.Temperature}, {"top_p", s.TopP}, {"top_k", float64(s.TopK)}, {"min_p", s.MinP},
		{"presence_penalty", s.PresencePenalty}, {"repetition_penalty", s.RepetitionPenalty}} {
		o, ok := f.Overrides[p.name]
		if !ok || !o.Force {
			continue
		}
		var v any
		if json.Unmarshal(o.Override, &v) != nil {
			continue
		}
		n, isNum := v.(float64)
		if (isNum && (n == 0 || n == p.want)) || v == nil || v == false || v == "" {
			continue
		}
		out = append(out, fmt.Sprintf("%s: TabbyAPI's %s forces %s to %s, which replaces every request's value (common/sampling.py @e632af4 apply_forced_sampler_overrides)",
			p.name, tabbyOverridesRoute, p.name, string(o.Override)))
	}
	return out
}
