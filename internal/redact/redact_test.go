package redact

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
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

// TestLongTextsRedactAsShortOnes: in a long text the provider rules run only
// near their keywords; every planted form is still found there, and the
// text around it is left as it was.
func TestLongTextsRedactAsShortOnes(t *testing.T) {
	t.Parallel()
	r := New(machine, Vocabulary())
	pad := strings.Repeat("The quick brown fox jumps over the lazy dog; keys and tokens are words too.\n", 300)
	for _, c := range plant.Forms {
		if strings.Contains(c.Text, "BEGIN") && !strings.Contains(c.Text, "END") {
			continue // a key block cut short runs to the end of the text
		}
		short := r.String(c.Text)
		if got := r.String(pad + c.Text + "\n" + pad); got != pad+short+"\n"+pad {
			t.Errorf("in a long text %q does not become %q", c.Text, short)
		}
	}
}

// TestWindowsHoldEveryKeyedMatch: for each bounded provider rule, the
// windows around its keywords find what the whole text does.
func TestWindowsHoldEveryKeyedMatch(t *testing.T) {
	t.Parallel()
	set, err := providerRules()
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("lorem ipsum dolor sit amet\n", 150)
	bounded := 0
	for _, c := range plant.Forms {
		s := pad + c.Text + "\n" + pad
		hits := set.keywordHits(asciiLower(s))
		for _, k := range set.rules {
			if k.reach >= 0 {
				bounded++
			}
			if !k.keywordIn(set, asciiLower(c.Text)) {
				continue // gitleaks runs a rule only where its keyword is
			}
			whole := k.re.FindAllStringIndex(s, -1)
			var keyed [][]int
			for _, m := range k.findKeyed(set, s, hits) {
				keyed = append(keyed, m[:2])
			}
			if fmt.Sprint(whole) != fmt.Sprint(keyed) {
				t.Errorf("rule %s on %q: whole text %v, windows %v", k.id, c.Text, whole, keyed)
			}
		}
	}
	if bounded == 0 || bounded == len(set.rules)*len(plant.Forms) {
		t.Fatalf("%d bounded rules: both kinds must be tried", bounded)
	}
}

// TestLongSecretsWidenTheWindow: a match longer than the first window
// around its keyword (a JWT with a large payload) is found whole.
func TestLongSecretsWidenTheWindow(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("lorem ipsum dolor sit amet\n", 1000)
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + strings.Repeat("zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6", 400) + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	if got := New(Machine{}, nil).String(pad + "Authorization token " + jwt + "\n" + pad); strings.Contains(got, "SflKxwRJ") || strings.Contains(got, "zdWIiOiIx") {
		t.Errorf("a long JWT survives: %q", got[len(pad):len(pad)+80])
	}
	set, err := providerRules()
	if err != nil {
		t.Fatal(err)
	}
	s := pad + "x " + jwt + "\n" + pad
	for _, k := range set.rules {
		if k.id != "jwt" {
			continue
		}
		if k.reach >= 0 {
			t.Fatalf("jwt reach %d: the rule is unbounded", k.reach)
		}
		whole := fmt.Sprint(k.re.FindAllStringSubmatchIndex(s, -1))
		if keyed := fmt.Sprint(k.findKeyed(set, s, set.keywordHits(asciiLower(s)))); keyed != whole {
			t.Errorf("jwt: windows %s, whole text %s", keyed, whole)
		}
		return
	}
	t.Fatal("no jwt rule")
}

// keywordIn is the plain form of the prefilter: a keyword of the rule is in
// low (or the rule has none).
func (k keyRule) keywordIn(set *providerSet, low string) bool {
	for _, kw := range k.keywords {
		if strings.Contains(low, set.keywords[kw]) {
			return true
		}
	}
	return len(k.keywords) == 0
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
	// Names in other scripts are whole words too, in any case.
	if got := New(Machine{Users: []string{"José", "tom"}, Hosts: []string{"ÆGIR-01"}}, nil).String("JOSÉ on ægir-01, not josély or tomé"); got != "<user> on <host>, not josély or tomé" {
		t.Errorf("non-ASCII names: %q", got)
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
	set, err := providerRules()
	if err != nil || len(set.rules) < 200 {
		t.Fatalf("rules: %v", err)
	}
	for _, r := range set.rules {
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

// BenchmarkAnswer4MiB is the redaction of the largest answer a request may
// bring back (client.MaxTextBytes): prose, random base64 (where the
// provider rules' short keywords turn up by chance), and text dense with
// what the rules look for (a token, a path and a private address every
// 128 bytes).
func BenchmarkAnswer4MiB(b *testing.B) {
	r := New(machine, Vocabulary())
	const size = 4 << 20
	rnd := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	random := make([]byte, size)
	for i := range random {
		random[i] = alphabet[rnd.IntN(len(alphabet))]
	}
	for _, c := range []struct{ name, text string }{
		{"prose", strings.Repeat("The quick brown fox jumps over the lazy dog. It was 3.5 times faster than 10 dogs.\n", size/83)},
		{"base64", string(random)},
		{"dense", strings.Repeat("A hash table stores each value in an array slot chosen by hashing its key; token = 151645, see /srv/models/q.gguf and 10.0.0.5. ", size/128)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				r.String(c.text)
			}
		})
	}
}
