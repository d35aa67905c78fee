package engine

import (
	"fmt"
	"strings"
	"testing"
)

// TestServerURL: a server's URL is its root; the URLs people copy from a
// client's settings (the OpenAI base /v1, an endpoint such as
// /v1/chat/completions or llama.cpp's /completion, a query) are refused
// with the root to use instead, and a root, also under a proxy's prefix,
// is taken.
func TestServerURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url, want string // want: "" for a URL that is taken, else what the error says
	}{
		{"http://127.0.0.1:18090", ""},
		{"http://127.0.0.1:18090/", ""},
		{"https://localhost:8443", ""},
		{"http://127.0.0.1:8080/upstream/qwen3", ""}, // a proxy's prefix (llama-swap)
		{"http://127.0.0.1:8080/v1models", ""},
		{"http://127.0.0.1:18090/v1", "ends in /v1, an API path; use http://127.0.0.1:18090"},
		{"http://127.0.0.1:18090/v1/", "ends in /v1/, an API path; use http://127.0.0.1:18090"},
		{"http://127.0.0.1:18090/V1", "ends in /V1, an API path; use http://127.0.0.1:18090"},
		{"http://127.0.0.1:18090/v1/chat/completions", "ends in /v1/chat/completions, an API path; use http://127.0.0.1:18090"},
		{"http://127.0.0.1:18090/v1/models", "ends in /v1/models, an API path; use http://127.0.0.1:18090"},
		{"http://127.0.0.1:18090/v1/completions", "use http://127.0.0.1:18090"},
		{"http://127.0.0.1:8080/upstream/qwen3/v1", "ends in /v1, an API path; use http://127.0.0.1:8080/upstream/qwen3"},
		{"http://127.0.0.1:8080/completion", "ends in /completion, an API path; use http://127.0.0.1:8080"},
		{"http://127.0.0.1:8080/chat/completions", "ends in /chat/completions, an API path; use http://127.0.0.1:8080"},
		{"http://127.0.0.1:8080/health", "ends in /health, an API path; use http://127.0.0.1:8080"},
		{"http://127.0.0.1:8080/props", "use http://127.0.0.1:8080"},
		{"http://127.0.0.1:11434/api", "ends in /api, an API path; use http://127.0.0.1:11434"},
		{"http://127.0.0.1:11434/api/chat", "ends in /api/chat, an API path; use http://127.0.0.1:11434"},
		{"http://127.0.0.1:8080?model=x", "has a query or fragment (?model=x); use http://127.0.0.1:8080"},
		{"http://127.0.0.1:8080/#top", "has a query or fragment (#top); use http://127.0.0.1:8080"},
		{"ftp://127.0.0.1:8080", "expected http://HOST:PORT"},
		{"127.0.0.1:8080", "expected http://HOST:PORT"},
		{"http:///v1", "expected http://HOST:PORT"},
	} {
		_, err := ServerURL(c.url)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.url, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error with %q", c.url, err, c.want)
		}
	}
}

// TestProfileURLIsTheRoot: a profile's url is held to the same rule.
func TestProfileURLIsTheRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeProfile(t, dir, "openai", "url = \"http://127.0.0.1:18090/v1\"\n")
	p, err := Load("openai", dir)
	if err != nil {
		t.Fatal(err)
	}
	if all := fmt.Sprint(p.Check()); !strings.Contains(all, `url "http://127.0.0.1:18090/v1": ends in /v1, an API path; use http://127.0.0.1:18090`) {
		t.Errorf("check: got %s, want the url refused with its root", all)
	}
}
