package git

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	githash "github.com/go-git/go-git/v5/plumbing/hash"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verifySamples are the true objects the forgery tests start from: a commit with a parent, a
// tree, text blobs (one long enough for several delta copies) and an empty blob.
func verifySamples() []struct {
	typ  plumbing.ObjectType
	data []byte
} {
	tree := fmt.Appendf(nil, "100644 a.txt\x00%s40000 d\x00%s", bytes.Repeat([]byte{0xaa}, 20), bytes.Repeat([]byte{0xbb}, 20))
	return []struct {
		typ  plumbing.ObjectType
		data []byte
	}{
		{plumbing.CommitObject, []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 0123456789abcdef0123456789abcdef01234567\n" +
			"author A <a@b> 1700000000 +0000\ncommitter C <c@d> 1700000001 +0000\n\nthe commit\n")},
		{plumbing.TreeObject, tree},
		{plumbing.BlobObject, []byte("package main\n\nfunc main() {}\n")},
		{plumbing.BlobObject, sampleText(3000, "blob")},
		{plumbing.BlobObject, nil},
	}
}

// mutate returns a forgery of data: a bit flipped, a byte substituted, inserted or deleted, the
// end cut or extended, a stretch replaced, or other content altogether; the same bytes now and
// then (a forgery must then read as the truth).
func mutate(rng *rand.Rand, data, other []byte) []byte {
	out := bytes.Clone(data)
	switch k := rng.Intn(8); {
	case k == 0 && len(out) > 0:
		out[rng.Intn(len(out))] ^= 1 << rng.Intn(8)
	case k == 1 && len(out) > 0:
		out[rng.Intn(len(out))] = byte(rng.Intn(256))
	case k == 2:
		i := rng.Intn(len(out) + 1)
		out = append(out[:i], append([]byte{byte(rng.Intn(256))}, out[i:]...)...)
	case k == 3 && len(out) > 0:
		i := rng.Intn(len(out))
		out = append(out[:i], out[i+1:]...)
	case k == 4:
		out = out[:rng.Intn(len(out)+1)]
	case k == 5:
		out = append(out, "\n// appended\n"...)
	case k == 6 && len(out) > 4:
		i := rng.Intn(len(out) - 4)
		copy(out[i:], "TODO")
	case k == 7:
		out = bytes.Clone(other)
	}
	return out
}

// requireTruthOrError checks what a read of object id gave: an error, or the true type and
// content, never anything else. A forgery that is not the truth must be a *CorruptError or a
// decoding error, never content.
func requireTruthOrError(t *testing.T, what string, typ plumbing.ObjectType, data []byte, err error, wantTyp plumbing.ObjectType, want []byte) {
	t.Helper()
	if err != nil {
		return
	}
	require.Equal(t, wantTyp, typ, "%s: a forged type was believed", what)
	require.True(t, bytes.Equal(want, data), "%s: forged content was believed: %q, the object is %q", what, data, want)
}

// readStream reads blob id through openBlob as a stream (streamAbove 0) to its end.
func readStream(s *lazyStore, id plumbing.Hash) ([]byte, error) {
	b, err := s.openBlob(id, 0)
	if err != nil {
		return nil, err
	}
	defer b.close()
	return io.ReadAll(b.reader())
}

