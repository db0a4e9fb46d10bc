package record

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
	for _, exact := range []bool{false, true} {
		t.Run(fmt.Sprintf("exact=%v", exact), func(t *testing.T) { testEventIndexAnswers(t, exact) })
	}
}

func testEventIndexAnswers(t *testing.T, exact bool) {
	root, geas := openRoot(t)
	log := filepath.Join(geas, filepath.FromSlash(EventsFile))
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
	x := EventIndex{Exact: exact}
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
	for _, exact := range []bool{false, true} {
		t.Run(fmt.Sprintf("exact=%v", exact), func(t *testing.T) { testModificationTimeSetBack(t, exact) })
	}
}

func testModificationTimeSetBack(t *testing.T, exact bool) {
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
	x := EventIndex{Exact: exact}
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

// TestExactEventIndexAgreesWhateverHappensToTheLog: an Exact index answers as a read of the log
// after each of 600 random changes: events appended (LF and CRLF), torn lines left and completed,
// blank and unrelated lines, bytes rewritten in place at the same size (no metadata can tell, only
// the content), the log truncated, replaced or removed.
func TestExactEventIndexAgreesWhateverHappensToTheLog(t *testing.T) {
	root, geas := openRoot(t)
	log := filepath.Join(geas, filepath.FromSlash(EventsFile))
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
	rng := rand.New(rand.NewPCG(12, 1))
	tasks := [][2]string{{"m1", "t1"}, {"m1", "t2"}, {"m2", "t1"}}
	x := EventIndex{Exact: true}
	var data []byte
	kinds := map[string]int{}
	for step := range 600 {
		k := tasks[rng.IntN(len(tasks))]
		hash := fmt.Sprintf("h%04d", step)
		var op string
		switch r := rng.IntN(20); {
		case r < 9:
			op, data = "append", append(data, eventLine(k[0], k[1], hash)...)
		case r < 10:
			op, data = "append crlf", append(data, strings.TrimSuffix(eventLine(k[0], k[1], hash), "\n")+"\r\n"...)
		case r < 12:
			line := eventLine(k[0], k[1], hash)
			op, data = "torn", append(data, line[:rng.IntN(len(line)-1)+1]...)
		case r < 13:
			op, data = "blank and unrelated", append(data, "\n{\"event_type\":\"note\",\"data\":{\"hash\":\"zz\"}}\n"...)
		case r < 16 && len(data) > 0:
			i := rng.IntN(len(data))
			op = "rewrite in place"
			data = slices.Clone(data)
			const alphabet = "0123456789abcdef\n{}\""
			data[i] = alphabet[rng.IntN(len(alphabet))]
		case r < 18 && len(data) > 0:
			op, data = "truncate", data[:rng.IntN(len(data))]
		case r < 19:
			op, data = "replace", []byte(eventLine(k[0], k[1], hash))
		default:
			op, data = "remove", nil
		}
		kinds[op]++
		if data == nil {
			require.NoError(t, os.RemoveAll(log))
		} else {
			require.NoError(t, os.WriteFile(log+".tmp", data, 0o644))
			if op == "rewrite in place" || op == "truncate" {
				// In place: the same file, so only its bytes differ.
				f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE, 0o644)
				require.NoError(t, err)
				require.NoError(t, f.Truncate(0))
				_, err = f.WriteAt(data, 0)
				require.NoError(t, err)
				require.NoError(t, f.Close())
				require.NoError(t, os.Remove(log+".tmp"))
			} else {
				require.NoError(t, os.Rename(log+".tmp", log))
			}
		}
		for _, k := range tasks {
			want, werr := TaskEventHashes(root, k[0], k[1])
			got, gerr := x.TaskEventHashes(root, k[0], k[1])
			require.Equal(t, werr, gerr, "step %d %s", step, op)
			require.Equal(t, want, got, "step %d %s %v", step, op, k)
		}
	}
	for _, op := range []string{"append", "append crlf", "torn", "rewrite in place", "truncate", "replace", "remove"} {
		require.Greater(t, kinds[op], 5, op)
	}
}

