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
// bundle is embedded, it would be ignored, so it is a usage error before
// anything runs. (Without --protocol, --bundle makes the spec's protocol
// the default, as a checkout does.)
func TestBundleWithAnEmbeddedProtocol(t *testing.T) {
	t.Parallel()
	bundle := filepath.Join(t.TempDir(), protocol.StandInBundleName)
	copyDir(t, filepath.Join(repoRoot(t), "bench", "prompts", protocol.StandInBundleName), bundle)
	for _, args := range [][]string{
		{"bench", "run", "--simulate", "--protocol", protocol.StandInID, "--bundle", bundle},
		{"bench", "check", "--simulate", "--protocol", protocol.StandInID, "--bundle", bundle},
	} {
		work := t.TempDir()
		r := runIn(t, work, "", args...)
		if r.code != exitcode.Usage || !strings.Contains(r.stderr, "--bundle") || !strings.Contains(r.stderr, "embedded") {
			t.Errorf("%v: exit %d, want 2 naming --bundle\n%s", args[1:], r.code, r.stderr)
		}
		if left, _ := os.ReadDir(work); len(left) != 0 {
			t.Errorf("%v left %v", args[1:], left)
		}
	}
}
