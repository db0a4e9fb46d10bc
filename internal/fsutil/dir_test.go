package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDirAnswersAsTheOuterRoot: every read through a Dir gives what the outer root gives for the
// full name, bytes or error text, for plain files, missing ones, files over the limit, symbolic
// links that stay in the directory, links that leave it but stay in the outer root (followed, as
// the outer root follows them), links that leave the outer root (refused) and link loops.
func TestDirAnswersAsTheOuterRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on windows")
	}
	top := t.TempDir()
	geas := filepath.Join(top, ".geas")
	task := filepath.Join(geas, "missions", "m", "tasks", "t1")
	other := filepath.Join(geas, "missions", "m", "tasks", "t2")
	for _, d := range []string{filepath.Join(task, "evidence"), filepath.Join(other, "evidence")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	write := func(name, s string) { require.NoError(t, os.WriteFile(name, []byte(s), 0o644)) }
	write(filepath.Join(task, "contract.json"), "mine")
	write(filepath.Join(task, "big.json"), "0123456789")
	write(filepath.Join(other, "contract.json"), "theirs")
	write(filepath.Join(other, "evidence", "qa.json"), "their qa")
	write(filepath.Join(top, "outside.json"), "outside")
	link := func(target, name string) { require.NoError(t, os.Symlink(target, filepath.Join(task, name))) }
	link("contract.json", "inside.json")                                    // stays in the task directory
	link("../t2/contract.json", "sideways.json")                            // leaves it, stays in .geas
	link("../t2/evidence", "evlink")                                        // a directory that leaves it
	link("../../../../../outside.json", "out.json")                         // leaves .geas
	link("loop.json", "loop.json")                                          // a loop
	link("../../t2/evidence/qa.json", filepath.Join("evidence", "qa.json")) // from the evidence directory

	outer, err := os.OpenRoot(geas)
	require.NoError(t, err)
	defer outer.Close()
	base := "missions/m/tasks/t1"
	d := OpenSubdir(outer, base)
	defer d.Close()
	require.NotNil(t, d.sub, "the task directory is opened once")
	ev := d.Subdir("evidence")
	defer ev.Close()
	evlink := d.Subdir("evlink") // a directory reached through a link
	defer evlink.Close()
	require.NotNil(t, evlink.sub)

	names := []string{"contract.json", "big.json", "missing.json", "inside.json", "sideways.json",
		"evlink/qa.json", "out.json", "loop.json", "evidence/qa.json", "../t2/contract.json", "evidence", "evlink", "evlink/../contract.json"}
	for _, r := range []*Dir{d, ev, evlink} {
		for _, n := range names {
			full := base + "/" + n
			wantB, wantErr := ReadLimited(outer, full, 8)
			gotB, gotErr := r.ReadLimited(full, 8)
			assert.Equal(t, string(wantB), string(gotB), "read %s through %s", n, r.Name)
			assert.Equal(t, errText(wantErr), errText(gotErr), "read %s through %s", n, r.Name)
			wantFI, wantErr := outer.Stat(full)
			gotFI, gotErr := r.Stat(full)
			assert.Equal(t, errText(wantErr), errText(gotErr), "stat %s through %s", n, r.Name)
			if wantErr == nil && gotErr == nil {
				assert.True(t, os.SameFile(wantFI, gotFI), "stat %s through %s", n, r.Name)
			}
			wantFI, wantErr = outer.Lstat(full)
			gotFI, gotErr = r.Lstat(full)
			assert.Equal(t, errText(wantErr), errText(gotErr), "lstat %s through %s", n, r.Name)
			if wantErr == nil && gotErr == nil {
				assert.True(t, os.SameFile(wantFI, gotFI), "lstat %s through %s", n, r.Name)
			}
			wantF, wantErr := OpenDir(outer, full)
			gotF, gotErr := r.OpenDir(full)
			assert.Equal(t, errText(wantErr), errText(gotErr), "open dir %s through %s", n, r.Name)
			for _, f := range []*os.File{wantF, gotF} {
				if f != nil {
					f.Close()
				}
			}
		}
	}
	// What the link sideways reaches is read (as through the outer root); what leaves .geas is not.
	b, err := d.ReadLimited(base+"/sideways.json", 0)
	require.NoError(t, err)
	assert.Equal(t, "theirs", string(b))
	_, err = d.ReadLimited(base+"/out.json", 0)
	assert.Error(t, err)
	b, err = ev.ReadLimited(base+"/evidence/qa.json", 0)
	require.NoError(t, err)
	assert.Equal(t, "their qa", string(b))
	// A name that is not under the directory goes to the outer root.
	b, err = d.ReadLimited("missions/m/tasks/t2/contract.json", 0)
	require.NoError(t, err)
	assert.Equal(t, "theirs", string(b))
	_, err = d.ReadLimited("missions/m/tasks/t1x/contract.json", 0)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestDirWithoutAHandle: a directory that cannot be opened (missing, or a link out of the outer
// root) gives a Dir whose every call is the outer root's.
func TestDirWithoutAHandle(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on windows")
	}
	top := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(top, "in"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(top, "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(top, "x", "f"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink("../x", filepath.Join(top, "in", "out")))
	outer, err := os.OpenRoot(filepath.Join(top, "in"))
	require.NoError(t, err)
	defer outer.Close()
	for _, name := range []string{"missing", "out"} {
		d := OpenSubdir(outer, name)
		assert.Nil(t, d.sub, name)
		_, want := ReadLimited(outer, name+"/f", 0)
		_, got := d.ReadLimited(name+"/f", 0)
		assert.Error(t, got, name)
		assert.Equal(t, errText(want), errText(got), name)
		assert.NoError(t, d.Close())
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + " " + pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}
