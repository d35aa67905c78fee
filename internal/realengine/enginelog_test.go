//go:build linux

package realengine

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/redact"
)

// TestURLRunKeepsTheEngineLog: a --url run against llama-server started
// with --log-file F, given --engine-log F, keeps F as the engine_log
// artifact, redacted (the machine's home folder is the engines' folder
// here, so the model's path the server logged at start is private): the
// server's start, strata's line where the run began, and below it the
// prompt-eval line of each of the run's requests, which the validator holds
// against the records; bench submit takes the folder.
func TestURLRunKeepsTheEngineLog(t *testing.T) {
	t.Parallel()
	logFile := filepath.Join(t.TempDir(), "llama-server.log")
	srv := Start(t, Options{Model: Thinker, Args: []string{"--log-file", logFile}})
	out := t.TempDir()
	env := cliEnv(t, repoRoot(), nil)
	env.Machine = &redact.Machine{HomeDirs: []string{Dir(t)}}
	r := strataIn(t, env, nil, "bench", "run", "--url", srv.URL, "--engine-log", logFile, "--results-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	f := readFolder(t, out)
	checkThinkerRun(t, f, 22)
	data, err := os.ReadFile(filepath.Join(f.dir, contract.EngineLog))
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	pre, run, found := strings.Cut(log, contract.EngineLogRunStart+"\n")
	if !found || !strings.Contains(pre, "load_model: loading model '<home>/models/"+Thinker+"'") || strings.Contains(log, Dir(t)) {
		t.Errorf("the server's start, redacted, above strata's line:\n%s", pre)
	}
	if n := strings.Count(run, "prompt eval time ="); n != len(f.res.Requests) || strings.Count(pre, "prompt eval time =") != 0 {
		t.Errorf("%d prompt-eval lines below the run's start, %d above; want one a request (%d) below", n, strings.Count(pre, "prompt eval time ="), len(f.res.Requests))
	}
	kept := false
	for _, a := range f.res.Artifacts {
		kept = kept || a.Kind == contract.ArtifactEngineLog && a.Path == contract.EngineLog
	}
	if e := f.res.Extensions.Engine; !kept || e == nil || e.Log == nil || e.StartedByRunner {
		t.Errorf("artifacts %+v, extensions.engine %+v", f.res.Artifacts, f.res.Extensions.Engine)
	}
	if sub := strataIn(t, env, nil, "bench", "submit", f.dir); sub.code != 0 {
		t.Errorf("bench submit: exit %d\n%s\n%s", sub.code, sub.stdout, sub.stderr)
	}
}

// TestURLRunWhileAnotherClientSends: another client's chat request, which
// llama-server answers while the run goes (sent as the run's first
// performance request ends, before the next is dispatched), shows in the
// engine log; bench run says so as it ends and in the folder, which is
// nonconforming for it and names the request's timer line, and bench
// report takes the folder.
func TestURLRunWhileAnotherClientSends(t *testing.T) {
	t.Parallel()
	logFile := filepath.Join(t.TempDir(), "llama-server.log")
	srv := Start(t, Options{Model: Thinker, Args: []string{"--log-file", logFile}})
	out := t.TempDir()
	var once sync.Once
	sent := false
	r := strataIn(t, cliEnv(t, repoRoot(), nil), func(line string) {
		if strings.Contains(line, "performance-short-r1: completed") {
			once.Do(func() { sent = otherClient(t, srv.URL) })
		}
	}, "bench", "run", "--url", srv.URL, "--engine-log", logFile, "--results-dir", out)
	if r.code != 0 || !sent {
		t.Fatalf("exit %d, the other client's request answered: %t\n%s\n%s", r.code, sent, r.stdout, r.stderr)
	}
	f := readFolder(t, out)
	var foreign []contract.StatusReason
	for _, why := range f.res.Extensions.StatusReasons.Nonconforming {
		if why.Kind == contract.ForeignRequests {
			foreign = append(foreign, why)
		}
	}
	if f.res.Run.Status != contract.StatusNonconforming || len(foreign) != 1 ||
		!strings.HasPrefix(foreign[0].Text, "the engine answered 1 request strata did not send while the run went") || !strings.Contains(foreign[0].Text, "(the first at line ") {
		t.Errorf("status %s, reasons %s: want nonconforming for the one request strata did not send", f.res.Run.Status, f.ext["status_reasons"])
	}
	if !strings.Contains(r.stderr, "warning: the run is nonconforming: the engine answered 1 request strata did not send") {
		t.Errorf("bench run does not warn of the request strata did not send:\n%s", r.stderr)
	}
	f.report(t)
}

// otherClient sends one chat request to the server as another client
// would, and reports whether it was answered.
func otherClient(t *testing.T, url string) bool {
	body := `{"messages":[{"role":"user","content":"Hello from another client"}],"max_tokens":4}`
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Errorf("the other client's request: %v", err)
		return false
	}
	defer func() { _ = resp.Body.Close() }() // read to the end below
	_, err = io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the other client's request: HTTP %d, %v", resp.StatusCode, err)
		return false
	}
	return true
}
