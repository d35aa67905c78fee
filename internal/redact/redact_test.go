package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/redact/plant"
	"github.com/strata-bench/strata/internal/redact/vocabgen"
	"github.com/strata-bench/strata/internal/sharedpath"
)

// machine is the planted machine.
var machine = Machine{HomeDirs: plant.HomeDirs, Users: plant.Users, Hosts: plant.Hosts, Secrets: plant.Secrets}

func TestPlantedFormsAreReplaced(t *testing.T) {
	t.Parallel()
	r := New(machine, Vocabulary())
	for _, c := range plant.Forms {
		got := r.String(c.Text)
		if strings.Contains(got, c.Private) || !strings.Contains(got, c.Want) {
			t.Errorf("String(%q) = %q: want %q, without %q", c.Text, got, c.Want, c.Private)
		}
		if len(r.Find(c.Text)) == 0 {
			t.Errorf("Find(%q) finds nothing", c.Text)
		}
		if again := r.String(got); again != got {
			t.Errorf("redacting twice changes %q to %q", got, again)
		}
	}
}

// TestHonestTextSurvives: what is not private stays byte for byte: strata's
// protocol text, engine logs, versions, hashes, loopback, API paths, and
// words that merely contain a name.
func TestHonestTextSurvives(t *testing.T) {
	t.Parallel()
	r := New(Machine{Users: []string{"tom", "short", "build", "ben", "mark", "bench", "max", "eva", "alice"}, Hosts: []string{"vm"}}, Vocabulary())
	for _, keep := range []string{
		"http://127.0.0.1:8080/v1/chat/completions", "GET /v1/models answered", "build b9928-81ff7ab",
		"usage.prompt_tokens", "timings.prompt_ms / 1000", "max_tokens: 512", "[case sanity-T1]",
		"record000001: alpha beta gamma", "root", "localhost", "custom", "track custom",
		"performance-short-r1", "get_build_status", `{"project":"Orion","build":17}`, "strata-standard-benchmark",
		"strata bench run --simulate", "Median (min–max, n)", "evaluation", "benchmark", "Evaluate",
		"server with /v1/status: configuration", "API_KEY=<secret>", "Authorization: Bearer <secret>",
		"abababababababababababababababababababab", "a03b93a5e108a464e573b06ae7638dc4fa3f478b86f8ec807795c91e0513f514",
		"2026-12-01T10:05:14.758515Z", "b10470-34af94cd9", "vm.max_map_count is a kernel setting", // vm is a word only as a word
		// A real llama-server log (b10470): vocabulary ids are not secrets.
		"load: control-looking token: 128247 '</s>' was not control-type; this is probably a bug in the model.",
		"print_info: EOG token        = 151645 '<|im_end|>'", "print_info: BOS token        = 151643 '<|endoftext|>'",
		"slot print_timing: id  0 | task 3 | prompt eval time =       4.80 ms /    30 tokens",
	} {
		got := r.String(keep)
		if keep == "vm.max_map_count is a kernel setting" {
			// "vm" is the host here, as a whole word; the rest stays.
			if got != "<host>.max_map_count is a kernel setting" {
				t.Errorf("String(%q) = %q", keep, got)
			}
			continue
		}
		if got != keep {
			t.Errorf("String(%q) = %q: must stay", keep, got)
		}
		if f := r.Find(keep); len(f) != 0 {
			t.Errorf("Find(%q) = %v: strata's own text is not private", keep, f)
		}
	}
	// A name that is also a word of strata's text is still a name in a path.
	if got := r.String("cache at /home/build/.cache and ~short/x"); got != "cache at <home>/.cache and <home>/x" {
		t.Errorf("path segments: %q", got)
	}
	// A name that is no such word is one wherever it stands as a word.
	if got := r.String("Tom and tom, not custom or tomato"); got != "<user> and <user>, not custom or tomato" {
		t.Errorf("whole words: %q", got)
	}
}