// TestAForgedObjectIsNeverBelieved writes, 600 times, a forgery of a sample object under the
// object's id — its content mutated at random (mutate) and stored loose, packed, or packed as an
// OFS_DELTA or a REF_DELTA on another object whose result is the forgery — and reads it back
// through every way content comes in (readObject, EncodedObject, openBlob whole and streamed,
// readCommitHeader): each read is an error or the true object, and an untouched forgery reads as
// the truth. A forgery that differs is a *CorruptError naming the id.
func TestAForgedObjectIsNeverBelieved(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(19))
	samples := verifySamples()
	caught := 0
	for i := range 600 {
		v := samples[rng.Intn(len(samples))]
		other := samples[rng.Intn(len(samples))]
		id := plumbing.ComputeHash(v.typ, v.data)
		forged := mutate(rng, v.data, other.data)
		forgedTyp := v.typ
		if rng.Intn(10) == 0 {
			forgedTyp = other.typ
		}
		how := rng.Intn(4)
		if how >= 2 && plumbing.ComputeHash(other.typ, other.data) == id {
			how = 1 // a delta on the victim itself would be a cycle, not a forgery
		}
		if how >= 2 {
			forgedTyp = other.typ // a delta's result has its base's type
		}
		dir := newGitDir(t)
		if how == 0 { // loose
			writeLooseRaw(t, dir, id, deflate(t, fmt.Appendf(nil, "%s %d\x00%s", forgedTyp, len(forged), forged)))
		} else {
			p := newTestPack(t)
			baseID, baseOff := p.object(other.typ, other.data)
			if baseID == id { // the other object is the victim: index it under another id
				p.entries[0].id = plumbing.ComputeHash(plumbing.BlobObject, []byte("not the base"))
			}
			switch how {
			case 1:
				p.raw(id, slices2(entryHeader(forgedTyp, int64(len(forged))), deflate(t, forged)))
			case 2:
				_, _ = p.ofsDelta(forgedTyp, baseOff, other.data, forged)
			case 3:
				_, _ = p.refDelta(forgedTyp, baseID, other.data, forged)
			}
			p.entries[len(p.entries)-1].id = id // the forged entry, indexed under the victim's id
			p.write(filepath.Join(dir, ".git", "objects", "pack"))
		}
		what := fmt.Sprintf("forgery %d (%s, stored %d) of %s %s", i, forgedTyp, how, v.typ, id)
		same := forgedTyp == v.typ && bytes.Equal(forged, v.data)

		s := openStore(t, dir)
		typ, data, err := s.readObject(id)
		requireTruthOrError(t, what+" by readObject", typ, data, err, v.typ, v.data)
		if same {
			require.NoError(t, err, "%s: the truth was refused", what)
		} else {
			var ce *CorruptError
			if errors.As(err, &ce) {
				caught++
				assert.Equal(t, id.String(), ce.ID, what)
				assert.Len(t, s.corrupt, 1, what)
			}
		}
		obj, err := openStore(t, dir).EncodedObject(plumbing.AnyObject, id)
		if err == nil {
			rd, rerr := obj.Reader()
			require.NoError(t, rerr)
			data, _ := io.ReadAll(rd)
			requireTruthOrError(t, what+" by EncodedObject", obj.Type(), data, nil, v.typ, v.data)
		}
		if v.typ == plumbing.BlobObject {
			b, err := openStore(t, dir).openBlob(id, 1<<20)
			if err == nil {
				data, err = io.ReadAll(b.reader())
				_ = b.close()
			}
			requireTruthOrError(t, what+" by openBlob", plumbing.BlobObject, data, err, v.typ, v.data)
			data, err = readStream(openStore(t, dir), id)
			requireTruthOrError(t, what+" by a stream", plumbing.BlobObject, data, err, v.typ, v.data)
			if same {
				require.NoError(t, err, "%s: the truth was refused as a stream", what)
			}
		}
		if v.typ == plumbing.CommitObject {
			c, err := openStore(t, dir).readCommitHeader(id)
			want, _ := parseCommitHeader(v.data)
			if err == nil {
				require.Equal(t, want, c, "%s: a forged commit header was believed", what)
			}
		}
	}
	assert.Greater(t, caught, 300, "forgeries that decode and are caught by their hash")
}

func slices2(a, b []byte) []byte { return append(bytes.Clone(a), b...) }

// TestADamagedObjectFileIsNeverBelieved flips bits and substitutes bytes in the stored bytes
// themselves (a loose object's file, a pack's entry), 400 times: each read is an error or the
// true object.
func TestADamagedObjectFileIsNeverBelieved(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1919))
	samples := verifySamples()
	for i := range 400 {
		v := samples[rng.Intn(len(samples))]
		id := plumbing.ComputeHash(v.typ, v.data)
		dir := newGitDir(t)
		var path string
		var from int
		if rng.Intn(2) == 0 {
			id = writeLoose(t, dir, v.typ, v.data)
			hx := id.String()
			path = filepath.Join(dir, ".git", "objects", hx[:2], hx[2:])
		} else {
			p := newTestPack(t)
			_, off := p.object(v.typ, v.data)
			from = int(off)
			path = filepath.Join(dir, ".git", "objects", "pack", p.write(filepath.Join(dir, ".git", "objects", "pack"))+".pack")
		}
		file, err := os.ReadFile(path)
		require.NoError(t, err)
		end := len(file)
		if from > 0 {
			end -= packTrailerLen // the trailer is the pack's name: damage the entry
		}
		for range 1 + rng.Intn(3) {
			k := from + rng.Intn(end-from)
			if rng.Intn(2) == 0 {
				file[k] ^= 1 << rng.Intn(8)
			} else {
				file[k] = byte(rng.Intn(256))
			}
		}
		require.NoError(t, os.Chmod(path, 0o644))
		require.NoError(t, os.WriteFile(path, file, 0o444))
		what := fmt.Sprintf("damage %d of %s %s", i, v.typ, id)
		s := openStore(t, dir)
		typ, data, err := s.readObject(id)
		requireTruthOrError(t, what, typ, data, err, v.typ, v.data)
		if v.typ == plumbing.BlobObject {
			data, err = readStream(openStore(t, dir), id)
			requireTruthOrError(t, what+" as a stream", plumbing.BlobObject, data, err, v.typ, v.data)
		}
	}
}

