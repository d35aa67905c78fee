package site

import (
	"net/http"
	"os"
	"path"
	"strings"
)

// Handler serves a built site for the preview (bench site --serve) with the
// headers a careful static host sends: the policy as a header too (where
// frame-ancestors works, which a meta element cannot carry), nosniff on
// every response, and text/plain for everything under runs/<slug>/, so that
// even a file that is not from this build (a stray copy in the folder) is
// never rendered. It lists no folder: the site links to every file it
// publishes, and a listing is a page no build wrote.
func Handler(dir string) http.Handler {
	files := http.FileServer(noListing{http.Dir(dir)})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", Policy+"; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		if isEvidence(r.URL.Path) {
			// The file server keeps a type that is already set.
			h.Set("Content-Type", "text/plain; charset=utf-8")
		}
		files.ServeHTTP(w, r)
	})
}

// noListing is a file system whose folders open only when they have an
// index.html (which the file server then serves instead of a listing).
type noListing struct{ http.FileSystem }

// Both files are open for reading only: closing one reports nothing a
// request needs, so those errors are discarded.
func (fs noListing) Open(name string) (http.File, error) {
	f, err := fs.FileSystem.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if !st.IsDir() {
		return f, nil
	}
	index, err := fs.FileSystem.Open(path.Join(name, "index.html"))
	if err != nil {
		_ = f.Close()
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	_ = index.Close()
	return f, nil
}

// isEvidence reports whether a request path is inside a run's evidence
// folder. It compares without case, as the file system under a preview
// (macOS, Windows) may.
func isEvidence(p string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(path.Clean("/"+p)), "/runs/")
	return ok && strings.Contains(rest, "/")
}