// TestEventIndexParsesOnlyTheAppendedLines: after an append to a long log, only the new lines are
// parsed; after a rewrite of its first bytes, every line is.
func TestEventIndexParsesOnlyTheAppendedLines(t *testing.T) {
	root, geas := openRoot(t)
	log := filepath.Join(geas, filepath.FromSlash(EventsFile))
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
	var b strings.Builder
	for i := range 1000 {
		b.WriteString(eventLine("m1", fmt.Sprintf("t%d", i%10), fmt.Sprintf("h%04d", i)))
	}
	require.NoError(t, os.WriteFile(log, []byte(b.String()), 0o644))
	x := EventIndex{Exact: true}
	got, err := x.TaskEventHashes(root, "m1", "t3")
	require.NoError(t, err)
	require.Len(t, got, 100)
	require.Equal(t, 1000, x.parsed)

	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(eventLine("m1", "t3", "new1") + eventLine("m1", "t4", "new2"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err = x.TaskEventHashes(root, "m1", "t3")
	require.NoError(t, err)
	require.Len(t, got, 101)
	require.Equal(t, EventHash{Line: 1001, EventType: "gate_result", RunID: "gate-1", Hash: "new1"}, got[100])
	require.Equal(t, 1002, x.parsed, "only the two appended lines were parsed")
	_, err = x.TaskEventHashes(root, "m1", "t4")
	require.NoError(t, err)
	require.Equal(t, 1002, x.parsed, "an unchanged log parses nothing")

	// The first event's hash rewritten in place, same size.
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	g, err := os.OpenFile(log, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = g.WriteAt([]byte("x"), int64(bytes.Index(data, []byte("h0000"))))
	require.NoError(t, err)
	require.NoError(t, g.Close())
	got, err = x.TaskEventHashes(root, "m1", "t0")
	require.NoError(t, err)
	require.Equal(t, "x0000", got[0].Hash)
	require.Equal(t, 1002+1002, x.parsed, "a rewritten log is parsed again from its first line")
}

// TestAnEventLogOverTheLimitIsAnErrorWhateverItsLineEnds: a log of more than MaxEventsBytes is an
// error for TaskEventHashes and for the index alike, also when its lines end in "\r\n" (counting
// lines without their "\r" once let such a log be cut at the limit and read without an error, the
// events past it unseen). The log is sparse: lines of NUL bytes, 8 MiB each.
func TestAnEventLogOverTheLimitIsAnErrorWhateverItsLineEnds(t *testing.T) {
	root, geas := openRoot(t)
	log := filepath.Join(geas, filepath.FromSlash(EventsFile))
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
	for _, eol := range []string{"\r\n", "\n"} {
		for _, size := range []int64{MaxEventsBytes, MaxEventsBytes + 1} {
			f, err := os.Create(log)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(size))
			for at := int64(8 << 20); at < size; at += 8 << 20 {
				_, err := f.WriteAt([]byte(eol), at-int64(len(eol)))
				require.NoError(t, err)
			}
			late := eventLine("m1", "t1", "past-the-limit")
			_, err = f.WriteAt([]byte(eol+late), size-int64(len(eol)+len(late)))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			want, err := TaskEventHashes(root, "m1", "t1")
			for _, x := range []*EventIndex{{}, {Exact: true}} {
				got, xerr := x.TaskEventHashes(root, "m1", "t1")
				require.Equal(t, err, xerr, "%q %d: the index answers as the read", eol, size)
				require.Equal(t, want, got)
			}
			if size > MaxEventsBytes {
				require.EqualError(t, err, "read state/events.jsonl: larger than 268435456 bytes", "%q %d", eol, size)
			} else {
				require.NoError(t, err, "%q %d", eol, size)
				require.Len(t, want, 1, "the last event of a log at the limit is read")
			}
		}
	}
}

// TestAMissionsEventsFromOneReadAreEachTasksEvents: MissionEventHashes answers, for every task of
// the mission, what TaskEventHashes answers (a torn last line included, another mission's events
// left out), through an index or without one, after the log changed, and errs as it errs.
func TestAMissionsEventsFromOneReadAreEachTasksEvents(t *testing.T) {
	root, geas := openRoot(t)
	log := filepath.Join(geas, filepath.FromSlash(EventsFile))
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
	for _, x := range []*EventIndex{nil, {}, {Exact: true}} {
		same := func(step string, wantErr bool) {
			t.Helper()
			got, gerr := x.MissionEventHashes(root, "m1")
			for _, task := range []string{"t1", "t2", "t3", "t4"} {
				want, werr := TaskEventHashes(root, "m1", task)
				require.Equal(t, wantErr, werr != nil, "%s: %v", step, werr)
				if werr != nil {
					require.EqualError(t, gerr, werr.Error(), step)
					continue
				}
				require.NoError(t, gerr, step)
				require.Equal(t, want, got[task], "%s: %s", step, task)
			}
			if !wantErr {
				require.NotContains(t, got, "t4", "%s: a task of another mission only", step)
			}
		}
		require.NoError(t, os.RemoveAll(log))
		same("no log", false)
		lines := eventLine("m1", "t1", "aaaa") + eventLine("m2", "t4", "bbbb") + eventLine("m1", "t2", "cccc") +
			eventLine("m1", "t1", "dddd") + strings.TrimSuffix(eventLine("m1", "t3", "eeee"), "\n") // the last line torn
		require.NoError(t, os.WriteFile(log, []byte(lines), 0o644))
		same("a log", false)
		got, err := x.MissionEventHashes(root, "m1")
		require.NoError(t, err)
		require.Len(t, got["t1"], 2, "the check is not empty: t1 has two events")
		require.Len(t, got["t3"], 1, "a torn last line that parses is read, as TaskEventHashes reads it")
		require.NoError(t, os.WriteFile(log, []byte(strings.Replace(lines, "aaaa", "aaax", 1)+"\n"+eventLine("m1", "t2", "ffff")), 0o644))
		same("rewritten and appended to", false)
		require.NoError(t, os.Remove(log))
		require.NoError(t, os.Mkdir(log, 0o755))
		same("a directory in its place", true)
		require.NoError(t, os.Remove(log))
		x.Close()
	}
}
