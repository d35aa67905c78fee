package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/corpus"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest"
)

// TestProtocolOfARun: without a Strata checkout around it, a run follows
// the stand-in with the embedded bundle and says so on the line after the
// install's;
// inside a folder whose bench/prompts/standard-v1 is a valid bundle under
// another corpus SHA, the spec's protocol is the default and the run
// refuses before the warm-up, naming the SHA found and the one the spec
// pins; --protocol of the stand-in runs there.
func TestProtocolOfARun(t *testing.T) {
	t.Parallel()
	standIn := protocol.StandIn()
	spec, _ := protocol.Known().Lookup(protocol.SpecID)

	work := t.TempDir()
	r := runIn(t, work, "", "bench", "run", "--simulate")
	second := protocolLineOf(r.stderr)
	if r.code != 0 || !strings.HasPrefix(second, "protocol: "+standIn.ID+" (profile "+standIn.Profile) || !strings.Contains(second, "embedded") {
		t.Fatalf("exit %d, protocol line %q\n%s", r.code, second, r.stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(work, "bench-results", "*-standard-*"))
	if len(dirs) != 1 {
		t.Fatalf("result folders %v", dirs)
	}
	data, _ := os.ReadFile(filepath.Join(dirs[0], contract.ResultsFile))
	var res contract.Results
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Protocol.ID != standIn.ID || res.Protocol.Profile != standIn.Profile || res.Protocol.CorpusSHA256 != standIn.CorpusSHA256 {
		t.Errorf("results.json protocol %+v", res.Protocol)
	}
	readme, _ := os.ReadFile(filepath.Join(dirs[0], contract.ReadmeFile))
	if !strings.Contains(string(readme), standIn.ID) {
		t.Error("README.md does not name the protocol")
	}
	if rep := runIn(t, t.TempDir(), "", "bench", "report", "-q", dirs[0]); rep.code != 0 {
		t.Errorf("report: exit %d\n%s", rep.code, rep.stdout)
	}

	checkout := t.TempDir()
	copyDir(t, filepath.Join(repoRoot(t), "bench", "prompts", protocol.StandInBundleName), filepath.Join(checkout, "bench", "prompts", protocol.BundleName))
	r = runIn(t, checkout, "", "bench", "run", "--simulate")
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, standIn.CorpusSHA256) || !strings.Contains(r.stderr, spec.CorpusSHA256) ||
		strings.Contains(r.stderr, "warmup") {
		t.Errorf("a checkout's bundle under another corpus: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(checkout, "bench-results")); !os.IsNotExist(err) {
		t.Error("a refused run left a result location behind")
	}
	r = runIn(t, checkout, "", "bench", "run", "--simulate", "--protocol", standIn.ID)
	if r.code != 0 || !strings.HasPrefix(protocolLineOf(r.stderr), "protocol: "+standIn.ID) {
		t.Errorf("--protocol %s in the checkout: exit %d\n%s", standIn.ID, r.code, r.stderr)
	}
	if r := runIn(t, work, "", "bench", "run", "--simulate", "--protocol", "bogus"); r.code != exitcode.Usage || !strings.Contains(r.stderr, "unknown protocol") {
		t.Errorf("--protocol bogus: exit %d\n%s", r.code, r.stderr)
	}
}

// protocolLineOf is the second line of a run's output, the protocol's,
// when the first is the install's ("strata VERSION: commit …"); "" when
// it is not.
func protocolLineOf(stderr string) string {
	lines := strings.SplitN(stderr, "\n", 3)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "strata ") {
		return ""
	}
	return lines[1]
}

