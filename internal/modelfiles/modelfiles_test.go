package modelfiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestShards(t *testing.T) {
	t.Parallel()
	got, err := Shards("/m/Qwen3-IQ3_XXS-00002-of-00003.gguf")
	want := []string{"/m/Qwen3-IQ3_XXS-00001-of-00003.gguf", "/m/Qwen3-IQ3_XXS-00002-of-00003.gguf", "/m/Qwen3-IQ3_XXS-00003-of-00003.gguf"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("%v %v", got, err)
	}
	if got, err := Shards("/m/single.gguf"); err != nil || !slices.Equal(got, []string{"/m/single.gguf"}) {
		t.Errorf("%v", got)
	}
	// A hostile server's name does not become 99,999 file names.
	for _, bad := range []string{"/m/x-00001-of-99999.gguf", "/m/x-00003-of-00002.gguf", "/m/x-00000-of-00002.gguf"} {
		if got, err := Shards(bad); err == nil || got != nil {
			t.Errorf("%s: %d names, %v", bad, len(got), err)
		}
	}
	if got, err := Shards(fmt.Sprintf("/m/x-00001-of-%05d.gguf", MaxShards)); err != nil || len(got) != MaxShards {
		t.Errorf("the largest allowed set: %d, %v", len(got), err)
	}
}

// TestOnlyModelFilesAreHashed: a file the server names that is not GGUF
// (/etc/passwd, a text file named .gguf) is refused, never hashed and never
// cached.
func TestOnlyModelFilesAreHashed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "fake.gguf"), []byte("root:x:0:0:root:/root:/bin/bash\n"))
	writeFile(t, filepath.Join(dir, "real.gguf"), []byte("GGUF\x03\x00\x00\x00"))
	cache, _ := OpenCache(filepath.Join(dir, "cache.json"))
	res, _ := Hash(context.Background(), []Candidate{{Path: filepath.Join(dir, "fake.gguf")}, {Path: "/etc/passwd"}, {Path: filepath.Join(dir, "real.gguf")}}, Options{Cache: cache})
	for _, r := range res[:2] {
		if !errors.Is(r.Err, ErrNotModel) || r.SHA256 != "" {
			t.Errorf("%s: %v %q", r.Name, r.Err, r.SHA256)
		}
	}
	if res[2].Err != nil || res[2].SHA256 == "" {
		t.Errorf("real: %+v", res[2])
	}
	if len(cache.entries) != 1 {
		t.Errorf("the cache holds %d entries; only the model file belongs there", len(cache.entries))
	}
	if _, problems := Find(Sources{ModelPath: "/m/x-00001-of-99999.gguf"}); len(problems) != 1 || !strings.Contains(problems[0], "99999 shards") {
		t.Errorf("problems %v", problems)
	}
}

func TestFindAndHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"pack/q-00001-of-00002.gguf": "GGUF shard one", "pack/q-00002-of-00002.gguf": "GGUF shard two",
		"draft.gguf": "GGUF draft", "extra.bin": "GGUF x",
	}
	for n, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, n), []byte(c))
	}
	cands, problems := Find(Sources{ModelPath: filepath.Join(dir, "pack/q-00001-of-00002.gguf"),
		EngineArgs: []string{"-m", "pack/q-00002-of-00002.gguf", "--model-draft=draft.gguf", "-c", "4096"}, EngineDir: dir,
		Globs: []string{"*.bin", "nothing-*.gguf"}, GlobDir: dir})
	if len(cands) != 4 || len(problems) != 1 {
		t.Fatalf("candidates %+v problems %v", cands, problems)
	}
	cachePath := filepath.Join(dir, "cache", "h.json")
	cache, _ := OpenCache(cachePath)
	res, _ := Hash(context.Background(), append(cands, Candidate{Path: filepath.Join(dir, "missing.gguf")}), Options{Cache: cache, Workers: 2})
	for _, r := range res[:4] {
		sum := sha256.Sum256([]byte(files[mustRel(t, dir, r.Path)]))
		if r.Err != nil || r.SHA256 != hex.EncodeToString(sum[:]) || r.FromCache || r.Name != filepath.Base(r.Path) {
			t.Errorf("%+v", r)
		}
	}
	if res[4].Err == nil || res[4].SHA256 != "" {
		t.Error("a missing file has no hash and an error")
	}
	if err := cache.Save(); err != nil {
		t.Fatal(err)
	}
	// Unchanged: from the cache. Changed: hashed again. --rehash: all again.
	cache2, _ := OpenCache(cachePath)
	writeFile(t, filepath.Join(dir, "draft.gguf"), []byte("GGUF draft v2"))
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "draft.gguf"), future, future); err != nil {
		t.Fatal(err)
	}
	res, _ = Hash(context.Background(), cands, Options{Cache: cache2})
	for _, r := range res {
		if wantCached := filepath.Base(r.Path) != "draft.gguf"; r.FromCache != wantCached || r.ComputedAt.IsZero() {
			t.Errorf("%s: from cache %v", r.Name, r.FromCache)
		}
	}
	res, _ = Hash(context.Background(), cands, Options{Cache: cache2, Rehash: true})
	for _, r := range res {
		if r.FromCache {
			t.Errorf("--rehash: %s came from the cache", r.Name)
		}
	}
}

