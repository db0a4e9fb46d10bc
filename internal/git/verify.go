package git

import (
	"crypto"
	"fmt"
	"hash"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	githash "github.com/go-git/go-git/v5/plumbing/hash"
)

// The repository is written by the agents the gate judges (SPEC §5.1): an object file, a pack or
// a pack index can hold anything. So every object's content is hashed as it is read, the way git
// names it ("type size\0" and the content), with go-git's SHA-1 (sha1cd, which detects the
// known collision attacks and then answers a hash that is not the colliding one), and compared
// with the id it was read by. What is hashed is what was inflated for the read anyway: nothing is
// inflated twice. A commit-graph is only a way to find a path; the path's commits are then read
// as objects and their parents compared with the graph's (graph.go).

// CorruptError is an object whose content is not what its id names: it does not hash to the id,
// or (for a commit) the commit-graph names other parents than the commit object. The gate's
// verdict is then an error (repository_corrupt), never a judgement of the forged content.
type CorruptError struct {
	ID     string // the object's id, as it was asked for
	Detail string // what was found, with the values
	For    string // what it was read for (the Repo method's purpose); "" when not known
}

func (e *CorruptError) Error() string {
	s := fmt.Sprintf("object %s is corrupt: %s", e.ID, e.Detail)
	if e.For != "" {
		s += " (read for " + e.For + ")"
	}
	return s
}

// maxCorruptKept bounds the corrupt objects a store remembers for Corrupt.
const maxCorruptKept = 16

// collisionSummer is sha1cd's digest: its sum also says whether a collision attack was detected.
type collisionSummer interface {
	CollisionResistantSum(in []byte) ([]byte, bool)
}

// newObjectHash returns go-git's SHA-1 (sha1cd) started on the header "type size\0" of an object.
func newObjectHash(typ plumbing.ObjectType, size int64) hash.Hash {
	h := githash.New(crypto.SHA1)
	writeObjectHeader(h, typ, size)
	return h
}

// writeObjectHeader writes git's object header "type size\0" to h.
func writeObjectHeader(h hash.Hash, typ plumbing.ObjectType, size int64) {
	var buf [32]byte
	hdr := append(buf[:0], typ.String()...)
	hdr = append(hdr, ' ')
	hdr = strconv.AppendInt(hdr, size, 10)
	hdr = append(hdr, 0)
	_, _ = h.Write(hdr)
}

// checkSum compares the sum of h with id; the detail of a mismatch says what the content hashes
// to, or that a collision attack was detected in it.
func checkSum(h hash.Hash, typ plumbing.ObjectType, size int64, id plumbing.Hash) (detail string, ok bool) {
	var sum []byte
	collision := false
	if cs, isCD := h.(collisionSummer); isCD {
		sum, collision = cs.CollisionResistantSum(nil)
	} else {
		sum = h.Sum(nil)
	}
	switch {
	case collision:
		return fmt.Sprintf("a SHA-1 collision attack was detected in its content (a %s of %d bytes)", typ, size), false
	case plumbing.Hash(sum) != id:
		return fmt.Sprintf("its content (a %s of %d bytes) hashes to %x", typ, size, sum), false
	}
	return "", true
}

// verify hashes an object's content, read by id h, and returns a *CorruptError (remembered by the
// store) when it is not object h.
func (s *lazyStore) verify(h plumbing.Hash, typ plumbing.ObjectType, data []byte) error {
	if s.hasher == nil {
		s.hasher = githash.New(crypto.SHA1)
	}
	s.hasher.Reset()
	writeObjectHeader(s.hasher, typ, int64(len(data)))
	_, _ = s.hasher.Write(data)
	if detail, ok := checkSum(s.hasher, typ, int64(len(data)), h); !ok {
		return s.corruption(h, detail)
	}
	return nil
}

// corruption makes and remembers the error for object h, with the purpose of the read under way.
func (s *lazyStore) corruption(h plumbing.Hash, detail string) *CorruptError {
	e := &CorruptError{ID: h.String(), Detail: detail, For: s.purpose}
	if len(s.corrupt) < maxCorruptKept {
		s.corrupt = append(s.corrupt, e)
	}
	return e
}

// Corrupt returns the objects found corrupt so far (at most 16, in the order found), whatever
// became of the error each read returned: a caller that took such an error for "not found" or
// "not this candidate" cannot make the forgery go unreported.
func (r *Repo) Corrupt() []*CorruptError {
	return r.store.corrupt
}

// readingFor sets what the reads until the returned function is called are for, named in the
// CorruptError of an object they find corrupt; a purpose already set (a Repo method calling
// another) is kept.
func (r *Repo) readingFor(purpose string) func() {
	if r.store.purpose != "" {
		return func() {}
	}
	r.store.purpose = purpose
	return func() { r.store.purpose = "" }
}
