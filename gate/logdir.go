package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// openLogDir creates a run's log directory through the .geas root and opens it, before any eval
// command runs, as the root every log of the run is created in (SPEC §3: no path the gate opens
// escapes .geas). gate-logs and the run's directory must be real directories, not symlinks (a
// link planted there would take the logs elsewhere in .geas); once opened, a command that
// replaces the directory by a symlink cannot redirect the logs that follow, since the root holds
// the directory itself, and each log is created with O_EXCL. A log directory that cannot be
// made safely is an error of the run (exit 3): the gate does not run commands it cannot log.
func openLogDir(geas *os.Root, logDir string) (*os.Root, error) {
	if err := geas.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("create .geas/%s: %w", logDir, err)
	}
	parent := path.Dir(logDir)
	for _, d := range []string{parent, logDir} {
		fi, err := geas.Lstat(d)
		if err != nil {
			return nil, fmt.Errorf("create .geas/%s: %w", logDir, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("create .geas/%s: .geas/%s is a %s, not a directory: the gate writes logs only into directories it can trust", logDir, d, fi.Mode().Type())
		}
	}
	// Anything but a regular file already in the run's directory was planted before the run (the
	// gate creates only regular files there): refuse to run rather than guess what it is for.
	entries, err := fs.ReadDir(geas.FS(), logDir)
	if err != nil {
		return nil, fmt.Errorf("read .geas/%s: %w", logDir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf(".geas/%s/%s is a %s, not a log the gate wrote: it was planted before the run, and the gate writes no log through it (remove it and run again)", logDir, e.Name(), describeType(e.Type()))
		}
	}
	if len(entries) > 0 {
		// Logs of a run that was never recorded (killed before its history entry), or of a run
		// whose entry was dropped from the history: kept, under another name, and never
		// overwritten (a file there may be a hard link planted to be truncated).
		aside := ""
		for i := 1; i <= 100 && aside == ""; i++ {
			name := fmt.Sprintf("%s.stale-%d", logDir, i)
			if _, err := geas.Lstat(name); errors.Is(err, fs.ErrNotExist) {
				aside = name
			}
		}
		if aside == "" {
			return nil, fmt.Errorf("create .geas/%s: it holds logs of an unrecorded run, and .geas/%s.stale-1..100 all exist", logDir, logDir)
		}
		if err := geas.Rename(logDir, aside); err != nil {
			return nil, fmt.Errorf("move the unrecorded logs of .geas/%s aside: %w", logDir, err)
		}
		if err := geas.Mkdir(logDir, 0o755); err != nil {
			return nil, fmt.Errorf("create .geas/%s: %w", logDir, err)
		}
	}
	want, err := geas.Lstat(logDir)
	if err != nil {
		return nil, err
	}
	root, err := geas.OpenRoot(logDir)
	if err != nil {
		return nil, fmt.Errorf("open .geas/%s: %w", logDir, err)
	}
	if got, err := root.Stat("."); err != nil || !os.SameFile(want, got) {
		root.Close()
		return nil, fmt.Errorf("open .geas/%s: the directory changed while it was opened", logDir)
	}
	return root, nil
}

func describeType(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	}
	return "special file"
}
