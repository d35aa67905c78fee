package e2e

import (
	"io"
	"testing"

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
		report.README(io.Discard, v.Results)
	}
}

// BenchmarkBundleLoad is the other part of report's fixed cost: verifying
// and loading the embedded fixtures.
func BenchmarkBundleLoad(b *testing.B) {
	for range b.N {
		bundle(b)
	}
}
