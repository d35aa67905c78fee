package engine

import "testing"

// FuzzParse: a profile is outside input; Parse never panics, and a profile
// it accepts has only known keys (Check then validates the values).
func FuzzParse(f *testing.F) {
	f.Add([]byte("url = \"http://127.0.0.1:8080\"\ncommand = [\"llama-server\", \"-m\", \"m.gguf\"]\nload_timeout = \"10m\"\n[env]\nCUDA_VISIBLE_DEVICES = \"0\"\n[identity]\ntrack = \"default\"\n"))
	f.Add([]byte("url = 3\n"))
	f.Add([]byte("[identity]\ntrak = \"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "fuzz.toml")
		if err == nil {
			_ = p.Check()
			_ = p.Sanitized()
		}
	})
}
