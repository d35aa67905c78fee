package redact

import (
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/redact/plant"
)

// TestWordKeysAreRefused: a key the redactor cannot
// take out of a folder without taking evidence with it (a word of strata's
// text or of the fixtures, the engine's name, a word or number of any
// text) is refused, and a key that looks like one of the random keys
// people use is not.
func TestWordKeysAreRefused(t *testing.T) {
	t.Parallel()
	fixtures := []string{"Look up the record A-17 with the tool lookup_record.", "performance-short-r1"}
	for _, c := range []struct{ key, want string }{
		{"k3y-s7x", "has 7 characters; strata needs at least 8"},
		{"reasoning", "letters of one case alone"},
		{"REASONING", "letters of one case alone"},
		{"llama.cpp", "letters of one case alone"},
		{"elephants", "letters of one case alone"},
		{"my-api-key", "letters of one case alone"},
		{"12345678", "digits alone"},
		{"%41%42%43%44 7", "has 5 characters once its spaces, invisible characters and escapes are read"},
		{"Reason\u200bing", "a word, part of one, or made of words"},
		{"2026-12-03", "digits alone"},
		{"Performance", "a word, part of one, or made of words"},
		{"Completed", "a word, part of one, or made of words"},
		{"Assistant", "a word, part of one, or made of words"},
		{"Elephants", "a word, part of one, or made of words"},
		{"erformanC", "a word, part of one, or made of words"}, // inside "performance"
		{"b10470-Build", "a word, part of one, or made of words"},
		{"gninosaeR", "a word, part of one, or made of words"}, // reversed, it is "Reasoning"
		{"Lookup_Record", "a word, part of one, or made of words"},
		{"performance-Short-r1", "a word, part of one, or made of words"},
		{"qwen3-Standard-v1", "a word, part of one, or made of words"},
	} {
		err := CheckKey(c.key, fixtures...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckKey(%q) = %v, want an error saying %q", c.key, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), c.key) {
			t.Errorf("CheckKey(%q) = %v: the error shows the key", c.key, err)
		}
	}
	for _, key := range []string{"k3y-s8xz", "strata-server-key-8f3e2a", "s3cr3t-profile-key", "sk-proj-ABCDEFGHIJKLMNOPQRSTUV123",
		"550e8400-e29b-41d4-a716-446655440000", "MySecretKey", "Zq7+vX2/mW4=pL9k", "b9928-81ff7ab", "my-private-server-key-42",
		"k3y-for-strata-tests", "tok~~~en???42x"} {
		if err := CheckKey(key, fixtures...); err != nil {
			t.Errorf("CheckKey(%q) = %v, want nil", key, err)
		}
	}
}

// TestKeyIn: the key is found in text in every form the redactor
// replaces, and not where it is not.
func TestKeyIn(t *testing.T) {
	t.Parallel()
	const key = "b9928-81ff7ab"
	for _, text := range []string{`/props build_info "b9928-81ff7ab" (llama.cpp's b<build>-<commit> form)`, "B9928-81FF7AB", "ba7ff18-8299b", "b 9 9 2 8 - 8 1 f f 7 a b"} {
		if !KeyIn(key, text) {
			t.Errorf("KeyIn(%q, %q) = false", key, text)
		}
	}
	for _, text := range []string{`/props build_info "b10470-34af94cd9"`, "b9928", ""} {
		if KeyIn(key, text) {
			t.Errorf("KeyIn(%q, %q) = true", key, text)
		}
	}
}

