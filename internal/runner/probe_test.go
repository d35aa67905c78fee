package runner

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/dialect"
)

// strataServer answers strata's probes as Strata's server does
// (Niko1221/Strata serve/server.py @452325a9): /health always, without
// the key, with service "strata" (Handler do_GET "/health"); /props,
// /slots, /v1/models and /v1/status only with the key when one is set
// (Handler._authorized: 401 authentication_error), any other GET a plain
// 404 without it; /props 503 while the
// engine is down (Handler._props); no /tokenize.
func strataServer(t *testing.T, key string, propsDown bool) *httptest.Server {
	t.Helper()
	// A write that fails shows as the probe's missing answer, which is what
	// the tests read.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Connection", "close")
		path := strings.TrimRight(r.URL.Path, "/")
		if path == "/health" {
			_, _ = w.Write([]byte(`{"status": "ok", "max_context": 32768, "model": "qwen3.8-flash-next-iq3_xxs", "images": false, "api_key": ` +
				map[bool]string{true: "true", false: "false"}[key != ""] + `, "loaded": true, "service": "strata"}`))
			return
		}
		// Only its own routes need the key; any other GET is a plain 404.
		protected := map[string]bool{"/props": true, "/slots": true, "/v1/models": true, "/models": true, "/v1/status": true, "/metrics": true}
		if key != "" && protected[path] && r.Header.Get("Authorization") != "Bearer "+key && r.Header.Get("x-api-key") != key {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"error": {"type": "authentication_error", "message": "missing or wrong API key"}}`))
			return
		}
		switch path {
		case "/props":
			if propsDown {
				w.WriteHeader(503)
				_, _ = w.Write([]byte(`{"error": {"message": "the engine is not running"}}`))
				return
			}
			_, _ = w.Write([]byte(`{"default_generation_settings": {"n_ctx": 32768, "params": {"temperature": 1.0, "top_k": 20, "n_predict": -1}}, "total_slots": 1, "model_alias": "qwen3.8-flash-next-iq3_xxs", "chat_template": "{{ messages }}", "models_autoload": true, "is_sleeping": false, "model_path": "/d/m-00001-of-00002.gguf", "build_info": "Strata 0.1.41"}`))
		case "/slots":
			_, _ = w.Write([]byte(`[{"id": 0, "n_ctx": 32768, "is_processing": false, "n_prompt_tokens": 0}]`))
		case "/v1/models":
			_, _ = w.Write([]byte(`{"object": "list", "data": [{"id": "qwen3.8-flash-next-iq3_xxs", "object": "model", "status": {"value": "loaded"}, "meta": {"n_ctx": 32768}}]}`))
		case "/v1/status":
			_, _ = w.Write([]byte(`{"service": "strata", "model": "qwen3.8-flash-next-iq3_xxs", "loaded": false, "engine": "0.1.41", "context": {"native": 32768, "max_positions": 32768}, "concurrency": {"serving": 1, "requested": 1}, "activity": {"requests": 0, "in_flight": 0, "last_request_at": null}}`))
		default:
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"error": {"message": "not found"}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestProbeStrata: Strata's server is identified from its own shapes,
// its version is build_info's (else /v1/status engine while /props is
// down, with the context and slots from /v1/status), and probes it
// refuses for want of a key are listed, never taken for an unknown
// engine.
func TestProbeStrata(t *testing.T) {
	t.Parallel()
	const key = "k3y-for-strata-tests"
	for _, c := range []struct {
		name           string
		serverKey, use string
		propsDown      bool
		version, from  string
		refused        int
	}{
		{"no key set", "", "", false, "0.1.41", "/props build_info", 0},
		{"key sent", key, key, false, "0.1.41", "/props build_info", 0},
		{"key missing", key, "", false, "", "", 4},
		{"wrong key", key, "not-the-right-key", false, "", "", 4},
		{"/props down", "", "", true, "0.1.41", "/v1/status engine", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := strataServer(t, c.serverKey, c.propsDown)
			s := ProbeServer(context.Background(), client.New(client.Options{BaseURL: srv.URL, APIKey: c.use}))
			if s.Dialect.Engine != string(dialect.StrataServer) {
				t.Fatalf("identified as %+v", s.Dialect)
			}
			if s.BuildInfo != c.version || s.VersionSource != c.from {
				t.Errorf("version %q from %q, want %q from %q", s.BuildInfo, s.VersionSource, c.version, c.from)
			}
			if len(s.Refused) != c.refused {
				t.Errorf("refused %q, want %d", s.Refused, c.refused)
			}
			if c.refused == 0 && (s.ContextSize == nil || *s.ContextSize != 32768 || s.Slots == nil || *s.Slots != 1) {
				t.Errorf("context %v, slots %v", s.ContextSize, s.Slots)
			}
			if c.refused > 0 && !strings.Contains(s.Refused[0], "HTTP 401") {
				t.Errorf("refused %q", s.Refused)
			}
		})
	}
}

// ollamaServer answers strata's probes as a real Ollama 0.32.11 does
// (server/routes.go @96fb6d2fa GenerateRoutes: no /health, /props or
// /slots; GET /api/version, GET /v1/models, POST /api/show), its
// /api/show answer as captured from ../shared/engines/ollama (trimmed).
// show is the status /api/show answers. Its writes are not checked: what
// the probe makes of an answer is under test, not the test server's
// writes.
func ollamaServer(t *testing.T, show int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /api/version":
			_, _ = w.Write([]byte(`{"version":"0.32.11"}`))
		case "GET /v1/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"tiny-qwen3-thinker:latest","object":"model","created":1765004520,"owned_by":"library"}]}`))
		case "POST /api/show":
			body, _ := io.ReadAll(r.Body)
			if show != 200 || string(body) != `{"model":"tiny-qwen3-thinker:latest"}` {
				w.WriteHeader(max(show, 400))
				_, _ = w.Write([]byte(`{"error":"model not found"}`))
				return
			}
			_, _ = w.Write([]byte(`{"modelfile":"# Modelfile generated by \"ollama show\"\n\nFROM /tmp/m/blobs/sha256-e9b0583ba9bbb4583a2ccf8b2a57b3930d9f61c3ed2e2d8380d1ede79d135391\nTEMPLATE {{ .Prompt }}\n","template":"{%- if tools %}x{%- endif %}","details":{"format":"gguf","family":"qwen3"},"capabilities":["tools","thinking","completion"]}`))
		default:
			w.WriteHeader(404)
			_, _ = w.Write([]byte("404 page not found"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestProbeOllama: an Ollama is spoken to in its own API naming the one
// model it lists; POST /api/show gives the template and the model's blob,
// and the answer is kept as evidence; a show that fails leaves the
// template unknown with its reason.
func TestProbeOllama(t *testing.T) {
	t.Parallel()
	s := ProbeServer(context.Background(), client.New(client.Options{BaseURL: ollamaServer(t, 200).URL}))
	d := dialect.Of(s.Dialect)
	if d.Engine != dialect.Ollama || d.API != dialect.APINative || d.Model != "tiny-qwen3-thinker:latest" {
		t.Fatalf("identified %+v", d)
	}
	if s.Template != "{%- if tools %}x{%- endif %}" || !strings.HasSuffix(s.ModelPath, "/blobs/sha256-e9b0583ba9bbb4583a2ccf8b2a57b3930d9f61c3ed2e2d8380d1ede79d135391") ||
		!strings.Contains(s.ModelPathNote, "/api/show") || len(s.Evidence().OllamaShow) == 0 {
		t.Errorf("template %q, model %q (%s), evidence %s", s.Template, s.ModelPath, s.ModelPathNote, s.Evidence().OllamaShow)
	}
	f := ProbeServer(context.Background(), client.New(client.Options{BaseURL: ollamaServer(t, 404).URL}))
	if f.Template != "" || f.ModelPath != "" || f.NoTemplate != "POST /api/show answered HTTP 404" {
		t.Errorf("a failed show: template %q, model %q, reason %q", f.Template, f.ModelPath, f.NoTemplate)
	}
}

// TestProbeOllamaShowNotJSON: a show answer of status 200 that is no JSON
// (here a template of 20 MiB, past what the client reads) leaves the
// template unknown with that reason, not "answered HTTP 200".
func TestProbeOllamaShowNotJSON(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /api/version":
			_, _ = w.Write([]byte(`{"version":"0.32.11"}`))
		case "GET /v1/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m:latest","object":"model"}]}`))
		case "POST /api/show":
			_, _ = w.Write([]byte(`{"template":"` + strings.Repeat("x", 20<<20) + `"}`))
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	s := ProbeServer(context.Background(), client.New(client.Options{BaseURL: srv.URL}))
	if want := "POST /api/show did not answer JSON"; s.Template != "" || s.NoTemplate != want {
		t.Errorf("template of %d bytes, reason %q; want none, %q", len(s.Template), s.NoTemplate, want)
	}
}
