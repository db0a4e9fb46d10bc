package record

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/jsonobj"
)

// SetIntegration replaces the integration (written to integration.json by Write).
func (r *Record) SetIntegration(in Integration, now time.Time) error {
	members := []jsonobj.Member{{Key: "status", Value: jsonobj.String(in.Status)}}
	if in.Branch != "" {
		members = append(members, jsonobj.Member{Key: "branch", Value: jsonobj.String(in.Branch)})
	}
	if in.Commit != "" {
		members = append(members, jsonobj.Member{Key: "commit", Value: jsonobj.String(in.Commit)})
	}
	raw := jsonobj.Compact(members)
	if _, _, err := ParseIntegration(IntegrationFile, raw); err != nil {
		return err
	}
	if err := r.update(now); err != nil {
		return err
	}
	r.integration, r.store.integRaw, r.store.integDirty = &in, raw, true
	return nil
}

// writeSiblings writes what Write owes gate-history.jsonl and integration.json, history first.
func (r *Record) writeSiblings(root *os.Root, dir string) error {
	hist := path.Join(dir, HistoryFile)
	if r.store.rewrite || (r.store.legacy && !r.store.haveHist && len(r.history) > 0) {
		data, err := historyLines(r.history)
		if err != nil {
			return err
		}
		if n := int64(len(data)); n > limits.history {
			return fmt.Errorf("write %s: nothing written: %w", hist, &fsutil.TooLargeError{Name: hist, Size: n, Limit: limits.history})
		}
		if err := r.stillHeld("write " + hist); err != nil {
			return err
		}
		write := fsutil.WriteFileAtomic
		if !r.store.haveHist {
			// Read as absent: one that exists now was written by another run while the task
			// was locked (its lock file replaced), and is never overwritten.
			write = fsutil.CreateFileAtomic
		}
		if err := write(root, hist, data, 0o644); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("write %s: nothing written: it was created by another writer while the task was locked: %w", hist, fsutil.ErrLockLost)
			}
			return err
		}
		r.store.haveHist, r.store.rewrite, r.store.torn = true, false, false
		r.store.stored, r.store.valid, r.store.size = len(r.history), int64(len(data)), int64(len(data))
	} else if len(r.history) > r.store.stored {
		if err := r.appendHistory(root, hist, r.history[r.store.stored:]); err != nil {
			return err
		}
	}
	if r.integration != nil && (r.store.integDirty || (r.store.legacy && !r.store.haveInteg)) {
		data := append(bytes.Clone(r.store.integRaw), '\n')
		if n := int64(len(data)); n > maxIntegrationBytes {
			return fmt.Errorf("write %s: nothing written: %w", IntegrationFile, &fsutil.TooLargeError{Name: IntegrationFile, Size: n, Limit: maxIntegrationBytes})
		}
		if err := r.stillHeld("write " + IntegrationFile); err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(root, path.Join(dir, IntegrationFile), data, 0o644); err != nil {
			return err
		}
		r.store.haveInteg, r.store.integDirty = true, false
	}
	return nil
}

// appendHistory appends entries to the history file and fsyncs it: the commit point of SPEC §7.3.
// A torn last line is cut first. The append holds the history file's own lock, and appends only
// to the file exactly as it was read: one shorter (cut behind the task lock's back) or longer
// (appended to by another run, which happens only when the task lock was removed or replaced
// under a run) is an error, never appended to, so that no entry is lost and no run id recorded
// twice. Under that lock the guard (Guard) is asked last, right before the write.
func (r *Record) appendHistory(root *os.Root, name string, entries []HistoryEntry) error {
	data, err := historyLines(entries)
	if err != nil {
		return err
	}
	if n := r.store.valid + int64(len(data)); n > limits.history {
		return fmt.Errorf("append %s: nothing written: %w", name, &fsutil.TooLargeError{Name: name, Size: n, Limit: limits.history})
	}
	if err := fsutil.BeforeWrite("append " + name); err != nil {
		return fmt.Errorf("append %s: %w", name, err)
	}
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return fmt.Errorf("append %s: %w", name, err)
	}
	// O_NONBLOCK: a named pipe put in its place since it was read is refused (ENXIO, or not
	// regular below), not waited on for a reader.
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return fmt.Errorf("append %s: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("append %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("append %s: not a regular file (%s)", name, st.Mode().Type())
	}
	if err := fsutil.LockExclusive(f); err != nil {
		return fmt.Errorf("append %s: lock: %w", name, err)
	}
	if st, err = f.Stat(); err != nil {
		return fmt.Errorf("append %s: %w", name, err)
	}
	switch {
	case st.Size() < r.store.size:
		return fmt.Errorf("append %s: the file has %d bytes, %d were read: it was cut while the task was locked", name, st.Size(), r.store.size)
	case st.Size() > r.store.size:
		return fmt.Errorf("append %s: nothing written: the file has %d bytes, %d were read: another writer appended to it while the task was locked: %w", name, st.Size(), r.store.size, fsutil.ErrLockLost)
	}
	if err := r.stillHeld("append " + name); err != nil {
		return err
	}
	switch {
	case st.Size() > r.store.valid:
		if err := f.Truncate(r.store.valid); err != nil {
			return fmt.Errorf("append %s: cut the torn last line: %w", name, err)
		}
	}
	if _, err := f.WriteAt(data, r.store.valid); err != nil {
		return fmt.Errorf("append %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("append %s: sync: %w", name, err)
	}
	if !r.store.haveHist {
		if err := fsutil.SyncDir(root, path.Dir(name)); err != nil {
			return fmt.Errorf("append %s: %w", name, err)
		}
	}
	r.store.haveHist, r.store.torn = true, false
	r.store.stored += len(entries)
	r.store.valid += int64(len(data))
	r.store.size = r.store.valid
	return f.Close()
}

// CutTornHistory truncates a torn last line of the task's history (SPEC §7.3). The caller holds
// the task's lock; name is record.json's name, as given to Load.
func (r *Record) CutTornHistory(root *os.Root, name string) error {
	if !r.store.torn {
		return nil
	}
	hist := path.Join(path.Dir(name), HistoryFile)
	if err := fsutil.BeforeWrite("truncate " + hist); err != nil {
		return fmt.Errorf("truncate %s: %w", hist, err)
	}
	f, err := root.OpenFile(hist, os.O_WRONLY|syscall.O_NONBLOCK, 0) // a named pipe is refused, not waited on
	if err != nil {
		return fmt.Errorf("truncate %s: %w", hist, err)
	}
	defer f.Close()
	// Under the history file's lock, and only the file as read: a line another run is appending
	// (its lock file replaced under it) is not a torn line to cut.
	if err := fsutil.LockExclusive(f); err != nil {
		return fmt.Errorf("truncate %s: lock: %w", hist, err)
	}
	if st, err := f.Stat(); err != nil {
		return fmt.Errorf("truncate %s: %w", hist, err)
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("truncate %s: not a regular file", hist)
	} else if st.Size() != r.store.size {
		return fmt.Errorf("truncate %s: nothing cut: the file has %d bytes, %d were read: another writer changed it while the task was locked: %w", hist, st.Size(), r.store.size, fsutil.ErrLockLost)
	}
	if err := r.stillHeld("truncate " + hist); err != nil {
		return err
	}
	if err := f.Truncate(r.store.valid); err != nil {
		return fmt.Errorf("truncate %s: %w", hist, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("truncate %s: %w", hist, err)
	}
	r.store.torn, r.store.size = false, r.store.valid
	return f.Close()
}