// TestCommonWordUserNames: a user called by a common
// word keeps that word in prose and in the engine's log, and is still
// replaced where it stands as the user's name.
func TestCommonWordUserNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"hit", "pc", "normal", "browser", "answering", "build"} {
		r := New(Machine{Users: []string{name}, HomeDirs: []string{"/home/" + name}}, Vocabulary())
		for _, keep := range []string{
			"expert cache 99.0% " + name, name + " rate 12%", "the " + name + " path was taken", strings.ToUpper(name) + ": ok",
			`"` + name + `": 17`, "role: user, content: " + name, "cache " + name + "/miss", // a fraction, not a home
		} {
			if got := r.String(keep); got != keep {
				t.Errorf("user %q: String(%q) = %q, must stay", name, keep, got)
			}
		}
		for text, want := range map[string]string{
			"model at /home/" + name + "/m.gguf":    "model at <home>/m.gguf",
			"ssh " + name + "@box ls":               "ssh <user>@box ls",
			"see ~" + name + " and ~" + name + "/x": "see ~<user> and <home>/x",
			"USER=" + name + " LOGNAME=" + name:     "USER=<user> LOGNAME=<user>",
			"--user " + name + " --port 1":          "--user <user> --port 1",
			`{"owner": "` + name + `"}`:             `{"owner": "<user>"}`,
			"uid=1000(" + name + ") gid=1000(" + name + ") groups=1000(" + name + "),27(sudo)": "uid=1000(<user>) gid=1000(<user>) groups=1000(<user>),27(sudo)",
		} {
			if got := r.String(text); got != want {
				t.Errorf("user %q: String(%q) = %q, want %q", name, text, got, want)
			}
		}
	}
	// A name that is no common word is replaced as a word, as before.
	if got := New(Machine{Users: []string{"jdoe42", "alice"}}, Vocabulary()).String("hello jdoe42 and Alice"); got != "hello <user> and <user>" {
		t.Errorf("names: %q", got)
	}
}

// TestEchoViewLeavesTextAlone: the escaped, encoded and split forms of a
// key are looked for in a decoded view of the text, which never changes
// text that holds no such form, escapes, entities, spaces and invisible
// characters and all.
func TestEchoViewLeavesTextAlone(t *testing.T) {
	t.Parallel()
	r := New(Machine{Secrets: []string{"s3cr3t-profile-key"}}, Vocabulary())
	for _, keep := range []string{
		"s3cr3t-pr", "the profile key s3 is 3 bytes", "%73%33%63 \\u0073\\u0033 &#115;&#51; &amp; &lt;b&gt; &#xZZ; &#99999999999;",
		"a\u200bb\u00adc\ufeffd s\u200c3", "7333637233742d70", "key s3cr3t-p", // too short a start
		`\u00e9\U0001F600 %ZZ %4 \x4`, "& &# &#x &#; &;", strings.Repeat("s3cr3t ", 10),
	} {
		if got := r.String(keep); got != keep {
			t.Errorf("String(%q) = %q, must stay", keep, got)
		}
	}
	var k Keyring
	k.Add("s3cr3t-profile-key")
	for _, echo := range []string{"7333637233742d70726f66696c652d6b6579", "%73%33%63%72%33%74%2D%70%72%6F%66%69%6C%65%2D%6B%65%79",
		"s3cr3t&#45;profile&#x2D;key", "s 3 c r 3 t - p r o f i l e - k e y", "s3cr3t\u200b-profile-key", "S3CR3T-PROF\u2026"} {
		if got := k.Redact("server: bad key " + echo + " (401)"); !strings.HasPrefix(got, "server: bad key <secret>") || !strings.HasSuffix(got, " (401)") {
			t.Errorf("Keyring.Redact(%q) = %q", echo, got)
		}
	}
}

// TestManyEchoes: a text holding the split key many times is redacted
// whole, in one pass (the map from the decoded view back to the text is
// made once, not once for each match).
func TestManyEchoes(t *testing.T) {
	t.Parallel()
	r := New(Machine{Secrets: []string{"s3cr3t-profile-key"}}, nil)
	got := r.String("x " + strings.Repeat("s 3 c r 3 t - p r o f i l e - k e y; ", 20000) + "y")
	if want := "x " + strings.Repeat("<secret>; ", 20000) + "y"; got != want {
		t.Errorf("got %.80q…", got)
	}
}

// TestKeyBlocksTogether: the planted key blocks and bodies, one after
// another in one text (as an engine log holds them), are each replaced:
// no rule reads one block on into the next.
func TestKeyBlocksTogether(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	var private []string
	for _, f := range plant.Forms {
		if strings.Contains(f.Text, "PRIVATE KEY") || strings.Contains(f.Text, "Lh+pclU9MvN9oH4u") {
			in.WriteString(f.Text + "\n")
			private = append(private, f.Private)
		}
	}
	got := New(machine, Vocabulary()).String(in.String())
	for _, p := range private {
		if strings.Contains(got, p) {
			t.Errorf("%q survives in %q", p, got)
		}
	}
	if strings.Count(got, "next line") != strings.Count(in.String(), "next line") {
		t.Errorf("a line after a block was taken with it: %q", got)
	}
}
