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
	// Twice the widest window on each side of the form: text a window
	// does not reach on either side.
	line := "The quick brown fox jumps over the lazy dog; keys and tokens are words too.\n"
	pad := strings.Repeat(line, 2*unboundedReach/len(line)+1)
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
			ck, err := k.expr()
			if err != nil {
				t.Fatalf("rule %s: %v", k.id, err)
			}
			if ck.reach >= 0 {
				bounded++
			}
			if !k.keywordIn(set, asciiLower(c.Text)) {
				continue // gitleaks runs a rule only where its keyword is
			}
			whole := ck.re.FindAllStringIndex(s, -1)
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
		ck, err := k.expr()
		if err != nil || ck.reach >= 0 {
			t.Fatalf("jwt reach %d (%v): the rule is unbounded", ck.reach, err)
		}
		whole := fmt.Sprint(ck.re.FindAllStringSubmatchIndex(s, -1))
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
		// Names ending in _KEY that name no credential, a model's special
		// tokens, booleans, and where a key is read from.
		"cache_key: abc123def456", `"sort_key": "name"`, "primary_key=id42abc", "kv_cache_key = layer3", "hotkey: ctrl+k",
		"LLAMA_API_KEY_FILE", "api_key_env = STRATA_KEY", "--api-key-env STRATA_KEY", "--api-key-file keyfile", "max_tokens: 512",
		`"eos_token": "<|im_end|>"`, `"bos_token": "<|endoftext|>"`, "pad_token = [PAD]", "eos_token_id = 151645",
		"bos_token: endoftext1", `"fim_pre_token": "fimprefix1"`, "is_secret: false", "use_auth_token: true", "n_token = 32768",
		// "basic" as a word, and base64 that is no user:password.
		"a basic test of Basic arithmetic", "Basic understanding matters", "sig is short for signature", "sig=abc",
		// Lines of hexadecimal digests, one line of base64, two lines.
		strings.Repeat("a03b93a5e108a464e573b06ae7638dc4fa3f478b86f8ec807795c91e0513f514\n", 5),
		strings.Repeat("A03B93A5E108A464E573B06AE7638DC4FA3F478B86F8EC807795C91E0513F514\n", 5),
		"Lh+pclU9MvN9oH4uekt140MyQOaxHlOFrMPJLN338c88KzwzvF2TgTPPreTfwdV+\n",
		"Lh+pclU9MvN9oH4uekt140MyQOaxHlOFrMPJLN338c88KzwzvF2TgTPPreTfwdV+\nN7dMQwFX+Wc4xbpniViXkoZF00WZtU2NHUh6keyAJX6vy6HLKTA0pa/ObyFog3qS\nok",
		"-----END PUBLIC KEY-----", "D:\\\\builds\\\\", // a drive's folder is a path, tested below
		// A model's answer about passwords, keys and tokens is prose: a
		// setting's name takes its value after a space only as a flag.
		"The password must be at least 8 characters long.", "Use a secret key of 32 bytes.", "Run the pwd command to print the folder.",
		"Never share your api key with anyone.", "An access_token expires; the refresh token lasts longer.", "hf_token stays in the environment",
		"The client secret goes in a vault, and the passwd file lists users.",
		"A bearer token goes in the Authorization header.", "Bearer tokens expire; the Bearer scheme is RFC 6750.", "bearer authentication",
	} {
		got := r.String(keep)
		if keep == `D:\\builds\\` {
			if got != `<path>\\` {
				t.Errorf("String(%q) = %q", keep, got)
			}
			continue
		}
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
	fx, _ := filepath.Glob(filepath.Join("..", "..", "bench", "prompts", "qwen3-standard-v1", "*.json"))
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
		// JSON mode also reads the members' names: none of the fixtures'
		// is a secret's.
		if strings.HasSuffix(f, ".json") {
			if found, err := r.FindJSON(data, nil); err != nil || len(found) != 0 {
				t.Errorf("%s in JSON mode: %v %v", filepath.Base(f), found, err)
			}
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

// TestJSONFormsInJSONMode: every planted form inside a JSON string value
// is replaced by JSON and found by FindJSON; and a member whose name says
// it is a secret (with or without a prefix) has its whole value replaced,
// while members named like keys or tokens that are none stay.
func TestJSONFormsInJSONMode(t *testing.T) {
	t.Parallel()
	r := New(machine, Vocabulary())
	for _, c := range plant.Forms {
		doc, _ := json.Marshal(map[string]any{"note": c.Text, "list": []string{c.Text}})
		out, err := r.JSON(doc, false, nil)
		if err != nil || !json.Valid(out) {
			t.Fatalf("JSON(%s): %v %s", doc, err, out)
		}
		var back struct {
			Note string
			List []string
		}
		if err := json.Unmarshal(out, &back); err != nil || len(back.List) != 1 {
			t.Fatalf("JSON(%s) = %s: %v", doc, out, err)
		}
		if strings.Contains(back.Note, c.Private) || strings.Contains(back.List[0], c.Private) || !strings.Contains(back.Note, c.Want) {
			t.Errorf("JSON(%s) = %s", doc, out)
		}
		if f, err := r.FindJSON(doc, nil); err != nil || len(f) == 0 {
			t.Errorf("FindJSON(%s) finds nothing (%v)", doc, err)
		}
	}
	in := `{"OPENAI_API_KEY": "oa1LocalZq81Xv", "env": {"DB_PASSWORD": "correct horse battery", "MY_HF_TOKEN": "hfl0calT0kenQw"},
		"GITHUB_TOKEN": "gh0therT0kenVal9", "llama.api-key": "ll4maKeyV7q2", "private_key": "MIIEvQIBADANBgkq", "AccountKey": "QUJDREVGR0hJSktM==",
		"cache_key": "abc123def456", "sort_key": "name", "api_key_env": "STRATA_KEY", "eos_token": "<|im_end|>", "bos_token": "endoftext1",
		"token": "understanding", "pad_token": "padding1x", "is_secret": "false", "api_key": "<secret>", "password": "env", "max_token": "4096",
		"n": [{"secret": "s3"}], "tokens": "abcdefghijk"}`
	out, err := r.JSON([]byte(in), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"OPENAI_API_KEY": "<secret>", "env": map[string]any{"DB_PASSWORD": "<secret>", "MY_HF_TOKEN": "<secret>"},
		"GITHUB_TOKEN": "<secret>", "llama.api-key": "<secret>", "private_key": "<secret>", "AccountKey": "<secret>",
		"cache_key": "abc123def456", "sort_key": "name", "api_key_env": "STRATA_KEY", "eos_token": "<|im_end|>", "bos_token": "endoftext1",
		"token": "understanding", "pad_token": "padding1x", "is_secret": "false", "api_key": "<secret>", "password": "env", "max_token": "4096",
		"n": []any{map[string]any{"secret": "s3"}}, "tokens": "abcdefghijk"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("JSON members:\n got %v\nwant %v", got, want)
	}
	f, err := r.FindJSON([]byte(in), nil)
	if err != nil || len(f) != 7 {
		t.Errorf("FindJSON: %v %v", f, err)
	}
	// A protocol-owned value is never rewritten, whatever its name.
	if out, _ := r.JSON([]byte(`{"api_key": "ll4maKeyV7q2"}`), false, func([]string) bool { return true }); string(out) != `{"api_key":"ll4maKeyV7q2"}` {
		t.Errorf("owned: %s", out)
	}
}

// TestKnownSecretForms: the key in use is replaced as it is, in other
// letter case, reversed, and wherever base64 (standard or URL alphabet,
// padded or not) encodes it, alone or after a user name of any length;
// a secret shorter than MinSecretLen only as it is.
func TestKnownSecretForms(t *testing.T) {
	t.Parallel()
	const key = "tok~~~en???42x" // its base64 has both alphabets' own characters
	r := New(Machine{Secrets: []string{key, "abc"}}, nil)
	for _, echo := range []string{key, "TOK~~~EN???42X", "Tok~~~En???42X", "x24???ne~~~kot",
		"dG9rfn5+ZW4/Pz80Mng=", "dG9rfn5+ZW4/Pz80Mng", "dG9rfn5-ZW4_Pz80Mng=", "dG9rfn5-ZW4_Pz80Mng",
		"YTp0b2t+fn5lbj8/PzQyeA==", "YWI6dG9rfn5+ZW4/Pz80Mng=", "YWJjOnRva35+fmVuPz8/NDJ4", "YWJjOnRva35-fmVuPz8_NDJ4"} {
		for _, text := range []string{"echo " + echo + " done", `{"h":"Basic ` + echo + `"}`, "x\\n" + echo} {
			got := r.String(text)
			if strings.Contains(got, echo) || !strings.Contains(got, Secret) {
				t.Errorf("String(%q) = %q", text, got)
			}
			if len(r.Find(text)) == 0 {
				t.Errorf("Find(%q) finds nothing", text)
			}
		}
	}
	// A long base64 text holding the key many times is one secret (and is
	// walked once, not once for each time).
	if got := r.String("x " + strings.Repeat("YWJjOnRva35+fmVuPz8/NDJ4", 20000) + " y"); got != "x <secret> y" {
		t.Errorf("repeated: %.40q", got)
	}
	// The escape before a base64 text in JSON text stays an escape.
	if got := r.String(`"a\ndG9rfn5+ZW4/Pz80Mng="`); got != `"a\n<secret>"` {
		t.Errorf("escaped line end: %q", got)
	}
	for text, want := range map[string]string{
		"abc and ABC and cba": "<secret> and ABC and cba",
		"tok~~ en???42x":      "tok~~ en???42x",
		"dG9rfn5+ZW4/Pz80":    "dG9rfn5+ZW4/Pz80", // too little of the key
	} {
		if got := r.String(text); got != want {
			t.Errorf("String(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestProviderRulesLoad: the embedded gitleaks rule set compiles, every
// rule's regexp included (each is compiled on first use, where an error
// would leave that key format unredacted), and only the excluded generic
// rule is left out.
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
		if _, err := r.expr(); err != nil {
			t.Errorf("rule %s: %v", r.id, err)
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

// BenchmarkResultStrings is what a result folder mostly is: thousands of
// short strings (IDs, states, timestamps, engine names, short answers),
// each redacted on its own, where a rule's fixed cost per string counts
// and not its speed over megabytes.
func BenchmarkResultStrings(b *testing.B) {
	r := New(machine, Vocabulary())
	strs := []string{"performance-short-r1", "completed", "The answer is READY and the record A-17 was found in the table.", "stop",
		"llama.cpp b10470", "sanity-T4: the call lookup_record with id A-17 passed", "2026-12-03T13:37:14.123456Z"}
	for b.Loop() {
		for _, s := range strs {
			r.String(s)
		}
	}
}

// BenchmarkResultFolder is the redaction of a complete committed result
// folder's two JSON files as the writer redacts them (every string, the
// names that say "tokens" and "key" included).
func BenchmarkResultFolder(b *testing.B) {
	r := New(machine, Vocabulary())
	var docs [][]byte
	for _, f := range []string{"results.json", "outputs.jsonl"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "results", "baseline", f))
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, data)
	}
	for b.Loop() {
		for _, d := range docs {
			if _, err := r.JSON(d, false, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestPrefiltersNeverHideAMatch holds each rule's cheap test (its
// literals, counts or gate) to what it stands in for: on the planted forms
// and on random text dense with the rules' separators and literals, a
// text the regexp matches always passes the prefilter. The home folders'
// literal test stands aside for text that is not ASCII, where the regexp
// folds case as Unicode does: a Kelvin sign is a k.
func TestPrefiltersNeverHideAMatch(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "F", "0", "9", "ab", "1f", ":", "-", ".", "/", `\`, `:\`, "@", " ", "\"", "=", "_", "~", "%2f",
		"home", "Users", "root", "C:", "10.", "192.168.", "fe80", "fd", ".lan", ".local", "key", "token", "Bearer ", "basic ",
		"://", "sig=", "-----BEGIN", "-----END", "AKIA", "sk-", "hf_", "glpat-", "aiza", "alice", "srv", "x.gguf",
		"secret", "Password", "passwd", "pwd", "hft", "api_", "'", "\t", "\n", "--", "tokens", "keys", "s3cr3tvalue"}
	texts := []string{"\u212Aate at /home/\u212Aate/m", "/HOME/ALICE/m", "/home/alice"}
	for _, f := range plant.Forms {
		texts = append(texts, f.Text)
	}
	rnd := rand.New(rand.NewPCG(7, 11))
	for range 4000 {
		var b strings.Builder
		for range 2 + rnd.IntN(24) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	r := New(Machine{HomeDirs: append([]string{"/home/kate"}, plant.HomeDirs...), Users: plant.Users, Hosts: plant.Hosts}, Vocabulary())
	var rules []rule
	for _, set := range [][]rule{pairedRules, secretRules, pathRules, addressRules} {
		rules = append(rules, set...)
	}
	hidden := 0
	for _, s := range texts {
		low := asciiLower(s)
		for _, ru := range rules {
			if ru.re().MatchString(s) && !ru.applies(low) {
				hidden++
				t.Errorf("%q matches %v, whose prefilter skips it", s, ru.re())
			}
		}
		if absDir().MatchString(s) && strings.Count(s, "/") < 2 || absWinDir().MatchString(s) && !strings.Contains(s, `:\`) {
			t.Errorf("%q: a path regexp matches where its count skips it", s)
		}
		if r.homes.MatchString(s) && !r.mayHoldHome(s, low) {
			t.Errorf("%q: the home folders' regexp matches where the literal test skips it", s)
		}
		if hidden > 10 {
			t.Fatal("more")
		}
	}
	if got := r.String("\u212Aate at /home/\u212Aate/m"); strings.Contains(got, "/home/") {
		t.Errorf("a home folder with a Kelvin sign was kept: %q", got)
	}
}

// TestOwnedValuesAreCopiedAsWalked: an object or array skip owns is
// copied whole, byte for byte what walking it token by token writes
// (escapes of v1's encoder undone, numbers as they were, indented alike).
func TestOwnedValuesAreCopiedAsWalked(t *testing.T) {
	t.Parallel()
	in := []byte(`{"request":{"a":"\u003cx\u003e \u0026 \u00e9 \ud83d\ude00","n":1.50,"e":[],"z":[1e3,-0]},"events":[[0.001000,"headers"]],"b":"\u003c /home/bench/x"}`)
	whole := func(p []string) bool { return len(p) > 0 && (p[0] == "request" || p[0] == "events") }
	below := func(p []string) bool { return len(p) > 1 && (p[0] == "request" || p[0] == "events") }
	r := New(machine, nil)
	for _, indent := range []bool{false, true} {
		copied, err := r.JSON(in, indent, whole)
		walked, err2 := r.JSON(in, indent, below)
		if err != nil || err2 != nil || string(copied) != string(walked) || !strings.Contains(string(copied), `"a": "<x> & é`) && indent {
			t.Errorf("indent %v: copied %s (%v), walked %s (%v)", indent, copied, err, walked, err2)
		}
	}
}

// TestMACGates: the MAC address rules' gates let through every text with a
// match's shape, wherever it stands and whatever joins its groups, and
// hold back prose with its separators (full stops, colons, hyphens) but
// not that shape; the redactor then finds exactly the addresses.
func TestMACGates(t *testing.T) {
	t.Parallel()
	byWhat := map[string]rule{}
	for _, ru := range addressRules {
		byWhat[ru.what] = ru
	}
	colon, dotted := byWhat["a MAC address"], byWhat["a MAC address (dotted form)"]
	if colon.re == nil || dotted.re == nil {
		t.Fatal("the MAC address rules are not among the address rules")
	}
	for _, c := range []struct {
		text           string
		colon, dotted  bool
		redactedWithin string
	}{
		{"ether 00:1a:2b:3c:4d:5e brd", true, false, "ether " + MAC + " brd"},
		{"AA-BB-CC-DD-EE-FF", true, false, MAC},
		{"mixed 00:1a-2b:3c-4d:5e", true, false, "mixed " + MAC},
		{"0000.1a2b.3c4d", false, true, MAC},
		{"x 0123.4567.89AB.", false, true, "x " + MAC + "."},
		{"It was 3.5 times faster. Then 10.2 more. See e.g. 1.2.3.", false, false, ""},
		{"12:30:45 - 13:00:00 - 14:15:16", false, false, ""},
		{"ab:cd:ef:01:23", false, false, ""},                        // five groups
		{"abcd.ef01.234", false, false, ""},                         // a group short
		{"00:1a:2b:3c:4d:5g", false, false, ""},                     // not hex
		{"a 1f2e.3d4c.5b6a7 b", false, true, "a 1f2e.3d4c.5b6a7 b"}, // the shape inside a longer word: the regexp decides
	} {
		low := asciiLower(c.text)
		if colon.applies(low) != c.colon || dotted.applies(low) != c.dotted {
			t.Errorf("%q: colon gate %v, dotted gate %v; want %v, %v", c.text, colon.applies(low), dotted.applies(low), c.colon, c.dotted)
		}
		want := c.redactedWithin
		if want == "" {
			want = c.text
		}
		if got := New(Machine{}, nil).String(c.text); got != want {
			t.Errorf("%q redacted to %q, want %q", c.text, got, want)
		}
	}
}

// TestEveryPatternCompiles: the patterns are compiled on first use, so a
// pattern that does not compile would panic in the middle of a run; each
// is compiled here.
func TestEveryPatternCompiles(t *testing.T) {
	t.Parallel()
	n := 0
	for _, set := range [][]rule{pairedRules, secretRules, pathRules, addressRules} {
		for _, ru := range set {
			if ru.re == nil || ru.re() == nil {
				t.Errorf("rule %q has no pattern", ru.what)
			}
			n++
		}
	}
	for _, p := range []pattern{settingMember, tokenMember, wholeToken, vocabularyToken, absDir, absWinDir, emptyKeyBlock, userSetting} {
		if p() == nil {
			t.Error("a pattern compiled to nil")
		}
		n++
	}
	if n < 41 { // 33 rules and 8 patterns today
		t.Errorf("only %d patterns compiled", n)
	}
}
