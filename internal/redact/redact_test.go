package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	r := New(Machine{HomeDirs: []string{"/home/alice"}, Users: []string{"alice"}, Hosts: []string{"gpu-box-7"}, Secrets: []string{"s3cr3t-profile-key"}})
	cases := []struct{ in, gone, want string }{
		{"model at /home/alice/models/q.gguf", "alice", "<home>/models/q.gguf"},
		{"/Users/bob/Library/x", "bob", "<home>/Library/x"},
		{`C:\Users\carol\models\q.gguf`, "carol", `<home>\models\q.gguf`},
		{`"C:\\Users\\carol\\m.gguf"`, "carol", `<home>`},
		{"host gpu-box-7 ready", "gpu-box-7", "host <host> ready"},
		{"user alice logged in", "alice", "user <user> logged in"},
		{"listening on 192.168.1.20:8080", "192.168.1.20", "<private-ip>:8080"},
		{"peer 10.0.0.5 and 172.20.1.1 and 169.254.3.4", "10.0.0.5", "<private-ip>"},
		{"addr fe80::1ff:fe23:4567:890a%eth0", "fe80::1ff", "<private-ip>"},
		{"addr fd12:3456:789a::1", "fd12:3456", "<private-ip>"},
		{"mac 00:1A:2b:3C:4d:5E", "00:1A", "<mac>"},
		{"contact alice.smith@example.com", "example.com", "<email>"},
		{"Authorization: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234", "Bearer <secret>"},
		{"key sk-proj-ABCDEFGHIJKLMNOPQRSTUV123", "ABCDEFGHIJ", "<secret>"},
		{"token hf_ABCDEFGHIJKLMNOPQRSTUVWXYZ", "hf_ABC", "<secret>"},
		{"ghp_0123456789abcdefghijklmnopqrstuvwxyz", "ghp_", "<secret>"},
		{`--api-key=supersecretvalue`, "supersecretvalue", "<secret>"},
		{"profile key s3cr3t-profile-key", "s3cr3t-profile-key", "<secret>"},
		{"-m /srv/ai/llm-models/tiny.gguf", "/srv/ai", "<path>/tiny.gguf"},
	}
	for _, c := range cases {
		got := r.String(c.in)
		if strings.Contains(got, c.gone) || !strings.Contains(got, c.want) {
			t.Errorf("String(%q) = %q: want %q, without %q", c.in, got, c.want, c.gone)
		}
	}
	// What must survive: loopback, API paths, versions, protocol text.
	for _, keep := range []string{
		"http://127.0.0.1:8080/v1/chat/completions", "GET /v1/models answered", "build b9928-81ff7ab",
		"usage.prompt_tokens", "timings.prompt_ms / 1000", "max_tokens: 512", "[case sanity-T1]",
		"record000001: alpha beta gamma", "root", "localhost",
		// A real llama-server log (b10470): vocabulary ids are not secrets.
		"load: control-looking token: 128247 '</s>' was not control-type; this is probably a bug in the model.",
		"print_info: EOG token        = 151645 '<|im_end|>'", "print_info: BOS token        = 151643 '<|endoftext|>'",
	} {
		if got := r.String(keep); got != keep {
			t.Errorf("String(%q) = %q: must stay", keep, got)
		}
	}
}

func TestJSONRedactsValuesNotNames(t *testing.T) {
	r := New(Machine{Users: []string{"alice"}})
	in := `{"missing": {"/software/strata_commit": "no commit in /home/alice/src"}, "alice": ["10.1.2.3", 3, null, true]}`
	out, err := r.JSON([]byte(in), false)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("not JSON: %s", out)
	}
	s := string(out)
	if !strings.Contains(s, `"/software/strata_commit"`) || !strings.Contains(s, `"alice":`) {
		t.Errorf("names changed: %s", s)
	}
	if strings.Contains(s, "/home/alice") || strings.Contains(s, "10.1.2.3") {
		t.Errorf("values not redacted: %s", s)
	}
}

func FuzzJSONStaysValid(f *testing.F) {
	f.Add(`{"a":"/home/x/y","b":[1,"fe80::1"]}`)
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		out, err := New(Machine{Users: []string{"alice"}}).JSON([]byte(s), true)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid output %q for %q", out, s)
		}
	})
}
