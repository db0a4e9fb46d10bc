package record

import (
	"context"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
)

// LockTask takes the exclusive lock of the task directory taskDir (relative to root), held for a
// whole read-modify-write of its record.json and contract.json, waiting for another holder to
// release it as the LockWait of ctx says (fsutil.Acquire). The lock file is taskDir/record.lock,
// named .geas/taskDir/record.lock in waits and errors.
func LockTask(ctx context.Context, root *os.Root, taskDir string) (*fsutil.Lock, error) {
	if err := fsutil.CheckName(taskDir); err != nil {
		return nil, fmt.Errorf("lock task: %w", err)
	}
	name := path.Join(taskDir, "record.lock")
	return fsutil.Acquire(ctx, root, name, ".geas/"+name)
}

// Timestamp formats t the way geas v1 writes every timestamp (its isoUtcTimestamp: UTC, second
// precision, a literal Z), so that files geas and this gate write validate against the same schema.
func Timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05Z")
}
