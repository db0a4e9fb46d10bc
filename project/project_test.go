//go:build unix

package project

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"t1", true}, {"task-003", true}, {"A_b-9", true},
		{"", false}, {"../x", false}, {"a/b", false}, {"..", false}, {".", false},
		{"a b", false}, {"a\x00b", false}, {"é", false}, {"a\\b", false},
	} {
		t.Run(tc.id, func(t *testing.T) {
			err := ValidateID("task", tc.id)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			var ie *InvalidIDError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, "task", ie.What)
		})
	}
}

// mkProject makes dir/.geas/missions/m1/tasks/t1/contract.json and run.json naming m1.
func mkProject(t *testing.T, dir string) {
	t.Helper()
	task := filepath.Join(dir, ".geas", "missions", "m1", "tasks", "t1")
	require.NoError(t, os.MkdirAll(task, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(task, "contract.json"), []byte("{}"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".geas", "state"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".geas", "state", "run.json"), []byte(`{"mission_id":"m1"}`), 0o644))
}

func TestFindWalksUp(t *testing.T) {
	dir := t.TempDir()
	mkProject(t, dir)
	deep := filepath.Join(dir, "a", "b", "c")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	p, err := Find(deep)
	require.NoError(t, err)
	defer p.Close()
	want, _ := filepath.EvalSymlinks(dir)
	got, _ := filepath.EvalSymlinks(p.Dir)
	assert.Equal(t, want, got)
	m, err := p.DefaultMission()
	require.NoError(t, err)
	assert.Equal(t, "m1", m)
	d, err := p.Task("m1", "t1")
	require.NoError(t, err)
	assert.Equal(t, "missions/m1/tasks/t1", d)
	ids, err := p.Tasks("m1")
	require.NoError(t, err)
	assert.Equal(t, []string{"t1"}, ids)
}

func TestFindNotFound(t *testing.T) {
	dir := t.TempDir()
	_, err := Find(dir)
	require.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), dir)
}

// TestFindUsesMainCheckoutFromWorktree: inside a linked git worktree without its own .geas, the
// main checkout's .geas is used, as geas does.
func TestFindUsesMainCheckoutFromWorktree(t *testing.T) {
	base := t.TempDir()
	main := filepath.Join(base, "main")
	mkProject(t, main)
	gitdir := filepath.Join(main, ".git", "worktrees", "wt")
	require.NoError(t, os.MkdirAll(gitdir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644))
	wt := filepath.Join(base, "wt")
	require.NoError(t, os.MkdirAll(filepath.Join(wt, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))

	p, err := Find(filepath.Join(wt, "src"))
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, main, p.Dir)
}

func TestTaskRefusals(t *testing.T) {
	dir := t.TempDir()
	mkProject(t, dir)
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "t2"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "t2", "contract.json"), []byte("{}"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "t2"), filepath.Join(dir, ".geas", "missions", "m1", "tasks", "t2")))
	require.NoError(t, os.Symlink("t1", filepath.Join(dir, ".geas", "missions", "m1", "tasks", "t3")))
	p, err := Open(dir)
	require.NoError(t, err)
	defer p.Close()

	for _, tc := range []struct {
		name, mission, task string
		check               func(t *testing.T, err error)
	}{
		{"dotdot task", "m1", "../x", func(t *testing.T, err error) {
			var ie *InvalidIDError
			assert.ErrorAs(t, err, &ie)
		}},
		{"slash task", "m1", "a/b", func(t *testing.T, err error) {
			var ie *InvalidIDError
			assert.ErrorAs(t, err, &ie)
		}},
		{"dotdot mission", "..", "t1", func(t *testing.T, err error) {
			var ie *InvalidIDError
			assert.ErrorAs(t, err, &ie)
		}},
		{"missing task", "m1", "nope", func(t *testing.T, err error) {
			assert.ErrorIs(t, err, ErrNoTask)
		}},
		{"symlink out of .geas", "m1", "t2", func(t *testing.T, err error) {
			assert.Error(t, err)
			assert.NotErrorIs(t, err, ErrNoTask)
			assert.Contains(t, err.Error(), "escapes")
		}},
		{"symlink to another task inside .geas", "m1", "t3", func(t *testing.T, err error) {
			assert.ErrorIs(t, err, ErrTaskSymlink)
			assert.NotErrorIs(t, err, ErrNoTask)
			assert.Contains(t, err.Error(), ".geas/missions/m1/tasks/t3: task directory is a symbolic link")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Task(tc.mission, tc.task)
			tc.check(t, err)
		})
	}
}

