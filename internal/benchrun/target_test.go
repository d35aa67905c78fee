package benchrun

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/strata-bench/strata/internal/client"
)

// TestReadyWithoutHealth: an Ollama-shaped server (server/routes.go
// @fb30760: no /health; GET / "Ollama is running", GET /api/version
// {"version"}) is ready by its /api/version; a server answering 404
// everywhere is not an engine.
func TestReadyWithoutHealth(t *testing.T) {
	t.Parallel()
	// A scripted server's write that fails shows at the client, which is
	// what the test reads.
	ollama := http.NewServeMux()
	ollama.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "Ollama is running") })
	ollama.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"version":"0.32.15"}`) })
	for _, c := range []struct {
		name   string
		h      http.Handler
		status int
		route  string
	}{
		{"ollama", ollama, 200, "/api/version"},
		{"not an engine", http.NotFoundHandler(), 404, "/health"},
	} {
		srv := httptest.NewServer(c.h)
		status, route, err := ready(context.Background(), client.New(client.Options{BaseURL: srv.URL}))
		srv.Close()
		if err != nil || status != c.status || route != c.route {
			t.Errorf("%s: %d %s %v, want %d %s", c.name, status, route, err, c.status, c.route)
		}
	}
}
