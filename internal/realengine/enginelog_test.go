//go:build linux

package realengine

import (
	"os"
	"path/filepath"
	"strings"
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
