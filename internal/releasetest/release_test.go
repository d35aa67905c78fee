// Package releasetest holds the release to what it promises: a snapshot of
// HEAD for linux/amd64 (scripts/release.sh) built twice gives identical
// files; the archive holds the binary, LICENSE, README.md and a COMMIT
// file with HEAD's full commit; SHA256SUMS covers every file; the SBOM
// names the Go modules; the Debian package installs the binary with its
// COMMIT beside it; and the binary, unpacked into an empty folder and run
// from another, records the archive's commit.
//
// Building goreleaser takes minutes on a fresh build cache, so the test
// runs only with -strata.release (.ci/run passes it; the layout tests
// check that it does).
package releasetest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

var release = flag.Bool("strata.release", false, "build the snapshot release twice and test it (.ci/run)")

// root is the checkout's root (two levels above this package).
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// snapshot runs scripts/release.sh --snapshot --only linux/amd64 into a new
// folder and returns it.
func snapshot(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "release")
	run(t, root(t), nil, "bash", "scripts/release.sh", "--snapshot", "--only", "linux/amd64", out)
	return out
}

// files are a folder's files by name with their contents.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = data
	}
	return m
}

func TestSnapshotRelease(t *testing.T) {
	if !*release {
		t.Skip("the release test runs with -strata.release (.ci/run)")
	}
	commit := strings.TrimSpace(run(t, root(t), nil, "git", "rev-parse", "HEAD"))
	first, second := files(t, snapshot(t)), files(t, snapshot(t))
	var names []string
	for name, data := range first {
		names = append(names, name)
		if !bytes.Equal(data, second[name]) {
			t.Errorf("%s differs between two builds of %s", name, commit)
		}
	}
	slices.Sort(names)
	if len(first) != len(second) {
		t.Errorf("the builds wrote %d and %d files", len(first), len(second))
	}
	sums := checkSums(t, first)
	var archive, deb, sbom string
	for _, name := range names {
		switch {
		case strings.HasSuffix(name, "_linux_amd64.tar.gz"):
			archive = name
		case strings.HasSuffix(name, "_amd64.deb"):
			deb = name
		case strings.HasSuffix(name, "_sbom.cdx.json"):
			sbom = name
		}
	}
	if archive == "" || deb == "" || sbom == "" || len(names) != 4 || len(sums) != 3 {
		t.Fatalf("the release holds %v; want SHA256SUMS, one linux/amd64 archive, one .deb, one SBOM", names)
	}
	checkSBOM(t, first[sbom])
	checkDeb(t, first[deb], commit)
	dir := unpack(t, first[archive])
	checkRun(t, dir, commit)
}

// checkSums holds SHA256SUMS to every other file of the release.
func checkSums(t *testing.T, release map[string][]byte) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for line := range strings.Lines(string(release["SHA256SUMS"])) {
		sum, name, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", line)
		}
		sums[name] = sum
	}
	for name, data := range release {
		if name == "SHA256SUMS" {
			continue
		}
		h := sha256.Sum256(data)
		if sums[name] != hex.EncodeToString(h[:]) {
			t.Errorf("SHA256SUMS gives %s %q, the file hashes to %x", name, sums[name], h)
		}
	}
	return sums
}

