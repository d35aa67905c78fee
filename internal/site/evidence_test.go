package site_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/site"
)

// TestEvidence: what a run publishes, and why a listed artifact is not.
func TestEvidence(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	var arts []contract.Artifact
	list := func(kind, path string, data []byte) {
		files[path] = data
		s := sha256.Sum256(data)
		arts = append(arts, contract.Artifact{Kind: kind, Path: path, SHA256: hex.EncodeToString(s[:])})
	}
	published := []string{"outputs.jsonl", "evil.html", `name "'><img src=x>`, "a b?#.log"}
	for _, p := range published {
		list(contract.ArtifactOutputs, p, []byte(p))
	}
	withheld := map[string]string{
		"sub/x.log": "plain", `sub\x.log`: "plain", "../x.log": "plain", "/etc/x": "plain", ".x.log": "plain",
		"x..log": "plain", "c:x.log": "plain", "x\n.log": "plain", strings.Repeat("x", 201): "plain", "\xff.log": "plain",
		"kind.log": "kind",
	}
	for p, why := range withheld {
		kind := contract.ArtifactProvenance
		if why == "kind" {
			kind = "script"
		}
		list(kind, p, []byte(p))
	}
	arts = append(arts, contract.Artifact{Kind: contract.ArtifactConfig, Path: "absent.json", SHA256: strings.Repeat("0", 64)})
	withheld["absent.json"] = "not in the folder"
	list(contract.ArtifactConfig, "wrong.json", []byte("a"))
	files["wrong.json"] = []byte("b")
	withheld["wrong.json"] = "hash"
	arts = append(arts, arts[0])                                     // listed twice
	list(contract.ArtifactOutputs, "OUTPUTS.jsonl", []byte("other")) // the same name on a Mac
	withheld["OUTPUTS.jsonl"] = "same name"
	files["results.json"], files["README.md"], files["unlisted.html"] = []byte("{}"), []byte("# r"), []byte("<script>")
	r := &site.Run{Results: &contract.Results{Artifacts: arts}, Files: files}
	got := map[string]site.Evidence{}
	for _, e := range r.Evidence() {
		if _, twice := got[e.Name]; twice {
			if e.Published() {
				t.Errorf("%q published twice", e.Name)
			}
			continue
		}
		got[e.Name] = e
	}
	for _, p := range append(published, "results.json", "README.md") {
		if e, ok := got[p]; !ok || !e.Published() {
			t.Errorf("%q not published: %+v", p, e)
		}
	}
	for p, why := range withheld {
		if e, ok := got[p]; !ok || e.Published() {
			t.Errorf("%q (%s) published or not listed: %+v", p, why, e)
		}
	}
	if _, ok := got["unlisted.html"]; ok {
		t.Error("an unlisted file is evidence")
	}
	// A legacy folder offers its README only.
	legacy := &site.Run{Files: files}
	if ev := legacy.Evidence(); len(ev) != 1 || ev[0].Name != "README.md" || !ev[0].Published() {
		t.Errorf("legacy evidence %+v", ev)
	}
}
