package record

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
)

// eventLine is one gate_result event of mission m, task t, naming history entry hash.
func eventLine(m, t, hash string) string {
	return fmt.Sprintf(`{"timestamp":"2025-06-01T12:30:00Z","event_type":"gate_result","mission_id":%q,"task_id":%q,"agent":"geas-gate","data":{"run_id":"gate-1","hash":%q}}`, m, t, hash) + "\n"
}

// TestEventIndexAnswersAsTaskEventHashes: the index answers every task as a read of the log
// does, also after the log was appended to, replaced, rewritten to the same size, removed, or
// replaced by what is not a file; and it reads the log again only when it changed.
func TestEventIndexAnswersAsTaskEventHashes(t *testing.T) {
	root, geas := openRoot(t)
	log := filepath.Join(geas, filepath.FromSlash(EventsFile))
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
	var x EventIndex
	tasks := [][2]string{{"m1", "t1"}, {"m1", "t2"}, {"m2", "t1"}, {"m1", "t3"}}
	same := func(step string, wantErr bool) {
		t.Helper()
		for _, k := range tasks {
			want, werr := TaskEventHashes(root, k[0], k[1])
			got, gerr := x.TaskEventHashes(root, k[0], k[1])
			require.Equal(t, wantErr, werr != nil, "%s: %v", step, werr)
			if werr != nil {
				require.EqualError(t, gerr, werr.Error(), step)
				continue
			}
			require.NoError(t, gerr, step)
			require.Equal(t, want, got, "%s: %v", step, k)
		}
	}
	same("no log", false)
	lines := eventLine("m1", "t1", "aaaa") + eventLine("m2", "t1", "bbbb") + `{"event_type":"note","task_id":"t2"}` + "\n" +
		eventLine("m1", "t2", "cccc") + eventLine("m1", "t1", "dddd") + `{"torn":` // a torn last line
	require.NoError(t, os.WriteFile(log, []byte(lines), 0o644))
	same("a log", false)
	got, err := x.TaskEventHashes(root, "m1", "t1")
	require.NoError(t, err)
	require.Len(t, got, 2, "the check is not empty: t1 of m1 has two events")
	got[0].Hash = "changed by the caller"
	same("a caller's change is its own", false)

	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n" + eventLine("m1", "t3", "eeee"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	same("appended to", false)
	got, err = x.TaskEventHashes(root, "m1", "t3")
	require.NoError(t, err)
	require.Len(t, got, 1, "the append is seen")

	// Rewritten in place to the same size (the hash's last letter), a later modification time.
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(log, []byte(strings.Replace(string(data), "cccc", "cccx", 1)), 0o644))
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(log, later, later))
	same("rewritten to the same size", false)

	// Replaced by another file (another inode) of the same size and modification time.
	repl := log + ".new"
	require.NoError(t, os.WriteFile(repl, []byte(strings.Replace(string(data), "aaaa", "aaax", 1)), 0o644))
	require.NoError(t, os.Chtimes(repl, later, later))
	require.NoError(t, os.Rename(repl, log))
	same("replaced", false)
	got, err = x.TaskEventHashes(root, "m1", "t1")
	require.NoError(t, err)
	require.Equal(t, "aaax", got[0].Hash, "the replaced log is read")

	require.NoError(t, os.Remove(log))
	same("removed", false)
	require.NoError(t, os.Mkdir(log, 0o755))
	same("a directory in its place", true)
	require.NoError(t, os.Remove(log))
	require.NoError(t, os.WriteFile(log, []byte(eventLine("m1", "t1", "ffff")), 0o644))
	same("back", false)
	var none *EventIndex
	want, err := TaskEventHashes(root, "m1", "t1")
	require.NoError(t, err)
	got, err = none.TaskEventHashes(root, "m1", "t1")
	require.NoError(t, err)
	require.Equal(t, want, got, "a nil index reads the log")
}

// TestEventIndexSeesALogWhoseModificationTimeWasSetBack: a log rewritten in place to the same
// size with its modification time put back (touch -d, os.Chtimes) is read again where the
// platform keeps an inode change time, which no writer can set back.
func TestEventIndexSeesALogWhoseModificationTimeWasSetBack(t *testing.T) {
	root, geas := openRoot(t)
	log := filepath.Join(geas, filepath.FromSlash(EventsFile))
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
	require.NoError(t, os.WriteFile(log, []byte(eventLine("m1", "t1", "aaaa")), 0o644))
	before, err := os.Stat(log)
	require.NoError(t, err)
	ctime, ok := fsutil.ChangeTime(before)
	if !ok {
		t.Skip("no inode change time on this platform")
	}
	var x EventIndex
	got, err := x.TaskEventHashes(root, "m1", "t1")
	require.NoError(t, err)
	require.Equal(t, "aaaa", got[0].Hash)

	// Rewrite until the change time moves on (it may tick coarsely), then set the modification
	// time back to what the index saw.
	for deadline := time.Now().Add(5 * time.Second); ; {
		require.NoError(t, os.WriteFile(log, []byte(eventLine("m1", "t1", "aaax")), 0o644))
		require.NoError(t, os.Chtimes(log, before.ModTime(), before.ModTime()))
		after, err := os.Stat(log)
		require.NoError(t, err)
		require.Equal(t, before.Size(), after.Size())
		require.True(t, before.ModTime().Equal(after.ModTime()))
		if c, _ := fsutil.ChangeTime(after); !c.Equal(ctime) {
			break
		}
		if time.Now().After(deadline) {
			t.Skip("the change time did not move in 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, err = x.TaskEventHashes(root, "m1", "t1")
	require.NoError(t, err)
	require.Equal(t, "aaax", got[0].Hash, "the rewritten log is read again")
}
