// Package modelfiles finds the model files a run used (the server's
// model_path, every shard of a split GGUF, files named in the engine's
// arguments or the profile's model_files) and hashes them: SHA-256 of each,
// shards in parallel with large buffers, progress with rate and ETA, and a
// cache keyed on (path, size, mtime, inode change time, device, inode) so
// an unchanged 70 GB pack is not read again.
package modelfiles

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-bench/strata/internal/atomicfile"
	"github.com/strata-bench/strata/internal/clock"
	"github.com/strata-bench/strata/internal/inputfile"
)

// Candidate is a file to hash and where its name came from.
type Candidate struct {
	Path string // absolute, local only: never written to a result
	From string
}

var shardRE = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// MaxShards bounds a split set: the largest packs come in a few dozen
// shards, and a name claiming more (x-00001-of-99999.gguf) is refused
// rather than expanded into as many file names.
const MaxShards = 512

// Shards expands a split GGUF name (x-00001-of-00004.gguf) into every shard
// of the set; any other path is returned alone. A set larger than MaxShards,
// or a shard number past the count, is an error.
func Shards(path string) ([]string, error) {
	m := shardRE.FindStringSubmatch(path)
	if m == nil {
		return []string{path}, nil
	}
	// Both are five digits (shardRE), so they always parse.
	i, _ := strconv.Atoi(m[2])
	n, _ := strconv.Atoi(m[3])
	switch {
	case n < 1 || i < 1 || i > n:
		return nil, fmt.Errorf("%s names shard %d of %d, which cannot exist", filepath.Base(path), i, n)
	case n > MaxShards:
		return nil, fmt.Errorf("%s names a set of %d shards, more than the %d strata expands", filepath.Base(path), n, MaxShards)
	}
	out := make([]string, 0, n)
	for k := 1; k <= n; k++ {
		out = append(out, fmt.Sprintf("%s-%05d-of-%s.gguf", m[1], k, m[3]))
	}
	return out, nil
}

// modelFlags are llama-server arguments that name model files.
var modelFlags = map[string]bool{"-m": true, "--model": true, "-md": true, "--model-draft": true, "--mmproj": true}

// FromArgs returns the model files named in an engine command line.
func FromArgs(args []string) []string {
	var out []string
	for i, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok && modelFlags[k] {
			out = append(out, v)
			continue
		}
		if modelFlags[a] && i+1 < len(args) {
			out = append(out, args[i+1])
		}
	}
	return out
}

// Sources say where model files are named: the server's model_path and the
// engine's arguments (relative paths resolve against the engine's working
// folder, as the engine itself resolved them), and the profile's globs
// (relative to the profile's folder).
type Sources struct {
	// ModelPath is the model file the server names, and ModelPathFrom the
	// words for where it names it (dialect.Dialect.ModelPathSource).
	ModelPath     string
	ModelPathFrom string
	EngineArgs    []string
	EngineDir     string
	Globs         []string
	GlobDir       string
	// Named are files an engine's own config file names (Strata's --native
	// and --ple-gguf), relative to NamedDir; NamedFrom says which file.
	Named     []string
	NamedDir  string
	NamedFrom string
}

// Find collects the candidates, each expanded to all shards, without
// duplicates.
func Find(src Sources) ([]Candidate, []string) {
	seen := map[string]bool{}
	var out []Candidate
	problems := []string{}
	add := func(p, dir, from string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		shards, err := Shards(filepath.Clean(p))
		if err != nil {
			problems = append(problems, "refused: "+err.Error()+" ("+from+")")
			return
		}
		for _, s := range shards {
			if !seen[s] {
				seen[s] = true
				out = append(out, Candidate{Path: s, From: from})
			}
		}
	}
	from := src.ModelPathFrom
	if from == "" {
		from = "the server's model_path"
	}
	add(src.ModelPath, src.EngineDir, from)
	for _, a := range FromArgs(src.EngineArgs) {
		add(a, src.EngineDir, "the engine's arguments")
	}
	for _, n := range src.Named {
		add(n, src.NamedDir, src.NamedFrom)
	}
	for _, g := range src.Globs {
		pattern := g
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(src.GlobDir, pattern)
		}
		matches, err := filepath.Glob(pattern)
		if err != nil || len(matches) == 0 {
			problems = append(problems, fmt.Sprintf("the profile's model_files entry %q matches no file", filepath.Base(g)))
			continue
		}
		sort.Strings(matches)
		for _, m := range matches {
			add(m, src.GlobDir, "the profile's model_files")
		}
	}
	return out, problems
}

