package engine

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// pastedPaths are the API paths a URL copied from a client's settings or
// an engine's documentation ends in: the OpenAI-compatible endpoints (also
// without their /v1), llama.cpp's own and Ollama's. Any path with a /v1
// segment is one too (pastedAt).
var pastedPaths = []string{
	"/chat/completions", "/completions", "/completion", "/models", "/embeddings",
	"/health", "/props", "/slots", "/metrics", "/tokenize", "/detokenize", "/apply-template",
	"/api", "/api/chat", "/api/generate", "/api/tags", "/api/version",
}

// ServerURL parses the URL of a server strata talks to (bench run and
// bench check --url, a profile's url) and holds it to the rule for one:
// the http(s) URL of the server's root, to which strata adds every path it
// calls (/health, /props, /v1/chat/completions). The URLs people copy from
// a client's settings, the OpenAI base (…/v1) or an endpoint
// (…/v1/chat/completions), would send each request to a path the server
// does not serve: they are refused with the URL to use instead. A path
// before the API's (a proxy's prefix) is kept.
func ServerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("expected http://HOST:PORT")
	}
	root := url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host, Path: u.Path}
	at := pastedAt(u.Path)
	if at >= 0 {
		root.Path = u.Path[:at]
	}
	root.Path = strings.TrimRight(root.Path, "/")
	var extra string
	if u.RawQuery != "" || u.ForceQuery {
		extra = "?" + u.RawQuery
	}
	if u.Fragment != "" {
		extra += "#" + u.EscapedFragment()
	}
	const why = "the server's root: strata adds the paths it calls"
	switch {
	case at >= 0:
		return nil, fmt.Errorf("ends in %s, an API path; use %s (%s)", u.Path[at:], root.String(), why)
	case extra != "":
		return nil, fmt.Errorf("has a query or fragment (%s); use %s (%s)", extra, root.String(), why)
	}
	return u, nil
}

// pastedAt is where the API path in path starts: at its first /v1
// segment, else at a pasted path it ends in; -1 when it holds none.
func pastedAt(path string) int {
	low := strings.ToLower(path)
	for i := 0; i < len(low); i++ {
		if low[i] == '/' && strings.HasPrefix(low[i:], "/v1") && (i+3 == len(low) || low[i+3] == '/') {
			return i
		}
	}
	trimmed := strings.TrimRight(low, "/")
	for _, p := range pastedPaths {
		if strings.HasSuffix(trimmed, p) {
			return len(trimmed) - len(p)
		}
	}
	return -1
}
