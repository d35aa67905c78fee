package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/resulttest"
)

// TestChartsAreDrawnAgain: the folder's charts are drawn again from its
// results.json and compared byte for byte. One byte of a chart changed is
// a violation naming the chart, whether its hash in results.json was
// recomputed or not; a chart listed as another kind than provenance is
// one too.
func TestChartsAreDrawnAgain(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	dir := resulttest.Folder(t, t.TempDir(), resulttest.Options{EngineLog: true})
	load := func() fstest.MapFS {
		fsys := fstest.MapFS{}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			fsys[e.Name()] = &fstest.MapFile{Data: data, Mode: 0o644}
		}
		return fsys
	}
	for _, x := range FS(load(), b).Violations {
		t.Fatalf("the folder as written: %s", x)
	}
	chart := charts.FileName(contract.MetricDecodeTPS)
	oneByte := func(fsys fstest.MapFS) {
		data := []byte(string(fsys[chart].Data))
		i := strings.Index(string(data), "n=3")
		data[i+2] = '4'
		fsys[chart].Data = data
	}
	for _, c := range []struct {
		name   string
		edit   func(fstest.MapFS)
		rehash bool
		says   string
	}{
		{"one byte", oneByte, false, chart + " is not the chart results.json gives"},
		{"one byte, its hash recomputed", oneByte, true, chart + " is not the chart results.json gives"},
		{"listed as config", func(fsys fstest.MapFS) {
			editJSON(t, fsys, contract.ResultsFile, func(doc map[string]any) {
				for _, a := range doc["artifacts"].([]any) {
					if a := a.(map[string]any); a["path"] == chart {
						a["kind"] = contract.ArtifactConfig
					}
				}
			})
		}, false, chart + " is a chart, listed as config: a chart is a provenance artifact"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fsys := load()
			c.edit(fsys)
			if c.rehash {
				rehash(t, fsys)
			}
			v := FS(fsys, b)
			for _, x := range v.Violations {
				if strings.HasPrefix(x.Pointer, "/artifacts/") && strings.Contains(x.Message, c.says) {
					// The text about the difference is cut at whole
					// characters (the en dash of min–max is three bytes).
					if strings.Contains(x.Message, `\x`) {
						t.Errorf("the message shows a character cut in bytes: %s", x.Message)
					}
					return
				}
			}
			t.Errorf("no violation saying %q; violations:\n%v", c.says, v.Violations)
		})
	}
}
