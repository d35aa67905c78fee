package provenance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/modelfiles"
)

// TestServerNamedFilesAreRefused: a model_path naming /etc/passwd, a climb
// to it from the engine's folder, or a split set claiming 99,999 shards is
// refused: no model file, a reason that says so, nothing of the file in the
// facts, and nothing in the hash cache. (cli's
// TestServerNamedFileIsNotHashed holds the climb through a whole run.)
func TestServerNamedFilesAreRefused(t *testing.T) {
	t.Parallel()
	for _, modelPath := range []string{"/etc/passwd", "../../../../../../../../etc/passwd", "/srv/x-00001-of-99999.gguf"} {
		dir := t.TempDir()
		cachePath := filepath.Join(dir, "model-hashes.json")
		cache, err := modelfiles.OpenCache(cachePath)
		if err != nil {
			t.Fatal(err)
		}
		f := Gather(context.Background(), Inputs{ModelPath: modelPath, EngineDir: dir, Cache: cache})
		facts, _ := json.Marshal(f)
		if f.ModelFiles != nil || f.Extensions.GGUF != nil || !strings.Contains(f.Missing[contract.PtrModelFiles], "refused") || strings.Contains(string(facts), "root:x:0") {
			t.Errorf("%s: files %+v, GGUF %+v, missing %q", modelPath, f.ModelFiles, f.Extensions.GGUF, f.Missing[contract.PtrModelFiles])
		}
		if err := cache.Save(); err != nil {
			t.Fatal(err)
		}
		if c, _ := os.ReadFile(cachePath); strings.Contains(string(c), "passwd") || strings.Contains(string(c), "99999") {
			t.Errorf("%s entered the hash cache: %s", modelPath, c)
		}
	}
}
