// Package version reports which build of strata is running: the version and,
// where the Go toolchain embedded it, the source commit.
package version

import "runtime/debug"

// Version is the release version; packaging overrides it with -ldflags -X.
var Version = "0.1.0-dev"

// Commit returns the full VCS commit embedded at build time, or "" when the
// binary was built without VCS stamping (go run, -buildvcs=false).
func Commit() (commit string, modified bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return commit, modified
}
