package submissions

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/resulttest"
)

// Payload is markup planted in the string field named: it leaves a text
// node and an attribute in either quote, and if any part of it ever ran it
// would set window.__pwned to the field's name (so a failure says which
// field leaked).
func Payload(field string) string {
	return field + ` "'><script>window.__pwned='` + field + `'</script><img src=x onerror="window.__pwned='` + field + `'">`
}

// NamePayload is markup that a file, folder or model name can carry: no
// slash, so it stays one path element.
func NamePayload(field string) string {
	return field + ` "'><img src=x onerror="window.__pwned='` + field + `'">`
}

// script is a file a browser would run if it served it as HTML or SVG.
func script(name string) []byte {
	return []byte(`<!doctype html><title>` + name + `</title><script>window.__pwned='` + name + `'</script>` +
		`<img src=x onerror="window.__pwned='` + name + ` onerror'">`)
}

// evilSVG runs script twice over: an inline <script> and an onload.
func evilSVG(name string) []byte {
	return []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned='` + name + ` onload'">` +
		`<script>window.__pwned='` + name + `'</script><circle r="9"/></svg>`)
}

// plantRendered writes the files a browser renders into a result folder of
// the work tree and lists each in its results.json as provenance with its
// true hash (so the folder still validates, and the site must publish them
// as text, never as pages), and returns their names.
func (s *Scenario) plantRendered(tb testing.TB, role string) []string {
	tb.Helper()
	files := map[string][]byte{
		"evil.html":  script(role + " evil.html"),
		"evil.svg":   evilSVG(role + " evil.svg"),
		"index.html": script(role + " index.html"),
		// Named with markup.
		NamePayload(role + "-unlisted"): script(role + " unlisted"),
	}
	var names []string
	for name, data := range files {
		s.Repo.Write(tb, filepath.Join(s.Folders[role], name), data)
		names = append(names, name)
	}
	sort.Strings(names)
	editJSON(tb, filepath.Join(s.Repo.Dir, s.Folders[role], "results.json"), func(doc map[string]any) {
		arts := list(doc["artifacts"])
		for _, name := range names {
			arts = append(arts, map[string]any{"kind": "provenance", "path": name, "sha256": sha256Hex(files[name])})
		}
		doc["artifacts"] = arts
	})
	return names
}

// addHostile writes the hostile submission: a folder named with markup
// whose results.json (in the format but unvalidated: nobody approved it)
// carries markup in every string the site shows, lists artifacts under
// names that must never be published, and sits beside files a browser
// renders.
func (s *Scenario) addHostile(tb testing.TB, out string) {
	tb.Helper()
	dir := resulttest.Folder(tb, filepath.Join(out, "hostile"), resulttest.Options{GPU: "NVIDIA GeForce RTX 4080", Quant: "IQ3_XXS"})
	folder := "bench/results/2026-11-20-hostile-" + NamePayload("folder")
	s.Folders["hostile"] = folder
	s.Repo.CopyFolder(tb, dir, folder)
	artifactName := NamePayload("artifact-name")
	listed := map[string][]byte{ // listed with their true hashes
		"evil.svg":      evilSVG("hostile listed evil.svg"),
		artifactName:    script("hostile artifact-name"),
		"sub/evil.html": script("hostile sub/evil.html"),
		`sub\evil.html`: script(`hostile sub\evil.html`),
		".hidden.html":  script("hostile .hidden.html"),
		"kind.html":     script("hostile kind.html"),
	}
	unlisted := map[string][]byte{
		"evil.html":       script("hostile evil.html"),
		"index.html":      script("hostile index.html"),
		"extra.xhtml":     script("hostile extra.xhtml"),
		"wrong-hash.html": script("hostile wrong-hash.html"),
		"README.md":       []byte("# " + Payload("hostile-readme") + "\n"),
	}
	for _, files := range []map[string][]byte{listed, unlisted} {
		for name, data := range files {
			s.Repo.Write(tb, folder+"/"+name, data)
		}
	}
	artifact := func(kind, path string, data []byte) map[string]any {
		return map[string]any{"kind": kind, "path": path, "sha256": sha256Hex(data)}
	}
	editJSON(tb, filepath.Join(s.Repo.Dir, folder, "results.json"), func(doc map[string]any) {
		plantFields(doc)
		arts := list(doc["artifacts"])
		for _, name := range []string{"evil.svg", artifactName, "sub/evil.html", `sub\evil.html`, ".hidden.html"} {
			arts = append(arts, artifact("provenance", name, listed[name]))
		}
		doc["artifacts"] = append(arts,
			artifact(Payload("artifact-kind"), "kind.html", listed["kind.html"]),
			artifact("provenance", "wrong-hash.html", []byte("not these bytes")),
			artifact("provenance", "../evil.html", nil),
			artifact("provenance", "/etc/hostname", nil),
			artifact("provenance", Payload("artifact-path"), nil),
		)
	})
	s.RunIDs["hostile"] = Payload("run-id")
	s.Unpublishable["hostile"] = []string{"evil.html", "index.html", "extra.xhtml", "wrong-hash.html",
		"sub/evil.html", `sub\evil.html`, ".hidden.html", "kind.html"}
	s.ListedAsText["hostile"] = []string{"evil.svg", artifactName}
}

