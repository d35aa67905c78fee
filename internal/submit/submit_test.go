package submit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/redact/plant"
)

var planted = redact.Machine{HomeDirs: plant.HomeDirs, Users: plant.Users, Hosts: plant.Hosts, Secrets: plant.Secrets}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestScanFindsEveryPlantedForm: each planted form, written after the run
// into a text file, into a JSON file's string value and into a JSON Lines
// file, is found in that file, in plain words.
func TestScanFindsEveryPlantedForm(t *testing.T) {
	t.Parallel()
	r := redact.New(planted, redact.Vocabulary())
	for _, f := range plant.Forms {
		dir := t.TempDir()
		doc, _ := json.Marshal(map[string]any{"notes": []string{"clean", f.Text}})
		line, _ := json.Marshal(map[string]string{"answer": f.Text})
		write(t, dir, "README.md", "# result\n\n"+f.Text+"\n")
		write(t, dir, "config.json", string(doc))
		write(t, dir, "extra.jsonl", `{"answer":"clean"}`+"\n"+string(line)+"\n")
		found, err := Scan(dir, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range []string{"README.md", "config.json", "extra.jsonl"} {
			n := 0
			for _, l := range found {
				if strings.HasPrefix(l, file+": ") {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%q planted in %s: not found (%v)", f.Text, file, found)
			}
		}
	}
}

// TestScanReadsJSONNames: a JSON member named like a secret setting (any
// prefix) is found by its name, as the writer replaces it; members named
// like keys or tokens that are none are not, and neither is honest text.
func TestScanReadsJSONNames(t *testing.T) {
	t.Parallel()
	r := redact.New(planted, redact.Vocabulary())
	dir := t.TempDir()
	write(t, dir, "config.json", `{"env": {"OPENAI_API_KEY": "oa1 Local Zq81Xv", "GITHUB_TOKEN": "gh0therT0kenVal9", "HF_HOME": "cache"}}`)
	found, err := Scan(dir, r)
	if err != nil || len(found) != 2 || !strings.Contains(strings.Join(found, "\n"), "config.json: the value of a secret setting (key, token, password): oa1 Local Zq81Xv") {
		t.Errorf("findings %v (%v)", found, err)
	}
	clean := t.TempDir()
	write(t, clean, "config.json", `{"cache_key": "abc123def456", "sort_key": "name", "api_key_env": "STRATA_KEY", "eos_token": "<|im_end|>",
		"bos_token": "endoftext1", "token": "understanding", "env": {"HF_TOKEN": "<secret>"}}`)
	write(t, clean, "README.md", "record000001: alpha beta gamma\na basic test, max_tokens: 512, print_info: EOG token = 151645 '<|im_end|>'\n"+
		strings.Repeat("a03b93a5e108a464e573b06ae7638dc4fa3f478b86f8ec807795c91e0513f514\n", 4))
	if found, err := Scan(clean, r); err != nil || len(found) != 0 {
		t.Errorf("a clean folder: %v (%v)", found, err)
	}
}

// TestBodyListsOnlyPerRequestNulls: a run whose only gaps are per-request
// nulls lists their count, and "None." never follows an item.
func TestBodyListsOnlyPerRequestNulls(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "results", "baseline", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		missing contract.Missing
		want    string
		notWant string
	}{
		{"per-request nulls only", contract.Missing{"/requests/0/ttft_s": "the engine sent no token"}, "- 1 per-request null values", "None."},
		{"nothing missing", contract.Missing{}, "None.", "per-request null values"},
	} {
		var r contract.Results
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		r.Missing = c.missing
		r.Extensions.StatusReasons = contract.StatusReasons{}
		r.Requests = nil // no failed, skipped or wrong request
		r.Summaries = nil
		body := Body(&r, "bench-results/RUN")
		section := body[strings.Index(body, "## Failed"):]
		if !strings.Contains(section, c.want) || strings.Contains(section, c.notWant) {
			t.Errorf("%s: the section is\n%s\nwant %q and not %q", c.name, section, c.want, c.notWant)
		}
	}
}

// TestBodySaysWhatAURLRunCouldNotSee: for an engine the runner did not
// start, the body says so and what the server had answered before, and
// lists the null log with its reason; a run that started its engine says
// neither.
func TestBodySaysWhatAURLRunCouldNotSee(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "results", "baseline", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	for _, started := range []bool{false, true} {
		var r contract.Results
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		r.Extensions.Engine = &contract.Engine{URL: "loopback", StartedByRunner: started, ServedBeforeRun: &contract.ServedBefore{Answered: &zero}}
		if !started {
			r.Missing[contract.PtrEngineLog] = "the runner did not start the engine: there is no engine log"
		}
		body := Body(&r, "RUN")
		says := strings.Contains(body, "- Engine: already serving, not started by strata; it had answered no request before this run; configuration only as far as the engine shows it") &&
			strings.Contains(body, "- missing `/extensions/engine/log`: the runner did not start the engine")
		if says == started {
			t.Errorf("started by the runner %v: the body is\n%s", started, body)
		}
	}
}

// TestNoEngineLog: a folder without an engine_log artifact is not ready to
// share, and the words name --engine-log and the folder's own reason; one
// with the artifact is.
func TestNoEngineLog(t *testing.T) {
	t.Parallel()
	const why = "the engine at --url was already serving when the run began"
	for _, c := range []struct {
		name string
		arts []contract.Artifact
		want []string
	}{
		{"with its log", []contract.Artifact{{Kind: contract.ArtifactEngineLog, Path: contract.EngineLog}}, nil},
		{"without", []contract.Artifact{{Kind: contract.ArtifactOutputs, Path: contract.OutputsFile}},
			[]string{"no engine log: " + why, "Submit and review", "--engine-log FILE"}},
		// The folder's own reason names the flag: it is said once.
		{"without, its reason naming the flag", nil, []string{"no engine log: " + why + "; name the log file the server writes (llama-server --log-file FILE) with --engine-log FILE; step 2"}},
	} {
		reason := why
		if strings.HasSuffix(c.name, "naming the flag") {
			reason += "; name the log file the server writes (llama-server --log-file FILE) with --engine-log FILE"
		}
		r := &contract.Results{Artifacts: c.arts, Missing: contract.Missing{contract.PtrEngineLog: reason}}
		got := NoEngineLog(r)
		if (got == "") != (c.want == nil) {
			t.Errorf("%s: %q", c.name, got)
		}
		if n := strings.Count(got, "--engine-log FILE"); n > 1 {
			t.Errorf("%s: --engine-log said %d times: %q", c.name, n, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
	}
}
