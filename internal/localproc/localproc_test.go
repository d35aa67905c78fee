package localproc

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"runtime"
	"testing"
	"testing/fstest"
)

// TestListeningFindsThisProcess: a socket this test opens is found in the
// machine's real /proc, with this process's working folder and arguments.
func TestListeningFindsThisProcess(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }() // it only had to be listening
	p, err := Listening(os.DirFS("/"), ln.Addr().(*net.TCPAddr).Port)
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if p.PID != os.Getpid() || p.Cwd != wd || len(p.Args) != len(os.Args)-1 || p.Env == nil {
		t.Errorf("got pid %d cwd %q args %v env %d, want pid %d cwd %q", p.PID, p.Cwd, p.Args, len(p.Env), os.Getpid(), wd)
	}
	if got := p.Resolve("models/x.gguf"); got != wd+"/models/x.gguf" {
		t.Errorf("Resolve: %q", got)
	}
	if got := p.Resolve("/abs/x.gguf"); got != "/abs/x.gguf" {
		t.Errorf("Resolve absolute: %q", got)
	}
}

// TestListeningRecorded reads a recorded /proc: IPv4 and IPv6 tables, a
// socket that is not listening, an unreadable environment.
func TestListeningRecorded(t *testing.T) {
	t.Parallel()
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	root := fstest.MapFS{
		"proc/net/tcp": {Data: []byte(header +
			"   0: 0100007F:1F9A 0100007F:D2B4 01 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 20 4 30 10 -1\n" +
			"   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 222 1 0 100 0 0 10 0\n")},
		"proc/net/tcp6": {Data: []byte(header +
			"   0: 00000000000000000000000001000000:1F9A 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 333 1 0 100 0 0 10 0\n")},
		"proc/41/fd/3":    {Data: []byte("socket:[222]"), Mode: fs.ModeSymlink},
		"proc/41/cwd":     {Data: []byte("/srv/llama"), Mode: fs.ModeSymlink},
		"proc/41/cmdline": {Data: []byte("llama-server\x00-m\x00models/q.gguf\x00--port\x008080\x00")},
		"proc/41/environ": {Data: []byte("HOME=/root\x00LLAMA_ARG_THINK_BUDGET=8\x00")},
		"proc/77/fd/9":    {Data: []byte("socket:[333]"), Mode: fs.ModeSymlink},
		"proc/77/cwd":     {Data: []byte("/opt/other"), Mode: fs.ModeSymlink},
		"proc/77/cmdline": {Data: []byte("other\x00")},
		"proc/self":       {Data: []byte("41"), Mode: fs.ModeSymlink},
	}
	p, err := Listening(root, 8080)
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != 41 || p.Cwd != "/srv/llama" || p.Program != "llama-server" || len(p.Args) != 4 || len(p.Env) != 2 {
		t.Errorf("8080: %+v", p)
	}
	if p.Resolve("models/q.gguf") != "/srv/llama/models/q.gguf" {
		t.Errorf("resolve: %s", p.Resolve("models/q.gguf"))
	}
	// Port 8090 (1F9A) listens only on IPv6 loopback; its environment is not readable.
	p, err = Listening(root, 8090)
	if err != nil || p.PID != 77 || p.Env != nil || p.EnvErr == nil || len(p.Args) != 0 {
		t.Errorf("8090: %+v, %v", p, err)
	}
	if _, err := Listening(root, 9999); !errors.Is(err, ErrNotFound) {
		t.Errorf("9999: %v", err)
	}
}