// TestReferenceTextsSurvive: the chat template and every fixture of the
// bundle, and a real engine log, pass through unchanged.
func TestReferenceTextsSurvive(t *testing.T) {
	t.Parallel()
	r := New(Machine{Users: []string{"build", "short", "tom", "mark"}}, Vocabulary())
	var files []string
	files = append(files, sharedpath.Path(t, "tokenizer", "qwen3", "chat_template.jinja"))
	fx, _ := filepath.Glob(filepath.Join("..", "..", "bench", "prompts", "standard-v1", "*.json"))
	files = append(files, fx...)
	if len(fx) != 35 {
		t.Fatalf("bundle files: %d", len(fx))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.String(string(data)); got != string(data) {
			i := 0
			for i < len(got) && i < len(data) && got[i] == data[i] {
				i++
			}
			t.Errorf("%s changed at byte %d: %q", filepath.Base(f), i, got[i:min(len(got), i+60)])
		}
	}
}

func TestFindSaysWhatInPlainWords(t *testing.T) {
	t.Parallel()
	r := New(machine, Vocabulary())
	f := r.Find("key glpat-aB3dE5fG7hJ9kL1mN3pQ from /home/alice at 192.168.3.4")
	var lines []string
	for _, x := range f {
		lines = append(lines, x.String())
		if strings.Contains(x.What, "$") || strings.Contains(x.What, "<") {
			t.Errorf("finding %q is not plain words", x.What)
		}
	}
	joined := strings.Join(lines, "\n")
	for _, want := range []string{"GitLab", ": glpat-aB3dE5fG7hJ9kL1mN3pQ", "home folder: /home/alice", "private IPv4 address: 192.168.3.4"} {
		if !strings.Contains(joined, want) {
			t.Errorf("findings lack %q:\n%s", want, joined)
		}
	}
}

func TestJSONRedactsValuesNotNamesAndSkipsOwned(t *testing.T) {
	t.Parallel()
	r := New(Machine{Users: []string{"alice"}}, Vocabulary())
	in := `{"missing": {"/software/strata_commit": "no commit in /home/alice/src"}, "alice": ["10.1.2.3", 3, null, true], "id": "alice-10.1.2.3"}`
	out, err := r.JSON([]byte(in), false, func(p []string) bool { return len(p) == 1 && p[0] == "id" })
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("not JSON: %s", out)
	}
	s := string(out)
	if !strings.Contains(s, `"/software/strata_commit"`) || !strings.Contains(s, `"alice":`) || !strings.Contains(s, `"id":"alice-10.1.2.3"`) {
		t.Errorf("names or owned values changed: %s", s)
	}
	if strings.Contains(s, "/home/alice") || strings.Contains(s, `"10.1.2.3"`) {
		t.Errorf("values not redacted: %s", s)
	}
}

// TestProviderRulesLoad: the embedded gitleaks rule set compiles, and only
// the excluded generic rule is left out.
func TestProviderRulesLoad(t *testing.T) {
	t.Parallel()
	rules, _, err := providerRules()
	if err != nil || len(rules) < 200 {
		t.Fatalf("%d rules, %v", len(rules), err)
	}
	for _, r := range rules {
		if excludedRules[r.id] {
			t.Errorf("rule %s is excluded", r.id)
		}
	}
}

// TestVocabularyIsCurrent: vocab.txt holds exactly the words of strata's
// string literals (go generate ./internal/redact rewrites it).
func TestVocabularyIsCurrent(t *testing.T) {
	t.Parallel()
	words, err := vocabgen.Words(filepath.Join("..", ".."), vocabgen.Folders...)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(words, "\n") + "\n"; got != strataWords {
		t.Error("internal/redact/vocab.txt is out of date: run go generate ./internal/redact")
	}
}

func FuzzJSONStaysValid(f *testing.F) {
	f.Add(`{"a":"/home/x/y","b":[1,"fe80::1"]}`)
	f.Add(`["Bearer x","http://u:p@10.0.0.1/","glpat-aB3dE5fG7hJ9kL1mN3pQ"]`)
	r := New(Machine{Users: []string{"alice"}, Hosts: []string{"vm"}}, Vocabulary())
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		out, err := r.JSON([]byte(s), true, nil)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid output %q for %q", out, s)
		}
	})
}

// FuzzIdempotent: redacting redacted text changes nothing.
func FuzzIdempotent(f *testing.F) {
	for _, c := range plant.Forms {
		f.Add(c.Text)
	}
	r := New(machine, Vocabulary())
	f.Fuzz(func(t *testing.T, s string) {
		once := r.String(s)
		if twice := r.String(once); twice != once {
			t.Fatalf("String(String(%q)) = %q, not %q", s, twice, once)
		}
	})
}
