// Command hashbench measures model-file hashing side by side with openssl:
// one file, a set of four shards hashed in parallel, and an unchanged set
// answered from the hash cache. Files are read once first, so every
// contender reads from the page cache. scripts/bench.sh runs it.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/strata-bench/strata/internal/modelfiles"
)

func main() {
	sizeMB := flag.Int("mb", 1024, "size of each file in MiB")
	flag.Parse()
	dir, err := os.MkdirTemp("", "hashbench-")
	check(err)
	// Gigabytes of test files: a folder that cannot be removed is said.
	defer func() { check(os.RemoveAll(dir)) }()
	size := int64(*sizeMB) << 20
	var shards []string
	for i := 1; i <= 4; i++ {
		p := filepath.Join(dir, fmt.Sprintf("model-%05d-of-00004.gguf", i))
		write(p, size)
		shards = append(shards, p)
	}
	one := shards[0]
	for _, p := range shards { // warm the page cache
		f, err := os.Open(p)
		check(err)
		_, err = io.Copy(io.Discard, f)
		check(err)
		check(f.Close())
	}
	gb := float64(size) / 1e9

	start := time.Now()
	out, err := exec.Command("openssl", "dgst", "-sha256", one).Output()
	osslRate := 0.0
	if err == nil && len(out) > 0 {
		osslRate = gb / time.Since(start).Seconds()
		fmt.Printf("openssl dgst -sha256, one %d MiB file:   %.2f GB/s\n", *sizeMB, osslRate)
	} else {
		fmt.Printf("openssl: not measured (%v)\n", err)
	}

	best := func(files []string) float64 {
		r := 0.0
		for range 3 {
			var cands []modelfiles.Candidate
			for _, f := range files {
				cands = append(cands, modelfiles.Candidate{Path: f})
			}
			res, took := modelfiles.Hash(context.Background(), cands, modelfiles.Options{})
			for _, h := range res {
				check(h.Err)
			}
			r = max(r, gb*float64(len(files))/took.Seconds())
		}
		return r
	}
	oneRate := best([]string{one})
	fmt.Printf("strata, one file:                         %.2f GB/s", oneRate)
	if osslRate > 0 {
		fmt.Printf("  (%.2f x openssl; target >= 0.9)", oneRate/osslRate)
	}
	fmt.Println()
	setRate := best(shards)
	fmt.Printf("strata, 4 shards in parallel:             %.2f GB/s  (%.2f x one file; target >= 1.7 on 2 cores)\n", setRate, setRate/oneRate)

	cache, err := modelfiles.OpenCache(filepath.Join(dir, "cache.json"))
	check(err)
	var cands []modelfiles.Candidate
	for _, f := range shards {
		cands = append(cands, modelfiles.Candidate{Path: f})
	}
	filled, _ := modelfiles.Hash(context.Background(), cands, modelfiles.Options{Cache: cache})
	for _, h := range filled {
		check(h.Err)
	}
	check(cache.Save())
	start = time.Now()
	c2, err := modelfiles.OpenCache(filepath.Join(dir, "cache.json"))
	check(err)
	res, _ := modelfiles.Hash(context.Background(), cands, modelfiles.Options{Cache: c2})
	took := time.Since(start)
	for _, h := range res {
		if !h.FromCache {
			check(fmt.Errorf("%s was not answered from the cache", h.Name))
		}
	}
	fmt.Printf("unchanged 4-shard set from the cache:     %.2f ms (target < 50 ms)\n", float64(took.Microseconds())/1000)
}

func write(path string, size int64) {
	f, err := os.Create(path)
	check(err)
	buf := make([]byte, 4<<20)
	rand.Read(buf)
	// strata hashes only what starts as a GGUF file does.
	copy(buf, "GGUF")
	for n := int64(0); n < size; n += int64(len(buf)) {
		_, err := f.Write(buf[:min(int64(len(buf)), size-n)])
		check(err)
	}
	check(f.Close())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
