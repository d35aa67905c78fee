//go:build linux

package realengine

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/cli"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/site"
)

// viewRealEngine: bench view --out --serve takes the real engine's folders
// without a warning, writes a run page for each, marked local — not
// reviewed, and serves them on loopback.
func viewRealEngine(t *testing.T, dirs []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "view")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, w := io.Pipe()
	var stderr strings.Builder
	env := cliEnv(t, t.TempDir(), nil)
	env.Stdout, env.Stderr = w, &stderr
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, append([]string{"bench", "view", "--out", out, "--serve", "--addr", "127.0.0.1:0"}, dirs...), env)
		_ = w.Close() // always nil; the reader sees the end
	}()
	base := resulttest.ServingURL(t, stdout, done)
	get := func(p string) string {
		t.Helper()
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close() // read to its end above
		if resp.StatusCode != 200 || !strings.Contains(string(body), `id="local-mark"`) || !strings.Contains(string(body), site.LocalMark) {
			t.Errorf("GET %s: %d, not marked %s", p, resp.StatusCode, site.LocalMark)
		}
		return string(body)
	}
	idx := get("index.html")
	runs := regexp.MustCompile(`href="(runs/[^"]+\.html)"`).FindAllStringSubmatch(idx, -1)
	for _, r := range runs {
		get(r[1])
	}
	written, _ := filepath.Glob(filepath.Join(out, "runs", "*.html"))
	if len(runs) != len(dirs) || len(written) != len(dirs) || !strings.Contains(idx, "label-partial") {
		t.Errorf("the index links %d run pages, %d written, for %d folders", len(runs), len(written), len(dirs))
	}
	cancel()
	if code := <-done; code != 0 || stderr.Len() > 0 {
		t.Errorf("bench view: exit %d\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		t.Errorf("--out keeps no view after the preview: %v", err)
	}
}
