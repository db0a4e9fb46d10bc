package gate

import (
	"os"
	"path/filepath"

	"github.com/geas-dev/geas/internal/fsutil"
)

// WriteOutputFile writes a report the caller asked for (geas gate -o FORMAT=FILE) at the absolute
// path abs, atomically (a temporary file, fsync, rename) inside its directory opened as a root,
// so that no link in the name takes the write elsewhere.
func WriteOutputFile(abs string, data []byte) error {
	root, err := os.OpenRoot(filepath.Dir(abs))
	if err != nil {
		return err
	}
	defer root.Close()
	return fsutil.WriteFileAtomic(root, filepath.Base(abs), data, 0o644)
}