// TestACachedDeltaBaseIsVerifiedWhenReadByItsID reads a delta first, which caches its base by
// pack offset without an id, then the base by its id: the base's entry, forged, is caught there,
// not handed out from the cache.
func TestACachedDeltaBaseIsVerifiedWhenReadByItsID(t *testing.T) {
	t.Parallel()
	dir := newGitDir(t)
	truth := sampleText(2000, "base")
	forged := bytes.Clone(truth)
	copy(forged[100:], "TODO")
	result := append(bytes.Clone(forged), "more\n"...)
	p := newTestPack(t)
	baseID := plumbing.ComputeHash(plumbing.BlobObject, truth)
	baseOff := p.raw(baseID, slices2(entryHeader(plumbing.BlobObject, int64(len(forged))), deflate(t, forged)))
	deltaID, _ := p.ofsDelta(plumbing.BlobObject, baseOff, forged, result)
	p.write(filepath.Join(dir, ".git", "objects", "pack"))
	s := openStore(t, dir)
	_, data, err := s.readObject(deltaID)
	require.NoError(t, err, "the delta's result is what its id names")
	require.Equal(t, result, data)
	_, _, err = s.readObject(baseID)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce, "the cached base, forged, read by its id")
	assert.Equal(t, baseID.String(), ce.ID)
}

// TestTheObjectHashDetectsCollisionAttacks feeds go-git's SHA-1 the first KiB of shattered-1.pdf
// (the SHAttered collision, whose near-collision blocks are in it): checkSum says a collision
// attack was detected, whatever id was expected; a plain text hashes to its SHA-1.
func TestTheObjectHashDetectsCollisionAttacks(t *testing.T) {
	t.Parallel()
	prefix, err := os.ReadFile(filepath.Join("testdata", "shattered-1-prefix.bin"))
	require.NoError(t, err)
	h := githash.New(crypto.SHA1)
	_, _ = h.Write(prefix)
	detail, ok := checkSum(h, plumbing.BlobObject, int64(len(prefix)), plumbing.ZeroHash)
	assert.False(t, ok)
	assert.Contains(t, detail, "collision attack was detected")

	data := []byte("hello\n")
	h = newObjectHash(plumbing.BlobObject, int64(len(data)))
	_, _ = h.Write(data)
	_, ok = checkSum(h, plumbing.BlobObject, int64(len(data)), plumbing.NewHash("ce013625030ba8dba906f756967f9e9ca394464a"))
	assert.True(t, ok, "git hash-object of hello")
}

// TestAForgedCommitOnTheWalkIsCaught packs a history by hand in which the entry of head's parent
// holds a commit naming a side commit as its parent: the walk without a commit-graph reads each
// commit by its start, and verifies at once a commit the start holds whole (a short message);
// one with a long message it does not read whole, so it reaches the side commit, and the
// confirmation of its path reads that entry whole and refuses it. The honest pack answers "not an
// ancestor".
func TestAForgedCommitOnTheWalkIsCaught(t *testing.T) {
	t.Parallel()
	for _, long := range []bool{false, true} {
		t.Run(fmt.Sprintf("long message %v", long), func(t *testing.T) {
			t.Parallel()
			forgedCommitOnTheWalk(t, long)
		})
	}
}

func forgedCommitOnTheWalk(t *testing.T, long bool) {
	message := "m2"
	if long {
		message = string(sampleText(4000, "a long message"))
	}
	commit := func(msg string, when int, parents ...plumbing.Hash) []byte {
		var b bytes.Buffer
		b.WriteString("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n")
		for _, p := range parents {
			fmt.Fprintf(&b, "parent %s\n", p)
		}
		fmt.Fprintf(&b, "author A <a@b> %d +0000\ncommitter A <a@b> %d +0000\n\n%s\n", fixtureEpoch+when, fixtureEpoch+when, msg)
		return b.Bytes()
	}
	id := func(c []byte) plumbing.Hash { return plumbing.ComputeHash(plumbing.CommitObject, c) }
	root := commit("root", 0)
	side := commit("side", 1, id(root))
	m1 := commit("m1", 2, id(root))
	m2 := commit(message, 3, id(m1))
	forged := commit(message, 3, id(side))
	head := commit("head", 4, id(m2))
	for _, forge := range []bool{false, true} {
		dir := newGitDir(t)
		p := newTestPack(t)
		for _, c := range [][]byte{root, side, m1} {
			p.object(plumbing.CommitObject, c)
		}
		if forge {
			p.raw(id(m2), slices2(entryHeader(plumbing.CommitObject, int64(len(forged))), deflate(t, forged)))
		} else {
			p.object(plumbing.CommitObject, m2)
		}
		p.object(plumbing.CommitObject, head)
		p.write(filepath.Join(dir, ".git", "objects", "pack"))
		repo, err := Open(dir)
		require.NoError(t, err)
		ok, err := repo.IsAncestor(id(side).String(), id(head).String())
		if !forge {
			require.NoError(t, err)
			assert.False(t, ok, "the side commit is not an ancestor")
		} else {
			var ce *CorruptError
			require.ErrorAs(t, err, &ce, "the forged parent was believed: %v", ok)
			assert.Equal(t, id(m2).String(), ce.ID)
			assert.Contains(t, ce.For, "the ancestry of")
		}
		require.NoError(t, repo.Close())
	}
}
