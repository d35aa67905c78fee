// Package install finds where the running strata came from: its commit (the
// binary's VCS stamp, a source checkout's HEAD read with go-git, or a
// release's COMMIT file) and whether it is a source checkout. It is apart
// from internal/version so that what only prints a version (the simulator)
// does not pull in go-git.
package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/strata-bench/strata/internal/version"
)

// Info is where the running strata came from.
type Info struct {
	// Commit is the full commit; "" when unknown (Reason says why).
	Commit string
	Source string // what the commit was read from
	// Kind is "source" for a source checkout (a folder with .git) and
	// "release" otherwise.
	Kind   string
	Reason string
}

// Module is this project's module path; a checkout is recognised by it.
const Module = "github.com/strata-bench/strata"

// Detect finds the install's commit: the VCS stamp Go embeds at build time,
// then a source checkout of strata holding the working directory (git
// rev-parse HEAD, read with go-git), then a COMMIT file beside the binary (a
// release archive carries one).
func Detect(workdir, executable string) Info {
	checkout := findCheckout(workdir)
	if checkout == "" && executable != "" {
		checkout = findCheckout(filepath.Dir(executable))
	}
	kind := "release"
	if checkout != "" {
		kind = "source"
	}
	if c, modified := version.Commit(); c != "" {
		src := "the binary's embedded VCS stamp"
		if modified {
			src += " (built from a modified tree)"
		}
		return Info{Commit: c, Source: src, Kind: kind}
	}
	if checkout != "" {
		c, err := headOf(checkout)
		if err == nil {
			return Info{Commit: c, Source: "git rev-parse HEAD of the source checkout", Kind: kind}
		}
		return Info{Kind: kind, Reason: "the source checkout's HEAD cannot be read: " + err.Error()}
	}
	if executable != "" {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(executable), "COMMIT"))
		if err == nil {
			c := strings.TrimSpace(string(data))
			if isFullCommit(c) {
				return Info{Commit: c, Source: "the COMMIT file of the release", Kind: kind}
			}
			return Info{Kind: kind, Reason: "the COMMIT file beside the binary does not hold a full commit"}
		}
	}
	return Info{Kind: kind, Reason: "no VCS stamp in the binary, no source checkout and no COMMIT file beside the binary"}
}

func isFullCommit(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// findCheckout returns the root of the strata checkout holding dir, or "".
func findCheckout(dir string) string {
	for d := dir; d != ""; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if strings.Contains(string(data), "module "+Module+"\n") {
				if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
					return d
				}
			}
			return ""
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return ""
}

func headOf(dir string) (string, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return "", err
	}
	ref, err := repo.Head()
	if err != nil {
		return "", fmt.Errorf("HEAD: %w", err)
	}
	h := ref.Hash().String()
	if !isFullCommit(h) {
		return "", errors.New("HEAD is not a full commit")
	}
	return h, nil
}
