package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/redact/plant"
	"github.com/strata-bench/strata/internal/result"
	"github.com/strata-bench/strata/internal/simengine"
	"github.com/strata-bench/strata/internal/submit"
)

// TestNamesThatAreWords: a run made on a machine whose user is called
// tom, short, build, ben, mark, bench, max or eva validates (its verdicts
// re-score, its IDs and tool names are intact) and every request body is
// the fixture's. The engine's answers do not depend on the machine: one
// execution is finished on each.
func TestNamesThatAreWords(t *testing.T) {
	t.Parallel()
	run := harness{optional: true}.executeOnce(t)
	for _, name := range []string{"tom", "short", "build", "ben", "mark", "bench", "max", "eva"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := redact.Machine{Users: []string{name}, Hosts: []string{name + "-box"}, HomeDirs: []string{"/home/" + name}}
			o := run.finishCopy(t, harness{machine: &m, optional: true})
			o.mustBeValid(t) // bodies, IDs, verdicts and their reasons are checked there
			if o.res.Format != "strata-standard-benchmark" || o.req(t, "performance-short-r1").ID != "performance-short-r1" {
				t.Error("protocol values were rewritten")
			}
			if !strings.Contains(string(o.outs["sanity-T4"].Request), "get_build_status") {
				t.Error("the T4 tool was rewritten")
			}
		})
	}
}

// secrets is every planted form as one text.
func secrets() string {
	var b strings.Builder
	for _, f := range plant.Forms {
		b.WriteString(f.Text + "\n")
	}
	return b.String()
}

// TestPlantedSecretsInEveryPlace plants every private form where text
// enters a folder: the engine log, /props, an answer, a server error, the
// track notes and the build options. None reaches any file, and the folder
// still validates.
func TestPlantedSecretsInEveryPlace(t *testing.T) {
	t.Parallel()
	all := secrets()
	quoted, _ := json.Marshal(all)
	sc := &simengine.Scenario{
		Props: map[string]json.RawMessage{"build_info": json.RawMessage(`"b10470-34af94cd9"`),
			"owner": quoted},
		Requests: map[string]simengine.Behaviour{
			"sanity-I4": {Answer: &all},
			"sanity-I1": {HTTPStatus: 500, ErrorMessage: all},
		},
	}
	facts := conformingFacts()
	facts.EngineLog = []byte("llama-server starting\n" + all)
	m := redact.Machine{HomeDirs: plant.HomeDirs, Users: plant.Users, Hosts: plant.Hosts, Secrets: plant.Secrets}
	notes := "notes: " + all
	id := record.Identity{Track: "custom", TrackNotes: &notes, BuildOptions: []string{"-DGGML_CUDA=ON", all}, Command: "strata bench run"}
	o := harness{scenario: sc, facts: &facts, machine: &m, identity: &id}.run(t)
	o.mustBeValid(t)
	entries, _ := os.ReadDir(o.dir)
	if len(entries) < 5 {
		t.Fatalf("files %v", entries)
	}
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(o.dir, e.Name()))
		for _, f := range plant.Forms {
			if i := strings.Index(string(data), f.Private); i >= 0 {
				t.Errorf("%s contains %q (planted as %q): …%s…", e.Name(), f.Private, f.Text, data[max(0, i-80):min(len(data), i+40)])
			}
		}
	}
}

// TestSubmitFindsSecretsPlantedAfterTheRun: each form written into a clean
// folder's README after the run is found by the submit scan, in plain words.
func TestSubmitFindsSecretsPlantedAfterTheRun(t *testing.T) {
	t.Parallel()
	o := harness{}.run(t)
	m := redact.Machine{HomeDirs: plant.HomeDirs, Users: plant.Users, Hosts: plant.Hosts, Secrets: plant.Secrets}
	red := result.Redactor(m, bundle(t))
	if found, _ := submit.Scan(o.dir, red); len(found) != 0 {
		t.Fatalf("a clean folder has findings: %v", found)
	}
	// The folder is clean, so a form's findings can only come from the
	// README it is planted in: each is planted in a copy of the README
	// alone, not rescanned with the whole folder two hundred times.
	clean, _ := os.ReadFile(filepath.Join(o.dir, contract.ReadmeFile))
	alone := t.TempDir()
	readme := filepath.Join(alone, contract.ReadmeFile)
	for _, f := range plant.Forms {
		if err := os.WriteFile(readme, append(append([]byte{}, clean...), []byte("\n"+f.Text+"\n")...), 0o644); err != nil {
			t.Fatal(err)
		}
		found, err := submit.Scan(alone, red)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 {
			t.Errorf("planted %q: not found", f.Text)
		}
		for _, line := range found {
			if strings.Contains(line, "${") || !strings.HasPrefix(line, "README.md: ") {
				t.Errorf("finding %q is not plain words about README.md", line)
			}
		}
	}
}

// TestControlCharactersAreShownEscaped: strings a server sends with ESC,
// OSC, BEL, CR or a bidirectional override reach the README (and so the
// terminal that prints it) escaped, never raw.
func TestControlCharactersAreShownEscaped(t *testing.T) {
	t.Parallel()
	evil := "\x1b]0;pwned\x07\x1b[2J\rmodel\u202e.gguf"
	alias, _ := json.Marshal(evil)
	sc := &simengine.Scenario{
		Props:    map[string]json.RawMessage{"build_info": json.RawMessage(`"b10470-34af94cd9"`), "model_alias": alias},
		Requests: map[string]simengine.Behaviour{"sanity-I2": {HTTPStatus: 500, ErrorMessage: evil}},
	}
	o := harness{scenario: sc}.run(t)
	readme, _ := os.ReadFile(filepath.Join(o.dir, contract.ReadmeFile))
	for _, raw := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(string(readme), raw) {
			t.Errorf("README.md holds %q raw", raw)
		}
	}
	// Escaped for the terminal (\u001b) and then for Markdown (\]): it
	// renders as the visible text \u001b]0;pwned\u0007.
	if !strings.Contains(string(readme), `\u001b\]0;pwned\u0007`) {
		t.Error("the escaped text is not shown")
	}
}