// specCheckout makes a folder laid out as a Strata checkout with a bundle
// built under the spec's protocol ID (from the Qwen3 tokenizer and
// template, which the spec's own bundle is not) and returns it with the
// protocol table that pins that bundle's corpus SHA.
func specCheckout(t *testing.T) (string, protocol.Table) {
	t.Helper()
	tok, tmpl := qwenPaths(t)
	checkout := t.TempDir()
	bundle := filepath.Join(checkout, "bench", "prompts", protocol.BundleName)
	// Built here, not by bench corpus build, which refuses a bundle for
	// the spec's protocol under another corpus than the spec pins.
	in, err := buildInputs(t.Context(), testEnv(t, checkout, strings.NewReader(""), io.Discard, io.Discard), tok, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	in.ProtocolID, in.BundleName = protocol.SpecID, protocol.BundleName
	b, err := corpus.Build(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Write(bundle); err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(tmpl)
	mustWrite(t, filepath.Join(checkout, "serve", "chat_template.jinja"), string(src))
	manifest, _ := os.ReadFile(filepath.Join(bundle, "MANIFEST.sha256"))
	sum := sha256.Sum256(manifest)
	return checkout, protocol.Known().WithCorpus(protocol.SpecID, hex.EncodeToString(sum[:]))
}

// TestProtocolsAreNeverMixed: a result of the spec's protocol and one of
// the stand-in are refused by compare, side by side.
func TestProtocolsAreNeverMixed(t *testing.T) {
	t.Parallel()
	checkout, table := specCheckout(t)
	run := func(args ...string) cliResult {
		var out, errb strings.Builder
		env := testEnv(t, checkout, strings.NewReader(""), &out, &errb)
		env.Protocols = table
		code := Run(t.Context(), args, env)
		return cliResult{code, out.String(), errb.String()}
	}
	for _, p := range []string{protocol.SpecID, protocol.StandInID} {
		if r := run("bench", "run", "--simulate", "--protocol", p); r.code != 0 || !strings.HasPrefix(protocolLineOf(r.stderr), "protocol: "+p) {
			t.Fatalf("run %s: exit %d\n%s", p, r.code, r.stderr)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(checkout, "bench-results", "*-standard-*"))
	if len(dirs) != 2 {
		t.Fatalf("folders %v", dirs)
	}
	for _, d := range dirs {
		if r := run("bench", "report", "-q", d); r.code != 0 {
			t.Errorf("report %s: exit %d\n%s", filepath.Base(d), r.code, r.stdout)
		}
	}
	if r := run("bench", "compare", dirs[0], dirs[1]); r.code == 0 || !strings.Contains(r.stderr, "protocol IDs differ") {
		t.Errorf("compare across protocols: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestBundleWithAnEmbeddedProtocol: --bundle names the bundle
// folder of a protocol read from a checkout; with the stand-in, whose
// bundle is embedded, it would be ignored, so every command that takes it
// refuses it with one sentence, exit 2, before anything runs, is read or
// printed; report, pilot and view name the folder of the stand-in, even
// where --bundle names no folder at all. (Without --protocol, --bundle
// makes the spec's protocol the default, as a checkout does.)
func TestBundleWithAnEmbeddedProtocol(t *testing.T) {
	t.Parallel()
	bundle := filepath.Join(t.TempDir(), protocol.StandInBundleName)
	copyDir(t, filepath.Join(repoRoot(t), "bench", "prompts", protocol.StandInBundleName), bundle)
	gone := filepath.Join(t.TempDir(), "nonexistent")
	standIn := results(t, "baseline")
	sentence := func(given string) string {
		return "--bundle " + given + ": the bundle of " + protocol.StandInID + " is embedded in strata, so no bundle folder is read for it"
	}
	for _, c := range []struct {
		args       []string
		want, name string
	}{
		{[]string{"bench", "run", "--simulate", "--protocol", protocol.StandInID, "--bundle", bundle}, sentence(bundle), ""},
		{[]string{"bench", "check", "--simulate", "--protocol", protocol.StandInID, "--bundle", bundle}, sentence(bundle), ""},
		{[]string{"bench", "report", "--bundle", bundle, standIn}, sentence(bundle), standIn},
		{[]string{"bench", "report", "--bundle", gone, standIn}, sentence(gone), standIn},
		{[]string{"bench", "pilot", "--bundle", bundle, standIn}, sentence(bundle), standIn},
		{[]string{"bench", "view", "--out", "OUT", "--bundle", bundle, standIn}, sentence(bundle), standIn},
	} {
		work := t.TempDir()
		r := runIn(t, work, "", c.args...)
		if r.code != exitcode.Usage || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, c.name) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with %q naming %q", c.args[1:], r.code, r.stdout, r.stderr, c.want, c.name)
		}
		if left, _ := os.ReadDir(work); len(left) != 0 {
			t.Errorf("%v left %v", c.args[1:], left)
		}
	}
}

// specFolder is a copy of a committed result folder that names the
// spec's protocol: enough for what is refused before it is validated.
func specFolder(t *testing.T, dir string) string {
	t.Helper()
	copyDir(t, results(t, "baseline"), dir)
	p := filepath.Join(dir, contract.ResultsFile)
	data, _ := os.ReadFile(p)
	mustWrite(t, p, string(resulttest.EditJSON(t, data, func(m map[string]any) {
		m["protocol"].(map[string]any)["id"] = protocol.SpecID
	})))
	return dir
}

// TestBundleWithFoldersOfBothProtocols: among folders of both protocols,
// --bundle is refused naming the stand-in's folder, whatever the order,
// and no folder is reported before.
func TestBundleWithFoldersOfBothProtocols(t *testing.T) {
	t.Parallel()
	bundle := filepath.Join(t.TempDir(), protocol.StandInBundleName)
	copyDir(t, filepath.Join(repoRoot(t), "bench", "prompts", protocol.StandInBundleName), bundle)
	work := t.TempDir()
	specFolder(t, filepath.Join(work, "spec"))
	copyDir(t, results(t, "baseline"), filepath.Join(work, "standin"))
	want := "standin: --bundle " + bundle + ": the bundle of " + protocol.StandInID + " is embedded in strata"
	for _, cmd := range []string{"report", "pilot"} {
		for _, order := range [][]string{{"spec", "standin"}, {"standin", "spec"}} {
			r := runIn(t, work, "", append([]string{"bench", cmd, "--bundle", bundle}, order...)...)
			if r.code != exitcode.Usage || !strings.Contains(r.stderr, want) || r.stdout != "" {
				t.Errorf("%s %v: exit %d, stdout %q, stderr %q; want exit 2 with %q", cmd, order, r.code, r.stdout, r.stderr, want)
			}
		}
	}
}

// TestBundleThatIsNoBundleFolder: a --bundle path that is missing, a file
// or a folder without MANIFEST.sha256 is a usage error naming the flag and
// the path, before anything runs or is read.
func TestBundleThatIsNoBundleFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gone, file, empty := filepath.Join(dir, "gone"), filepath.Join(dir, "file"), filepath.Join(dir, "notabundle")
	mustWrite(t, file, "x")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := specFolder(t, filepath.Join(t.TempDir(), "spec"))
	for _, c := range []struct{ path, want string }{
		{gone, "--bundle " + gone + ": no such folder"},
		{file, "--bundle " + file + " is a file, not a bundle folder"},
		{empty, "--bundle " + empty + " is not a bundle folder (no MANIFEST.sha256)"},
	} {
		for _, args := range [][]string{
			{"bench", "run", "--simulate", "--bundle", c.path},
			{"bench", "check", "--simulate", "--bundle", c.path},
			{"bench", "report", "--bundle", c.path, spec},
			{"bench", "pilot", "--bundle", c.path, spec},
			{"bench", "view", "--out", "OUT", "--bundle", c.path, spec},
		} {
			work := t.TempDir()
			r := runIn(t, work, "", args...)
			if r.code != exitcode.Usage || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with %q", args[1:], r.code, r.stdout, r.stderr, c.want)
			}
			if left, _ := os.ReadDir(work); len(left) != 0 {
				t.Errorf("%v left %v", args[1:], left)
			}
		}
	}
}
