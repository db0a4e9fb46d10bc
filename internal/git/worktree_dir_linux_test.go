package git

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// dirent64 builds one linux_dirent64 record of name, padded to 8 bytes as the kernel does.
func dirent64(name string, typ byte) []byte {
	n := (direntName + len(name) + 1 + 7) &^ 7
	b := make([]byte, n)
	binary.NativeEndian.PutUint64(b, 42) // d_ino
	binary.NativeEndian.PutUint16(b[direntReclen:], uint16(n))
	b[direntType] = typ
	copy(b[direntName:], name)
	return b
}

// The records getdents64 returns are parsed as the kernel lays them out; a name whose type the file
// system does not report is lstatted (a directory is one; a name gone since is skipped); "." and
// ".." are never names, a record of inode 0 is one (as in os on Linux); a record that does not fit
// its buffer is an error, not a guess.
func TestParseDirents(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "unknown-dir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "unknown-file"), nil, 0o644))
	h, err := openDir(dir)
	require.NoError(t, err)
	defer h.close()
	d := h.(*rawDir)
	var b []byte
	for _, r := range []struct {
		name string
		typ  byte
	}{
		{".", unix.DT_DIR}, {"..", unix.DT_DIR}, {"a.go", unix.DT_REG}, {"sub", unix.DT_DIR},
		{"link", unix.DT_LNK}, {"unknown-dir", unix.DT_UNKNOWN}, {"unknown-file", unix.DT_UNKNOWN},
		{"vanished", unix.DT_UNKNOWN},
	} {
		b = append(b, dirent64(r.name, r.typ)...)
	}
	inodeZero := dirent64("inode-zero", unix.DT_REG)
	binary.NativeEndian.PutUint64(inodeZero, 0) // old XFS and FUSE give names an inode of 0: kept, as os does on Linux
	b = append(b, inodeZero...)
	got, err := d.parseDirents(b, nil)
	require.NoError(t, err)
	assert.Equal(t, []dirent{
		{"a.go", false}, {"sub", true}, {"link", false}, {"unknown-dir", true}, {"unknown-file", false},
		{"inode-zero", false},
	}, got)

	rec := dirent64("x", unix.DT_REG)
	for name, bad := range map[string][]byte{
		"shorter than a header": rec[:direntName-1],
		"reclen past the end":   rec[:len(rec)-1],
		"reclen zero":           func() []byte { c := append([]byte(nil), rec...); c[direntReclen], c[direntReclen+1] = 0, 0; return c }(),
	} {
		_, err := d.parseDirents(append(dirent64("ok", unix.DT_REG), bad...), nil)
		assert.Error(t, err, name)
	}
}