func TestMission(t *testing.T) {
	dir := t.TempDir()
	mkProject(t, dir)
	p, err := Open(dir)
	require.NoError(t, err)
	defer p.Close()
	m, err := p.Mission("other")
	require.NoError(t, err)
	assert.Equal(t, "other", m)
	_, err = p.Mission("../x")
	var ie *InvalidIDError
	require.ErrorAs(t, err, &ie)

	require.NoError(t, os.WriteFile(filepath.Join(dir, ".geas", "state", "run.json"), []byte(`{"mission_id":"../x"}`), 0o644))
	_, err = p.DefaultMission()
	require.ErrorAs(t, err, &ie)
	require.NoError(t, os.Remove(filepath.Join(dir, ".geas", "state", "run.json")))
	m, err = p.DefaultMission()
	require.NoError(t, err, "one mission and no run.json: it is the default (SPEC §9)")
	assert.Equal(t, "m1", m)
}

// TestTaskEntriesListEveryEntry: TaskEntries lists every entry of the tasks directory, sorted, and
// says why each one that is not a task directory is not; only hidden regular files are ignored.
func TestTaskEntriesListEveryEntry(t *testing.T) {
	dir := t.TempDir()
	mkProject(t, dir)
	tasks := filepath.Join(dir, ".geas", "missions", "m1", "tasks")
	require.NoError(t, os.Mkdir(filepath.Join(tasks, "t0"), 0o755)) // a directory without a contract is still a task entry
	require.NoError(t, os.Symlink("t1", filepath.Join(tasks, "t2")))
	require.NoError(t, os.Symlink("/nonexistent", filepath.Join(tasks, "t3")))
	require.NoError(t, os.WriteFile(filepath.Join(tasks, "t4"), []byte("{}"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(tasks, "t 5"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(tasks, ".t6"), 0o755)) // a hidden directory is not ignored
	require.NoError(t, os.WriteFile(filepath.Join(tasks, ".DS_Store"), nil, 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(tasks, "t7"), 0o644))
	p, err := Open(dir)
	require.NoError(t, err)
	defer p.Close()

	got, err := p.TaskEntries("m1")
	require.NoError(t, err)
	var names []string
	byName := map[string]TaskEntry{}
	for _, e := range got {
		names = append(names, e.Name)
		byName[e.Name] = e
	}
	assert.Equal(t, []string{".DS_Store", ".t6", "t 5", "t0", "t1", "t2", "t3", "t4", "t7"}, names)
	assert.True(t, byName[".DS_Store"].Ignored)
	assert.Empty(t, byName[".DS_Store"].Problem)
	for _, n := range []string{"t0", "t1"} {
		assert.False(t, byName[n].Ignored, n)
		assert.Empty(t, byName[n].Problem, n)
	}
	for n, want := range map[string]string{
		".t6": `entry ".t6" of .geas/missions/m1/tasks is not a valid task id (ids match ^[A-Za-z0-9_-]+$)`,
		"t 5": `entry "t 5" of .geas/missions/m1/tasks is not a valid task id (ids match ^[A-Za-z0-9_-]+$)`,
		"t2":  `.geas/missions/m1/tasks/t2 is a symbolic link (to "t1"), not a task directory`,
		"t3":  `.geas/missions/m1/tasks/t3 is a symbolic link (to "/nonexistent"), not a task directory`,
		"t4":  `.geas/missions/m1/tasks/t4 is not a directory (a regular file)`,
		"t7":  `.geas/missions/m1/tasks/t7 is not a directory (a named pipe)`,
	} {
		assert.Equal(t, want, byName[n].Problem, n)
		assert.False(t, byName[n].Ignored, n)
	}

	_, err = p.TaskEntries("nosuch")
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = p.TaskEntries("..")
	var ie *InvalidIDError
	assert.ErrorAs(t, err, &ie)
}

// TestAProjectReachedThroughALinkIsTheDirectoryItLeadsTo: a project found or opened through a
// symbolic link from outside its directory (or from a subdirectory reached that way) has the real
// directory as its Dir, where its repository is found; the project opened by its own path is the
// control.
func TestAProjectReachedThroughALinkIsTheDirectoryItLeadsTo(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(base, "repo", "svc")
	mkProject(t, real)
	require.NoError(t, os.MkdirAll(filepath.Join(real, "sub"), 0o755))
	require.NoError(t, os.Symlink(real, filepath.Join(base, "outside")))
	require.NoError(t, os.Symlink(filepath.Join(real, "sub"), filepath.Join(base, "into-sub")))
	for _, open := range []func() (*Project, error){
		func() (*Project, error) { return Open(real) },
		func() (*Project, error) { return Open(filepath.Join(base, "outside")) },
		func() (*Project, error) { return Find(filepath.Join(base, "outside")) },
		func() (*Project, error) { return Find(filepath.Join(base, "into-sub")) },
	} {
		p, err := open()
		require.NoError(t, err)
		assert.Equal(t, real, p.Dir)
		require.NoError(t, p.Close())
	}
}
