// Package version reports which build of strata is running: the version
// and what the Go toolchain recorded of the build (the VCS stamp, the
// module version, the folder it was compiled from).
package version

import (
	"path/filepath"
	"runtime"
	"runtime/debug"
)

// Version is the release version; packaging overrides it with -ldflags -X.
var Version = "0.1.0-dev"

// Build is what a binary knows of its own build.
type Build struct {
	// Commit is the full VCS commit stamped at build time ("" when the
	// binary was built without VCS stamping: go run, go test,
	// -buildvcs=false, go install of a module version); Modified says the
	// tree had changes.
	Commit   string
	Modified bool
	// ModuleVersion is the main module's version: a tag or pseudo-version
	// for `go install …@version`, "(devel)" for a build in a checkout.
	ModuleVersion string
	// SourceDir is the module root the binary was compiled from, when the
	// build kept file paths (no -trimpath: go run, a plain go build); ""
	// otherwise. It is how a binary without a stamp knows which checkout
	// is its own.
	SourceDir string
}

// Own is the running binary's build.
func Own() Build {
	var b Build
	if info, ok := debug.ReadBuildInfo(); ok {
		b.ModuleVersion = info.Main.Version
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	// This file's compile-time path: absolute unless -trimpath rewrote it
	// to the module path; the module root is two folders above its own.
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		b.SourceDir = filepath.Dir(filepath.Dir(filepath.Dir(file)))
	}
	return b
}
