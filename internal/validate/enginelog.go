package validate

import (
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/strictjson"
)

// checkEngineLog: extensions.engine.log names the engine_log artifact, and
// the log agrees with the records ("Logs and output evidence must agree
// with the JSON"). Where the engine's log prints a timer line per request
// (dialect.LogRequests) and the part written while the run went holds
// any, every request whose engine timings outputs.jsonl keeps has its
// lines there with the same counts and times, and no more requests are
// there than the run dispatched without timings (the engine answered
// requests strata did not send while the run went). A log that prints no
// timer line (a lower verbosity) says nothing against the records.
func (c *checker) checkEngineLog() {
	path, data := c.engineLog()
	if e := c.res.Extensions.Engine; e != nil && e.Log != nil && *e.Log != path {
		c.add(contract.PtrEngineLog, "is %q, which is not the engine_log artifact", *e.Log)
	}
	d, known := c.recordedDialect()
	if data == nil || !known {
		return
	}
	run, from, whole := contract.EngineLogOfRun(data)
	logged, ok := d.LogRequests(run)
	if !ok || len(logged) == 0 {
		return
	}
	used := make([]bool, len(logged))
	untimed := 0
	for i, q := range c.res.Requests {
		o, found := c.outs[q.ID]
		if !found || o.Status == contract.Skipped {
			continue
		}
		t, timed := d.LogTimersOf(o.Timings)
		if !timed {
			untimed++
			continue
		}
		if j := dialect.MatchLog(logged, used, t); j >= 0 {
			used[j] = true
		} else if whole {
			c.add(contract.Pointer("requests", i), "%s has no timer lines of %s below line %d, where the run's part begins (its timings in %s: %s): the log and the records disagree",
				path, q.ID, from, contract.OutputsFile, t)
		}
	}
	var extra []dialect.LogRequest
	for j, l := range logged {
		if !used[j] {
			extra = append(extra, l)
		}
	}
	if len(extra) > untimed {
		x := extra[0]
		c.add(path, "holds the timer lines of %s below line %d that no record of %s has, and only %d dispatched requests lack engine timings (the first at line %d: task %s, prompt %d tokens in %.2f ms, %d generated in %.2f ms): the engine answered requests strata did not send while the run went",
			humanize.Count(len(extra), "request", "requests"), from, contract.OutputsFile, untimed, from+x.Line-1, x.Task, x.PromptN, x.PromptMS, x.PredictedN, x.PredictedMS)
	}
}

// engineLog is the engine_log artifact's path and bytes ("" and nil when
// the folder has none, or it cannot be read: checkArtifacts says why).
func (c *checker) engineLog() (string, []byte) {
	path := ""
	for _, a := range c.res.Artifacts {
		if a.Kind == contract.ArtifactEngineLog {
			path = a.Path
		}
	}
	if path == "" {
		return "", nil
	}
	data, err := strictjson.ReadFile(c.fsys, path, contract.MaxArtifactBytes)
	if err != nil {
		return path, nil
	}
	return path, data
}
