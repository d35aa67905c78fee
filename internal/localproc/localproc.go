// Package localproc finds the process on this machine that listens on a TCP
// port, and reads its working folder, command line and environment, so a
// server the runner did not start can still be described: a relative
// model_path is resolved against the server's own working folder, and a
// server-level reasoning budget in its arguments is seen. On Linux it reads
// /proc through an injected filesystem root; elsewhere it finds nothing and
// says so.
package localproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Process is the local process serving a port.
type Process struct {
	PID int
	// Cwd is the process's working folder (absolute, this machine's path).
	Cwd string
	// Args is the command line without the program; Program is argv[0].
	Program string
	Args    []string
	// Env is the process's environment, nil when it cannot be read
	// (another user's process); EnvErr says why.
	Env    []string
	EnvErr error
}

// ErrNotFound means no process of this machine was found listening on the
// port (the server runs elsewhere, in another network namespace, or /proc
// is not readable).
var ErrNotFound = errors.New("no local process was found listening on the port")

// Listening finds the process listening on port. root is the filesystem
// root ("/" in production), which must hold proc/.
func Listening(root fs.FS, port int) (*Process, error) {
	inodes := map[string]bool{}
	for _, table := range []string{"proc/net/tcp", "proc/net/tcp6"} {
		data, err := fs.ReadFile(root, table)
		if err != nil {
			continue
		}
		for _, ino := range listeners(data, port) {
			inodes[ino] = true
		}
	}
	if len(inodes) == 0 {
		return nil, fmt.Errorf("%w: no socket listens on port %d in /proc/net/tcp{,6}", ErrNotFound, port)
	}
	pids, err := fs.ReadDir(root, "proc")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	for _, e := range pids {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if owns(root, pid, inodes) {
			return describe(root, pid)
		}
	}
	return nil, fmt.Errorf("%w: the listening socket on port %d belongs to no process whose file descriptors can be read", ErrNotFound, port)
}

// listeners returns the socket inodes of /proc/net/tcp lines in state LISTEN
// (0A) on port, on any local address.
func listeners(table []byte, port int) []string {
	want := fmt.Sprintf(":%04X", port)
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(table))
	for first := true; sc.Scan(); first = false {
		if first { // the header line
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" || !strings.HasSuffix(strings.ToUpper(f[1]), want) {
			continue
		}
		out = append(out, f[9])
	}
	return out
}

func owns(root fs.FS, pid int, inodes map[string]bool) bool {
	dir := fmt.Sprintf("proc/%d/fd", pid)
	fds, err := fs.ReadDir(root, dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		target, err := fs.ReadLink(root, dir+"/"+fd.Name())
		if err != nil {
			continue
		}
		if ino, ok := strings.CutPrefix(target, "socket:["); ok && inodes[strings.TrimSuffix(ino, "]")] {
			return true
		}
	}
	return false
}

func describe(root fs.FS, pid int) (*Process, error) {
	p := &Process{PID: pid}
	base := fmt.Sprintf("proc/%d", pid)
	cwd, err := fs.ReadLink(root, base+"/cwd")
	if err != nil {
		return nil, fmt.Errorf("the working folder of process %d cannot be read: %w", pid, err)
	}
	p.Cwd = cwd
	cmdline, err := fs.ReadFile(root, base+"/cmdline")
	if err != nil {
		return nil, fmt.Errorf("the command line of process %d cannot be read: %w", pid, err)
	}
	argv := splitNUL(cmdline)
	if len(argv) > 0 {
		p.Program, p.Args = argv[0], argv[1:]
	}
	if p.Args == nil {
		p.Args = []string{}
	}
	env, err := fs.ReadFile(root, base+"/environ")
	if err != nil {
		p.EnvErr = err
	} else {
		p.Env = splitNUL(env)
		if p.Env == nil {
			p.Env = []string{}
		}
	}
	return p, nil
}

func splitNUL(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// Resolve resolves a path the process named relative to its working
// folder; an absolute path is returned as it is.
func (p *Process) Resolve(name string) string {
	if name == "" || path.IsAbs(name) {
		return name
	}
	return path.Join(p.Cwd, name)
}
