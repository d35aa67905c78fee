package validate

import (
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/power"
)

// TestValidatorDerivesTheEnergyAgain: the committed baseline measured
// energy; each edit of its energy block or its readings, with the hashes
// recomputed, is caught where it was made.
func TestValidatorDerivesTheEnergyAgain(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	for _, c := range []struct {
		name   string
		mutate func(fstest.MapFS)
		ptr    string
		says   string
	}{
		{"a request's joules lowered", func(f fstest.MapFS) {
			re := regexp.MustCompile(`"joules": ([0-9])`)
			f[contract.ResultsFile].Data = re.ReplaceAll(f[contract.ResultsFile].Data, []byte(`"joules": 1${1}`))
		}, "/extensions/energy/requests", "does not follow from power.csv"},
		{"the readings raised in power.csv", func(f fstest.MapFS) {
			rs, err := power.ParseCSV(f[contract.PowerFile].Data)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rs {
				rs[i].W *= 10
			}
			f[contract.PowerFile].Data = power.FormatCSV(rs)
		}, "/extensions/energy/", "does not follow from power.csv"},
		{"a reading dropped", func(f fstest.MapFS) {
			data := string(f[contract.PowerFile].Data)
			_, rest, _ := strings.Cut(data, "\n")
			_, rest, _ = strings.Cut(rest, "\n")
			f[contract.PowerFile].Data = []byte("t_s,gpu,w\n" + rest)
		}, "/extensions/energy/sample_count", "the samples hold"},
		{"a malformed reading", func(f fstest.MapFS) {
			replaceIn(f, contract.PowerFile, "\n", "\n1,0,[N/A]\n", 1)
		}, "/extensions/energy/samples", "line 2"},
		{"the samples' artifact unlisted", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"path": "power.csv"`, `"path": "chat_template.jinja"`, 1)
		}, "/artifacts/", "is listed twice"},
		{"a source and a reason it measured nothing", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"source": "a synthetic trace (internal/resulttest)",`, `"source": "a synthetic trace (internal/resulttest)", "not_measured": "no GPU",`, 1)
		}, "/extensions/energy", "exactly one belongs"},
		{"GPUs other than the hardware's", func(f fstest.MapFS) {
			re := regexp.MustCompile(`"gpus": \[\s*0\s*\]`)
			f[contract.ResultsFile].Data = re.ReplaceAll(f[contract.ResultsFile].Data, []byte(`"gpus": [1]`))
		}, "/extensions/energy/gpus", "hardware.gpus are [0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fsys := folder(t, "baseline")
			c.mutate(fsys)
			mustCatch(t, fsys, b, c.ptr, c.says)
		})
	}
}