// plantFields puts markup in every string of a results.json that the site
// shows, except the protocol ID (a foreign one makes the run a draft, whose
// status reasons another folder carries).
func plantFields(doc map[string]any) {
	run, proto, model, sw, conf := obj(doc, "run"), obj(doc, "protocol"), obj(doc, "model"), obj(doc, "software"), obj(doc, "configuration")
	run["id"], run["started_at"], run["command"], run["status"] = Payload("run-id"), Payload("started-at"), Payload("command"), Payload("run-status")
	proto["profile"], proto["corpus_sha256"] = Payload("profile"), Payload("corpus-sha256")
	obj(list(obj(doc, "hardware")["gpus"])[0], "")["name"] = Payload("gpu")
	sw["engine_version"], sw["strata_commit"] = Payload("engine-version"), Payload("strata-commit")
	model["id"], model["quantization"] = Payload("model-id"), Payload("quantization")
	file := obj(list(model["files"])[0], "")
	file["path"], file["sha256"] = Payload("model-file-path"), Payload("model-file-sha256")
	conf["track"], conf["track_notes"] = Payload("track"), Payload("track-notes")
	first := true
	for _, q := range list(doc["requests"]) {
		req := obj(q, "")
		ev, ok := req["evaluation"].(map[string]any)
		if !ok {
			continue
		}
		ev["reason"] = Payload("verdict-reason")
		if first { // the verdict table's other columns
			req["case_id"], req["status"], first = Payload("verdict-case"), Payload("verdict-status"), false
		}
	}
}

// plantStatusReason adds markup to the reasons a partial run gives (the
// validator does not read them, so the folder stays valid).
func (s *Scenario) plantStatusReason(tb testing.TB, role string) {
	tb.Helper()
	p := filepath.Join(s.Repo.Dir, s.Folders[role], "results.json")
	editJSON(tb, p, func(doc map[string]any) {
		sr := obj(obj(doc, "extensions"), "status_reasons")
		sr["partial"] = append(list(sr["partial"]), map[string]any{"kind": string(contract.SkippedWork), "text": Payload("status-reason")})
	})
}

// editJSON rewrites a JSON file through EditJSON.
func editJSON(tb testing.TB, path string, edit func(map[string]any)) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, resulttest.EditJSON(tb, data, edit), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// obj is v[key] as an object (v itself when key is empty); it panics on any
// other shape, which in a test helper means the result format changed.
func obj(v any, key string) map[string]any {
	m := v.(map[string]any)
	if key == "" {
		return m
	}
	return m[key].(map[string]any)
}

func list(v any) []any {
	if v == nil {
		return nil
	}
	return v.([]any)
}
