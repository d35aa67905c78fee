package dialect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/record"
)

// Strata's own server, as its source shows it: Niko1221/Strata
// serve/server.py @452325a9 (with serve/frontend.py of the same tree).
// Each fact below names the function it was read in.

// strataService is the service both GET /health (Handler, "/health") and
// GET /v1/status (Service.v1_status) name; /health answers it without the
// API key, so a server that refuses strata's probes is still known.
const strataService = "strata"

// strataBuildPrefix begins /props build_info ("Strata " + the engine's
// version, Handler._props).
const strataBuildPrefix = "Strata "

// strataCountRoute counts a conversation in Anthropic's shape
// (Handler._count_tokens); Strata serves no /tokenize or /apply-template.
const strataCountRoute = "/v1/messages/count_tokens"

// serviceOf is the "service" string of a JSON object ("" when absent).
func serviceOf(raw json.RawMessage) string {
	var v struct {
		Service string `json:"service"`
	}
	if !isObject(raw) || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v.Service
}

// strataIdentifiedBy says which evidence names Strata's server ("" when
// none does).
func strataIdentifiedBy(ev contract.ServerEvidence, buildInfo string) string {
	switch {
	case serviceOf(ev.Status) == strataService:
		return `GET /v1/status says service "strata" (Strata's server)`
	case strings.HasPrefix(buildInfo, strataBuildPrefix):
		return fmt.Sprintf("/props build_info %q (Strata's \"Strata <version>\" form)", buildInfo)
	case serviceOf(ev.Health) == strataService:
		return `GET /health says service "strata" (Strata's server)`
	}
	return ""
}

// strataVersion is Strata's engine version and where it was read: the
// version in /props build_info, else /v1/status engine (a string, or null
// for its mock engine), which answers while /props says 503 because the
// engine is down (Handler._props, Service.v1_status).
func strataVersion(ev contract.ServerEvidence, buildInfo string) (version, source string) {
	if v := strings.TrimSpace(strings.TrimPrefix(buildInfo, strataBuildPrefix)); strings.HasPrefix(buildInfo, strataBuildPrefix) && v != "" {
		return v, PropsRoute + " build_info"
	}
	var st struct {
		Engine *string `json:"engine"`
	}
	if isObject(ev.Status) && json.Unmarshal(ev.Status, &st) == nil && st.Engine != nil && *st.Engine != "" {
		return *st.Engine, StatusRoute + " engine"
	}
	return "", ""
}

// EngineVersion is the engine's own version and the source it was read
// from: the spec's "/props (build_info), or /v1/status when /props has
// none", in the engine's terms — Strata names its version in build_info
// after "Strata ", and in /v1/status as engine — and, for an engine that
// names it on a route of its own, that route. Both are "" when no source
// names it.
func EngineVersion(ev contract.ServerEvidence, d Dialect) (version, source string) {
	var props struct {
		BuildInfo string `json:"build_info"`
	}
	if len(ev.Props) > 0 {
		_ = json.Unmarshal(ev.Props, &props)
	}
	switch {
	case d.Engine == StrataServer:
		return strataVersion(ev, props.BuildInfo)
	case props.BuildInfo != "":
		return props.BuildInfo, PropsRoute + " build_info"
	case d.Known() && d.Version != "":
		return d.Version, d.IdentifiedBy
	}
	return "", ""
}

// strataPreflight counts each fixture with POST /v1/messages/count_tokens.
// The route renders what /v1/messages would (Handler._count_tokens →
// Service.encode_prompt): the chat template with the tools and the effort,
// add_generation_prompt true, encoded with the pack's tokenizer with
// special tokens parsed; it answers {"input_tokens": N} and never the
// rendering, so only the count is compared with the frozen one.
func strataPreflight() Preflight {
	return Preflight{CountOnly: true, Tokenize: strataCountRoute, CountField: "input_tokens", CountBody: AnthropicCount,
		Source: "POST " + strataCountRoute + " with each request's conversation in Anthropic's shape (Strata renders it with its chat template, tools and effort, generation prompt included, and counts it with the pack's tokenizer; it returns no rendering, so only the count is compared)"}
}

