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
			replaceIn(f, contract.ResultsFile, `"source": "NVML nvmlDeviceGetPowerUsage",`, `"source": "NVML nvmlDeviceGetPowerUsage", "not_measured": "no GPU",`, 1)
		}, "/extensions/energy", "exactly one belongs"},
		{"power.csv's rows reordered", func(f fstest.MapFS) {
			replaceIn(f, contract.PowerFile, "-0.005,0,120\n-0.0048,0,124.27\n", "-0.0048,0,124.27\n-0.005,0,120\n", 1)
		}, "/extensions/energy/samples", "line 3: the reading is not after line 2's"},
		{"a row repeated and sample_count raised to match", func(f fstest.MapFS) {
			replaceIn(f, contract.PowerFile, "-0.005,0,120\n", "-0.005,0,120\n-0.005,0,120\n", 1)
			replaceIn(f, contract.ResultsFile, `"sample_count": 629,`, `"sample_count": 630,`, 1)
		}, "/extensions/energy/samples", "line 3: the reading is not after line 2's"},
		{"a draw spelled otherwise", func(f fstest.MapFS) {
			replaceIn(f, contract.PowerFile, "-0.005,0,120\n", "-0.005,0,120.0\n", 1)
		}, "/extensions/energy/samples", "line 2: \"-0.005,0,120.0\" is not the form strata writes"},
		{"CRLF line ends", func(f fstest.MapFS) {
			replaceIn(f, contract.PowerFile, "\n", "\r\n", -1)
		}, "/extensions/energy/samples", "line 1"},
		{"a reading of a GPU not sampled", func(f fstest.MapFS) {
			replaceIn(f, contract.PowerFile, "-0.005,0,120\n", "-0.005,0,120\n-0.005,1,120\n", 1)
			replaceIn(f, contract.ResultsFile, `"sample_count": 629,`, `"sample_count": 630,`, 1)
		}, "/extensions/energy/samples", "line 3: GPU 1 is not one of the sampled GPUs [0]"},
		{"the source edited", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"source": "NVML nvmlDeviceGetPowerUsage",`, `"source": "a power meter on the wall",`, 1)
		}, "/extensions/energy/source", `"a power meter on the wall" is not a source strata samples`},
		{"a dropped count of an unknown reason", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"sample_count": 629,`, `"sample_count": 629, "dropped": [{"reason": "cosmic rays", "count": 2}],`, 1)
		}, "/extensions/energy/dropped/0", `"cosmic rays" is not a reason`},
		{"readings dropped past a cap no GPU reached", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"sample_count": 629,`, `"sample_count": 629, "dropped": [{"reason": "`+power.DropCap+`", "count": 2}],`, 1)
		}, "/extensions/energy/dropped/0", "no GPU holds 524288 readings"},
		{"dropped counts out of order", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"sample_count": 629,`, `"sample_count": 629, "dropped": [{"reason": "`+power.DropNegative+`", "count": 1}, {"reason": "`+power.DropNotFinite+`", "count": 1}],`, 1)
		}, "/extensions/energy/dropped/1", "not after"},
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
