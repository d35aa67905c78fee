// Package probetest is the probes' stand-in machine for tests: tools that
// answer from recorded outputs (nvidia-smi, amd-smi, lsblk), keyed by the
// longest matching prefix of the command line, and an nvidia-smi that
// streams a recorded power trace at the -lms interval it is given, as the
// real one does. It imports nothing of the probe package, so the probe's
// own tests use it too.
package probetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Hang is the answer of a tool that never answers (until ctx ends).
const Hang = "HANG"

// Recorded answers each tool from a file under Dir. Answers maps a command
// line prefix to a file name (or Hang); Streams maps one to a power trace
// file, streamed one block (every GPU's line) per -lms interval.
type Recorded struct {
	Dir     string
	Answers map[string]string
	Streams map[string]string
}

func longest(m map[string]string, key string) string {
	best := ""
	for prefix := range m { // the longest matching prefix, whatever the map order
		if strings.HasPrefix(key, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	return best
}

// Run implements the probes' Runner.
func (r Recorded) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	key := strings.Join(append([]string{name}, args...), " ")
	best := longest(r.Answers, key)
	if best == "" {
		return nil, errors.New(name + ": not installed")
	}
	if file := r.Answers[best]; file != Hang {
		return os.ReadFile(filepath.Join(r.Dir, file))
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// Stream implements the probes' Streamer: the trace's blocks (a block ends
// where a GPU index repeats) are written one per -lms interval, over and
// over, until ctx ends or the stream is closed. A real ticker paces it, as
// the real tool is paced by real time: the run it samples is a real
// process on the real clock.
func (r Recorded) Stream(ctx context.Context, name string, args ...string) (io.ReadCloser, error) {
	key := strings.Join(append([]string{name}, args...), " ")
	best := longest(r.Streams, key)
	if best == "" {
		return nil, errors.New(name + ": not installed")
	}
	data, err := os.ReadFile(filepath.Join(r.Dir, r.Streams[best]))
	if err != nil {
		return nil, err
	}
	blocks, err := traceBlocks(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Streams[best], err)
	}
	interval := time.Duration(0)
	for i, a := range args {
		if a == "-lms" && i+1 < len(args) {
			ms, _ := strconv.Atoi(args[i+1])
			interval = time.Duration(ms) * time.Millisecond
		}
	}
	if interval <= 0 {
		return nil, fmt.Errorf("%s: the stand-in streams only with -lms N", name)
	}
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for i := 0; ; i++ {
			if _, err := pw.Write(blocks[i%len(blocks)]); err != nil {
				return
			}
			select {
			case <-ctx.Done():
				_ = pw.Close() // a pipe's writer always closes (nil)
				return
			case <-t.C:
			}
		}
	}()
	return closer{pr, cancel}, nil
}

// traceBlocks splits a trace into the lines of one sampling instant each.
func traceBlocks(data []byte) ([][]byte, error) {
	var blocks [][]byte
	var cur bytes.Buffer
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		idx, _, _ := strings.Cut(sc.Text(), ",")
		if seen[idx] {
			blocks = append(blocks, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			seen = map[string]bool{}
		}
		seen[idx] = true
		cur.WriteString(sc.Text() + "\n")
	}
	if cur.Len() > 0 {
		blocks = append(blocks, cur.Bytes())
	}
	if len(blocks) == 0 {
		return nil, errors.New("the trace is empty")
	}
	return blocks, nil
}

type closer struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (c closer) Close() error {
	c.cancel()
	return c.PipeReader.Close()
}