// FileName is the name a result records of a model file's path: its last
// element, where a backslash ends an element too (a Windows server's
// C:\Users\tom\x.gguf is x.gguf), so no folder of any machine is written
// and the name is one the result format admits.
func FileName(p string) string { return path.Base(strings.ReplaceAll(p, `\`, "/")) }

// Hashed is one file's outcome.
type Hashed struct {
	Path       string // local path (never written to a result)
	Name       string // the pack-relative file name recorded in the result
	From       string
	Size       int64
	SHA256     string
	FromCache  bool
	ComputedAt time.Time
	Err        error
}

// Options control Hash.
type Options struct {
	Cache   *Cache
	Rehash  bool
	Workers int
	// Progress, when set, is called with bytes done and total, at most a
	// few times a second.
	Progress func(done, total int64)
	// Now is the clock (nil: the runtime's).
	Now clock.Func
}

// bufSize is the read size: large reads keep the hash, not the syscalls,
// the limit.
const bufSize = 4 << 20

// Hash hashes the candidates, in parallel up to Workers (default: the
// number of cores, at most the number of files). It returns the outcomes in
// input order and the wall time spent.
func Hash(ctx context.Context, cands []Candidate, o Options) ([]Hashed, time.Duration) {
	now := clock.Or(o.Now)
	start := now()
	out, todo, total := examine(cands, o)
	var done atomic.Int64
	stopProgress := reportProgress(o.Progress, &done, total)
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, len(todo))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, bufSize)
			for i := range jobs {
				sum, err := hashFile(ctx, out[i].Path, buf, &done)
				if err != nil {
					out[i].Err = err
					continue
				}
				out[i].SHA256, out[i].ComputedAt = sum, now().UTC()
				if o.Cache != nil {
					if st, err := os.Stat(out[i].Path); err == nil {
						o.Cache.Store(out[i].Path, st, sum, out[i].ComputedAt)
					}
				}
			}
		}()
	}
	for _, i := range todo {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	stopProgress()
	return out, now().Sub(start)
}

// examine looks at each candidate before anything is read: a model file
// (a regular file that starts with the GGUF magic), answered from the cache
// when it can be; it returns the outcomes so far, the ones to hash and
// their bytes.
func examine(cands []Candidate, o Options) (out []Hashed, todo []int, total int64) {
	out = make([]Hashed, len(cands))
	for i, c := range cands {
		out[i] = Hashed{Path: c.Path, Name: FileName(c.Path), From: c.From}
		st, err := os.Stat(c.Path)
		if err != nil {
			out[i].Err = err
			continue
		}
		if !st.Mode().IsRegular() {
			out[i].Err = fmt.Errorf("%w: %s is not a regular file", ErrNotModel, out[i].Name)
			continue
		}
		if err := checkMagic(c.Path); err != nil {
			out[i].Err = err
			continue
		}
		out[i].Size = st.Size()
		if o.Cache != nil {
			// A hash this process computed moments ago (while the engine
			// loaded) stands even with Rehash.
			if sum, at, fresh, ok := o.Cache.Lookup(c.Path, st); ok && (fresh || !o.Rehash) {
				out[i].SHA256, out[i].FromCache, out[i].ComputedAt = sum, !fresh, at
				continue
			}
		}
		total += st.Size()
		todo = append(todo, i)
	}
	return out, todo, total
}

// reportProgress tells progress the bytes done a few times a second until
// the returned stop is called (then once more).
func reportProgress(progress func(done, total int64), done *atomic.Int64, total int64) (stop func()) {
	if progress == nil || total == 0 {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				progress(done.Load(), total)
				return
			case <-t.C:
				progress(done.Load(), total)
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// ErrNotModel marks a file that is not a model file: it is never hashed,
// recorded or cached.
var ErrNotModel = errors.New("not a GGUF model file")

// ggufMagic opens every GGUF file.
var ggufMagic = []byte("GGUF")

// checkMagic refuses a file that does not start with the GGUF magic: the
// server names the file, and a hostile one could name /etc/passwd.
func checkMagic(path string) error {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read only
	head := make([]byte, len(ggufMagic))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, ggufMagic) {
		return fmt.Errorf("%w: %s does not start with the GGUF magic", ErrNotModel, filepath.Base(path))
	}
	return nil
}

// SHA256 is the hex SHA-256 of the regular file at path, read in 1 MiB
// chunks until ctx ends.
func SHA256(ctx context.Context, path string) (string, error) {
	return hashFile(ctx, path, make([]byte, 1<<20), new(atomic.Int64))
}

func hashFile(ctx context.Context, path string, buf []byte, done *atomic.Int64) (string, error) {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }() // read only
	h := sha256.New()
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := f.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			done.Add(int64(n))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", filepath.Base(path), err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Cache remembers hashes of unchanged files. It is safe for concurrent use.
type Cache struct {
	path    string
	mu      sync.Mutex
	entries map[string]cacheEntry
	// fresh are the entries this process computed (not from an earlier
	// run): --rehash distrusts only the others.
	fresh map[string]bool
	dirty bool
}

type cacheEntry struct {
	SHA256     string    `json:"sha256"`
	ComputedAt time.Time `json:"computed_at"`
}

// OpenCache reads the cache file at path (missing: empty).
func OpenCache(path string) (*Cache, error) {
	c := &Cache{path: path, entries: map[string]cacheEntry{}, fresh: map[string]bool{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hash cache %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &c.entries); err != nil {
		// A corrupt cache costs a rehash, never a wrong hash.
		c.entries = map[string]cacheEntry{}
	}
	return c, nil
}

// Lookup returns a cached hash for an unchanged file; fresh says this
// process computed it.
func (c *Cache) Lookup(path string, st os.FileInfo) (sum string, at time.Time, fresh, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(path, st)
	e, ok := c.entries[k]
	return e.SHA256, e.ComputedAt, c.fresh[k], ok
}

// Store remembers a hash.
func (c *Cache) Store(path string, st os.FileInfo, sum string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(path, st)
	c.entries[k] = cacheEntry{SHA256: sum, ComputedAt: at}
	c.fresh[k] = true
	c.dirty = true
}

// Save writes the cache atomically (temporary file and rename).
func (c *Cache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	data, err := json.MarshalIndent(c.entries, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(c.path, data, 0o644); err != nil {
		return err
	}
	c.dirty = false
	return nil
}

// key is what makes a file unchanged: its path, size, mtime, inode change
// time, device and inode. Size and mtime can be put back after a change in
// place (touch -d); the change time cannot.
func key(path string, st os.FileInfo) string {
	dev, ino := fileID(st)
	return fmt.Sprintf("%s|%d|%d|%d|%d|%d", path, st.Size(), st.ModTime().UnixNano(), changeTime(st), dev, ino)
}