// checkSBOM: a CycloneDX document of the binary's Go modules, strata the
// application and its modules (go-git among them) components.
func checkSBOM(t *testing.T, data []byte) {
	t.Helper()
	var doc struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name string } `json:"component"`
		} `json:"metadata"`
		Components []struct{ Name, Version string } `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("SBOM: %v", err)
	}
	names := map[string]bool{}
	for _, c := range doc.Components {
		names[c.Name] = true
	}
	if doc.BOMFormat != "CycloneDX" || doc.Metadata.Component.Name != "github.com/strata-bench/strata" || !names["github.com/go-git/go-git/v5"] {
		t.Errorf("SBOM: format %q, component %q, %d components", doc.BOMFormat, doc.Metadata.Component.Name, len(doc.Components))
	}
}

// checkDeb: the package installs /usr/lib/strata/strata with its COMMIT
// beside it and /usr/bin/strata pointing to it.
func checkDeb(t *testing.T, data []byte, commit string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "strata.deb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	x := filepath.Join(dir, "x")
	run(t, dir, nil, "dpkg-deb", "-x", path, x)
	got, err := os.ReadFile(filepath.Join(x, "usr", "lib", "strata", "COMMIT"))
	if err != nil || strings.TrimSpace(string(got)) != commit {
		t.Errorf("the package's /usr/lib/strata/COMMIT: %q, %v; want %s", got, err, commit)
	}
	if fi, err := os.Stat(filepath.Join(x, "usr", "lib", "strata", "strata")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("the package's /usr/lib/strata/strata: %v", err)
	}
	if target, err := os.Readlink(filepath.Join(x, "usr", "bin", "strata")); err != nil || target != "/usr/lib/strata/strata" {
		t.Errorf("the package's /usr/bin/strata points to %q (%v)", target, err)
	}
}

// unpack unpacks the archive into an empty folder and returns the folder
// it holds; it checks the archive holds the binary, LICENSE, README.md and
// COMMIT, and nothing else.
func unpack(t *testing.T, archive []byte) string {
	t.Helper()
	dest := t.TempDir()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var got []string
	top := ""
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		d, name := filepath.Split(filepath.Clean(h.Name))
		top = filepath.Clean(d)
		got = append(got, name)
		if err := os.MkdirAll(filepath.Join(dest, top), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(dest, top, name), os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode)&0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(got)
	if want := []string{"COMMIT", "LICENSE", "README.md", "strata"}; !slices.Equal(got, want) || strings.Contains(top, string(filepath.Separator)) {
		t.Fatalf("the archive holds %v in %q, want %v in one folder", got, top, want)
	}
	return filepath.Join(dest, top)
}

// checkRun: the unpacked strata, run from another empty folder, says
// where its commit came from and records the archive's commit; its run is
// nonconforming only for the simulator, never for lack of a commit.
func checkRun(t *testing.T, dir, commit string) {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(dir, "COMMIT"))
	if strings.TrimSpace(string(data)) != commit {
		t.Fatalf("the archive's COMMIT holds %q, want %s", data, commit)
	}
	exe := filepath.Join(dir, "strata")
	work := t.TempDir()
	// The binary's user cache folder is the test's (the simulator's model
	// is written there).
	env := []string{"XDG_CACHE_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}
	// The binary's stamp where the toolchain could stamp it (it does not
	// in a linked worktree), else the COMMIT file: the same commit.
	if v := run(t, work, env, exe, "version"); !strings.Contains(v, "\ncommit "+commit+" from the binary's embedded VCS stamp\n") &&
		!strings.Contains(v, "\ncommit "+commit+" from the COMMIT file beside the binary\n") {
		t.Errorf("strata version:\n%s", v)
	}
	out := run(t, work, env, exe, "bench", "run", "--simulate")
	if first, _, _ := strings.Cut(out, "\n"); !strings.HasPrefix(first, "strata ") || !strings.Contains(first, "commit "+commit) {
		t.Errorf("the run's first line: %q", first)
	}
	found, _ := filepath.Glob(filepath.Join(work, "bench-results", "*", contract.ResultsFile))
	if len(found) != 1 {
		t.Fatalf("results: %v\n%s", found, out)
	}
	raw, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	var res contract.Results
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if c := res.Software.StrataCommit; c == nil || *c != commit {
		t.Errorf("strata_commit %v, want the archive's %s", c, commit)
	}
	for _, r := range res.Extensions.StatusReasons.Nonconforming {
		if r.Kind == contract.NoCommit {
			t.Errorf("the run is nonconforming for lack of a commit: %s", r.Text)
		}
	}
	if i := res.Extensions.Install; i == nil || i.BuildKind != "release" {
		t.Errorf("extensions.install %+v, want build_kind release", i)
	}
}
