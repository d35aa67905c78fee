package e2e

import (
	"io"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/report"
	"github.com/strata-bench/strata/internal/validate"
)

// BenchmarkReport is `strata bench report` on a complete 34-request folder:
// strict validation (schema, types, nulls, rebuilt summaries and rounds,
// re-scoring, artifact hashes) and the plain report. The embedded bundle is
// loaded once per process, as the command does before validating.
func BenchmarkReport(b *testing.B) {
	o := harness{optional: true, slots: 4}.run(b)
	if len(o.invalid) > 0 || len(o.res.Requests) != 34 {
		b.Fatalf("fixture folder: %d requests, %v", len(o.res.Requests), o.invalid)
	}
	bd := bundle(b)
	b.ResetTimer()
	for range b.N {
		v, err := validate.Dir(o.dir, bd)
		if err != nil || len(v.Violations) > 0 {
			b.Fatal(err, v.Violations)
		}
		if err := report.README(io.Discard, v.Results); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBundleLoad is the other part of report's fixed cost, and every
// strata process's: verifying the embedded fixtures against their manifest
// and loading them (not prompts.Bundle, which answers from its first load).
func BenchmarkBundleLoad(b *testing.B) {
	def, ok := protocol.Known().Lookup(protocol.StandInID)
	if !ok {
		b.Fatal("the stand-in protocol is not known")
	}
	for b.Loop() {
		if _, err := fixtures.Load(prompts.FS(), prompts.Where, def); err != nil {
			b.Fatal(err)
		}
	}
}