// writeFile writes a test's file or ends the test.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRel(t *testing.T, dir, p string) string {
	r, err := filepath.Rel(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestProgress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "big.gguf")
	writeFile(t, p, append([]byte("GGUF"), make([]byte, 9<<20-4)...))
	var last [2]int64
	Hash(context.Background(), []Candidate{{Path: p}}, Options{Progress: func(d, tot int64) { last = [2]int64{d, tot} }})
	if last[0] != 9<<20 || last[1] != 9<<20 {
		t.Errorf("final progress %v", last)
	}
}

// TestRecordedNameIsTheFileName: the name a result records is the last
// element of a path, where a backslash ends an element too: a Windows
// server's model_path names x.gguf, and no folder of any machine is
// written (the result format admits no backslash in a model file's path).
func TestRecordedNameIsTheFileName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	local := filepath.Join(dir, `models\Qwen3-8B.gguf`)
	writeFile(t, local, []byte("GGUF\x03\x00\x00\x00"))
	res, _ := Hash(context.Background(), []Candidate{{Path: local}, {Path: filepath.Join(dir, `C:\Users\tom\models\Qwen3-8B-Q4_K_M.gguf`)}}, Options{})
	for i, want := range []string{"Qwen3-8B.gguf", "Qwen3-8B-Q4_K_M.gguf"} {
		if res[i].Name != want {
			t.Errorf("%s is recorded as %q, want %q", res[i].Path, res[i].Name, want)
		}
	}
	if res[0].SHA256 == "" {
		t.Errorf("the local file was not hashed: %v", res[0].Err)
	}
}

// TestCacheKeysOnTheChangeTime: a model file changed in place with its
// size and mtime put back is hashed again, not answered from the cache:
// the inode's change time moved, and nothing can put that back.
func TestCacheKeysOnTheChangeTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	writeFile(t, path, []byte("GGUF weights one"))
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cachePath := filepath.Join(dir, "h.json")
	cache, _ := OpenCache(cachePath)
	res, _ := Hash(context.Background(), []Candidate{{Path: path}}, Options{Cache: cache})
	if err := cache.Save(); err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	if !changeTimeMoves(t, dir, before) {
		t.Skip("this system keeps no change time")
	}
	writeFile(t, path, []byte("GGUF weights two")) // the same size
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("size and mtime were not put back: %d %v", after.Size(), after.ModTime())
	}
	reopened, _ := OpenCache(cachePath)
	res, _ = Hash(context.Background(), []Candidate{{Path: path}}, Options{Cache: reopened})
	sum := sha256.Sum256([]byte("GGUF weights two"))
	if res[0].FromCache || res[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("from cache %v, SHA-256 %s; want the new bytes' %x", res[0].FromCache, res[0].SHA256, sum)
	}
}

// changeTimeMoves waits until a file changed now gets another change time
// than before's (the kernel stamps change times from a clock that ticks
// every few milliseconds), and reports whether the system keeps one.
func changeTimeMoves(t *testing.T, dir string, before os.FileInfo) bool {
	t.Helper()
	probe := filepath.Join(dir, "probe")
	for range 1_000_000 {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(probe)
		if err != nil {
			t.Fatal(err)
		}
		if c := changeTime(st); c == 0 {
			return false
		} else if c > changeTime(before) {
			return true
		}
	}
	t.Fatal("the change time never moved")
	return false
}
