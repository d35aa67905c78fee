package validate

import (
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/strictjson"
)

// checkEngineLog: extensions.engine.log names the engine_log artifact, and
// the log agrees with the records ("Logs and output evidence must agree
// with the JSON"). Where the engine's log prints a timer line per request
// (dialect.LogRequests) and the part written while the run went holds
// any, every request whose engine timings outputs.jsonl keeps has its
// lines there with the same counts and times (measure.PairLog). Lines no
// record pairs with are requests the engine answered that strata did not
// send, which make the run nonconforming (derive.Foreign, which
// checkStatus derives again). A log that prints no timer line (a lower
// verbosity) says nothing against the records.
func (c *checker) checkEngineLog() {
	path, data := c.engineLog()
	if e := c.res.Extensions.Engine; e != nil && e.Log != nil && *e.Log != path {
		c.add(contract.PtrEngineLog, "is %q, which is not the engine_log artifact", *e.Log)
	}
	d, known := c.recordedDialect()
	if data == nil || !known {
		return
	}
	p, ok := measure.PairLog(d, data, c.res.Requests, c.outs)
	if !ok || !p.Whole {
		return
	}
	for _, u := range p.Unlogged {
		c.add(contract.Pointer("requests", u.Index), "%s has no timer lines of %s below line %d, where the run's part begins (its timings in %s: %s): the log and the records disagree",
			path, c.res.Requests[u.Index].ID, p.From, contract.OutputsFile, u.Timers)
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
