package tiers

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
)

// Shared is what the runs of one geas gate --all share, handed to each run (Loaded.Shared) rather
// than remembered by the process: the event log's index, and the files every task reads (the
// working tree's policy and the mission's debt register). Each of those files is kept open after
// its first read, and every later read of it, a run's snapshot or its re-check (SPEC §7.4), reads
// its bytes again through that handle while its path still names the same file: each read sees
// what the file holds then, and the mission's tasks do not open it once each. The policy parsed
// from the same bytes is parsed once. Safe for concurrent use; Close releases the handles.
type Shared struct {
	// Events is the event log's index for the history checks of every task (Snapshot.Events).
	Events *record.EventIndex

	mu     sync.Mutex
	held   map[string]*HeldFile // by name relative to .geas
	policy *sharedPolicy        // the working tree's policy as last parsed

	// others are the other tasks' records as attribution last read them (attribution_gather.go).
	others sharedRecords
}

// NewShared returns a Shared whose event index reads the whole log on every read when exact
// (record.EventIndex.Exact: a run that appends to the log).
func NewShared(exact bool) *Shared {
	return &Shared{Events: &record.EventIndex{Exact: exact}, held: map[string]*HeldFile{}}
}

// EventIndex returns s.Events; nil when s is nil.
func (s *Shared) EventIndex() *record.EventIndex {
	if s == nil {
		return nil
	}
	return s.Events
}

// Close closes the files s keeps open. Safe on nil.
func (s *Shared) Close() {
	if s == nil {
		return
	}
	s.Events.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, h := range s.held {
		h.Close()
		delete(s.held, name)
	}
}

// HeldFile is a file read through a handle that is kept open, so that the file can be read again
// (ReadAgain) without opening it while its path still names it.
type HeldFile struct {
	f    *os.File
	info os.FileInfo
}

// Hold reads name through root as fsutil.ReadLimited(root, name, limit) does (the same errors)
// and keeps the file open; nil with the error when it cannot be read.
func Hold(root *os.Root, name string, limit int64) (*HeldFile, []byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s: not a regular file", name)
		}
		return nil, nil, err
	}
	data, err := readHeld(f, name, limit)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return &HeldFile{f: f, info: fi}, data, nil
}

// ReadAgain reads the held file again from its start, as Hold read it, when name (through root)
// still names that file (os.SameFile on a Stat of the path, which opens nothing); ok is false
// when it does not, and the caller reads the path.
func (h *HeldFile) ReadAgain(root *os.Root, name string, limit int64) (data []byte, ok bool, err error) {
	if h == nil {
		return nil, false, nil
	}
	fi, err := root.Stat(name)
	if err != nil || !fi.Mode().IsRegular() || !os.SameFile(fi, h.info) {
		return nil, false, nil
	}
	data, err = readHeld(h.f, name, limit)
	return data, true, err
}

// Close closes the held file. Safe on nil.
func (h *HeldFile) Close() {
	if h != nil {
		h.f.Close()
	}
}

// read is fsutil.ReadLimited(geas, name, limit), answered through the handle kept from the last
// read of name while name still names that file (HeldFile.ReadAgain); else name is read afresh
// (Hold) and the new handle is kept.
func (s *Shared) read(geas *os.Root, name string, limit int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[name]; h != nil {
		if data, ok, err := h.ReadAgain(geas, name, limit); ok {
			return data, err
		}
		h.Close()
		delete(s.held, name)
	}
	h, data, err := Hold(geas, name, limit)
	if err != nil {
		return nil, err
	}
	s.held[name] = h
	return data, nil
}

// readHeld reads the whole of f, a regular file, from its start, as fsutil.ReadLimited reads it.
func readHeld(f *os.File, name string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if limit > 0 && fi.Size() > limit {
		return nil, &fsutil.TooLargeError{Name: name, Size: fi.Size(), Limit: limit}
	}
	n := limit + 1
	if limit <= 0 {
		n = 1<<63 - 1
	}
	b, err := io.ReadAll(io.NewSectionReader(f, 0, n))
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(b)) > limit { // the file grew after Stat
		return nil, &fsutil.TooLargeError{Name: name, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}

// sharedPolicy is a policy document as policy.Parse answered it.
type sharedPolicy struct {
	from string
	sum  [sha256.Size]byte
	p    policy.Policy
	err  error
}

// parsePolicy is policy.Parse(from, data), parsed once for the runs that share s and read the same
// document under the same name; each caller gets a Policy of its own (Clone). Without s, it parses.
func (s *Shared) parsePolicy(from string, data []byte) (policy.Policy, error) {
	if s == nil {
		return policy.Parse(from, data)
	}
	sum := sha256.Sum256(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp := s.policy; sp == nil || sp.from != from || sp.sum != sum {
		p, err := policy.Parse(from, data)
		s.policy = &sharedPolicy{from: from, sum: sum, p: p, err: err}
	}
	return s.policy.p.Clone(), s.policy.err
}
