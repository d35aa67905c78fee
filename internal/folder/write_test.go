package folder

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/validate"
)

// TestAssembleStatusAndValidity: a run off loopback that a signal ended
// before its first request is nonconforming (the server's place) and
// partial (skipped work, the interruption), with every reason listed, and
// the folder it renders to validates.
func TestAssembleStatusAndValidity(t *testing.T) {
	t.Parallel()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rec := &record.Run{ID: "20261201T100000Z-abcdef", StartedAt: started, Origin: started, BaseURL: "http://10.0.0.5:8080",
		Interrupted: true, Interruption: "SIGHUP (the terminal or the SSH session closed)",
		Server: record.Server{Dialect: dialect.Identify(contract.ServerEvidence{}).Record()}} // it never answered
	for _, req := range protocol.Schedule(false) {
		f, _ := b.Fixture(req.ID)
		rec.Requests = append(rec.Requests, &record.Request{Req: req, Fixture: f, SkipReason: "the run was interrupted"})
	}
	commit := strings.Repeat("ab", 20)
	facts := record.Facts{Protocol: b.Protocol, StrataCommit: &commit, RunnerCommit: &commit, Missing: map[string]string{
		"/hardware/gpus": "test", "/hardware/cpu": "test", "/hardware/ram_bytes": "test", "/hardware/storage": "test",
		"/software/os": "test", "/software/drivers": "test", "/software/runtime": "test", "/software/build_kind": "test"}}
	maxShared := b.MaxShared()
	a, err := result.Assemble(rec, record.Identity{Track: "custom", Command: "strata bench run --url http://10.0.0.5:8080"}, facts, maxShared, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Results.Run.Status != contract.StatusNonconforming {
		t.Errorf("status %s", a.Results.Run.Status)
	}
	sr := a.Results.Extensions.StatusReasons
	all := strings.Join(append(contract.Texts(sr.Nonconforming), contract.Texts(sr.Partial)...), "\n")
	for _, want := range []string{"is not on loopback", "no model file hashes", "the effective chat template is unknown", "required work was skipped: 22 of the 22", "the run was interrupted: SIGHUP"} {
		if !strings.Contains(all, want) {
			t.Errorf("reasons lack %q:\n%s", want, all)
		}
	}
	files, err := Render(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	for _, v := range validate.FS(fsys, b).Violations {
		t.Errorf("the rendered folder breaks a rule: %s", v)
	}
}