// AnthropicCount turns a chat completion body into the count_tokens body
// of the same conversation, as Strata's frontend reads one: a leading
// system message becomes "system", user and assistant messages with text
// content stay messages, an OpenAI tool {"type":"function","function":
// {name, description, parameters}} becomes {name, description,
// input_schema} (which the frontend hands the template as {name,
// description, parameters} again), reasoning_effort becomes
// output_config.effort (the Anthropic path reads no top-level
// reasoning_effort) and a false chat_template_kwargs.enable_thinking
// becomes thinking {"type": "disabled"}. A message it cannot say in that
// shape (tool calls and tool results) is an error: that fixture's count
// is then not verifiable, never guessed.
func AnthropicCount(chat []byte) ([]byte, error) {
	var in struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function *struct {
				Name        string          `json:"name"`
				Description *string         `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		ReasoningEffort *string `json:"reasoning_effort"`
		Kwargs          struct {
			EnableThinking *bool `json:"enable_thinking"`
		} `json:"chat_template_kwargs"`
	}
	if err := json.Unmarshal(chat, &in); err != nil {
		return nil, fmt.Errorf("the chat body is not an object of messages and tools: %w", err)
	}
	var raw struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(chat, &raw)
	type message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	type tool struct {
		Name        string          `json:"name"`
		Description *string         `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema,omitempty"`
	}
	out := struct {
		System       json.RawMessage `json:"system,omitempty"`
		Messages     []message       `json:"messages"`
		Tools        []tool          `json:"tools,omitempty"`
		OutputConfig *struct {
			Effort string `json:"effort"`
		} `json:"output_config,omitempty"`
		Thinking *struct {
			Type string `json:"type"`
		} `json:"thinking,omitempty"`
	}{Messages: []message{}}
	for i, m := range in.Messages {
		for k := range raw.Messages[i] {
			if k != "role" && k != "content" {
				return nil, fmt.Errorf("messages[%d] has %s, which Anthropic's shape says otherwise: its count cannot be asked of %s", i, k, strataCountRoute)
			}
		}
		switch {
		case m.Role == "system" && i == 0:
			out.System = m.Content
		case m.Role == "user" || m.Role == "assistant":
			out.Messages = append(out.Messages, message{Role: m.Role, Content: m.Content})
		default:
			return nil, fmt.Errorf("messages[%d] has role %q, which Anthropic's shape has not: its count cannot be asked of %s", i, m.Role, strataCountRoute)
		}
	}
	for i, t := range in.Tools {
		if t.Type != "function" || t.Function == nil {
			return nil, fmt.Errorf("tools[%d] is not an OpenAI function tool", i)
		}
		out.Tools = append(out.Tools, tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	if e := in.ReasoningEffort; e != nil && *e != "" {
		out.OutputConfig = &struct {
			Effort string `json:"effort"`
		}{*e}
	}
	if t := in.Kwargs.EnableThinking; t != nil && !*t {
		out.Thinking = &struct {
			Type string `json:"type"`
		}{"disabled"}
	}
	return json.Marshal(out)
}

// Strata's server keeps its engine's options in a config file,
// strata-<model>.json, named on its command line (python -m serve.server
// --engine strata --config strata-<model>.json --port P): its "args" are
// the engine's flags, its "cwd" the engine's working folder (serve/server.py
// @452325a9 main; setup.py @021ef858 write_setup_config).

// StrataConfigFlag names the config file on the server's command line.
const StrataConfigFlag = "--config"

// ConfigFileOf is the config file a Strata server's command line names
// ("" when none).
func ConfigFileOf(args []string) string { return FlagValue(args, StrataConfigFlag) }

// FlagValue is the value a command line gives a flag, as "--flag value" or
// "--flag=value" ("" when absent).
func FlagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// ParseStrataFile reads a config file's JSON (a UTF-8 byte order mark is
// allowed, as the server reads it with utf-8-sig).
func ParseStrataFile(name string, data []byte) (*record.StrataFile, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var f record.StrataFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("the Strata config file %s is not a JSON object with an args list of strings: %w", name, err)
	}
	if f.Args == nil {
		return nil, fmt.Errorf("the Strata config file %s has no args list (the engine's flags)", name)
	}
	f.Name = name
	return &f, nil
}

// StatusCapacity is the context and the slots Strata's /v1/status reports
// (context.native, concurrency.serving; Service.v1_status), for when its
// /props answers 503 while the engine is down (nil each when absent).
func StatusCapacity(ev contract.ServerEvidence) (context, slots *int64) {
	if serviceOf(ev.Status) != strataService {
		return nil, nil
	}
	var st struct {
		Context struct {
			Native *int64 `json:"native"`
		} `json:"context"`
		Concurrency struct {
			Serving *int64 `json:"serving"`
		} `json:"concurrency"`
	}
	if json.Unmarshal(ev.Status, &st) != nil {
		return nil, nil
	}
	if st.Context.Native != nil && *st.Context.Native <= 0 {
		st.Context.Native = nil // 0 while its engine starts
	}
	return st.Context.Native, st.Concurrency.Serving
}

// StrataStarting reports whether a GET /health answer is Strata's server
// saying its engine is not loaded: it answers 200 with loaded false while
// the engine starts (and while it is down or unloaded), so readiness is
// then read on /props, which says 503 until the engine runs.
func StrataStarting(body []byte) bool {
	var h struct {
		Loaded *bool `json:"loaded"`
	}
	return serviceOf(body) == strataService && json.Unmarshal(body, &h) == nil && h.Loaded != nil && !*h.Loaded
}
