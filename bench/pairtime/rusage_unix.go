//go:build unix

package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// runOne runs one command and returns its CPU time and peak RSS in KiB.
func runOne(c []string, out *os.File) (time.Duration, int64, error) {
	path, err := lookPath(c[0])
	if err != nil {
		return 0, 0, err
	}
	p, err := os.StartProcess(path, c, &os.ProcAttr{Files: []*os.File{nil, out, os.Stderr}})
	if err != nil {
		return 0, 0, err
	}
	st, err := p.Wait()
	if err != nil {
		return 0, 0, err
	}
	if code := st.ExitCode(); code < 0 || code > maxExit {
		return 0, 0, fmt.Errorf("%s: %s", strings.Join(c, " "), st)
	}
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, fmt.Errorf("no rusage for %s", c[0])
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS == "darwin" {
		rss /= 1024 // bytes there
	}
	return st.UserTime() + st.SystemTime(), rss, nil
}
