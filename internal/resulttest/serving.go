package resulttest

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// ServingURL is the URL of a preview (bench site --serve, bench view
// --serve) read from its serving line on out, the command's stdout; done
// is the command's exit code, so that a command that ends before it serves
// fails the test. The rest of out is drained, so the command never waits
// on a full pipe.
func ServingURL(tb testing.TB, out io.Reader, done <-chan int) string {
	tb.Helper()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "serving "); ok {
				url, _, _ := strings.Cut(rest, " ")
				urls <- url
				break
			}
		}
		_, _ = io.Copy(io.Discard, out) // the rest is drained, not read
	}()
	select {
	case url := <-urls:
		return url
	case code := <-done:
		tb.Fatalf("exit %d before a serving line", code)
	}
	return ""
}
