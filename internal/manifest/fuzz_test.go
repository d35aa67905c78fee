package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: the approved manifest is outside input; Parse never panics,
// and what it accepts has the format, the version and an entries array.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"format":"strata-approved-benchmarks","schema_version":1,"entries":[]}`))
	f.Add([]byte(`{"format":"strata-approved-benchmarks","schema_version":1,"entries":[{"run_id":"x","review_pr":"javascript:alert(1)"}]}`))
	f.Add([]byte(`{"format":"strata-approved-benchmarks","format":"x","schema_version":1,"entries":[]}`))
	f.Add([]byte(`{"format":"strata-approved-benchmarks","schema_version":1,"entries":[{"run_id":"x","replaced_by":{"run_id":"x","results_sha256":"y"}}]}`))
	if data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "site-repo.git", "HEAD")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err == nil && (m.Format != Format || m.SchemaVersion != SchemaVersion || m.Entries == nil) {
			t.Fatalf("accepted %+v", m)
		}
	})
}
