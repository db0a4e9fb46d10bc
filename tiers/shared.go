package tiers

import (
	"crypto/sha256"
	"os"
	"sync"

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
	held   map[string]*fsutil.HeldFile // by name relative to .geas
	policy *sharedPolicy               // the working tree's policy as last parsed

	// others and pinned are the other tasks' records and pinned copies as attribution last read
	// them (attribution_gather.go).
	others sharedRecords
	pinned sharedPinned
}

// NewShared returns a Shared whose event index reads the whole log on every read when exact
// (record.EventIndex.Exact: a run that appends to the log).
func NewShared(exact bool) *Shared {
	return &Shared{Events: &record.EventIndex{Exact: exact}, held: map[string]*fsutil.HeldFile{}}
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
	s.others.close()
	s.pinned.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, h := range s.held {
		h.Close()
		delete(s.held, name)
	}
}

// read is fsutil.ReadLimited(geas, name, limit), answered through the handle kept from the last
// read of name while name still names that file (fsutil.HeldFile.ReadAgain); else name is read afresh
// (fsutil.Hold) and the new handle is kept.
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
	h, data, err := fsutil.Hold(geas, name, limit)
	if err != nil {
		return nil, err
	}
	s.held[name] = h
	return data, nil
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

// LoadRecord is record.Load(geas, taskDir+"/record.json") for a run that holds the task's lock:
// under geas gate --all, the task's files are read through the handles s keeps of them (an earlier
// run's attribution read them) while their paths still name those files, their bytes read again
// (never taken from their metadata), so that the task's own run does not open them once more.
// Any read that fails otherwise than with a missing file, or a record whose gate_result lags its
// history (which record.Load reads again), is left to record.Load. Without s, record.Load.
func (s *Shared) LoadRecord(geas *os.Root, taskDir string) (*record.Record, error) {
	if s == nil {
		return record.Load(geas, taskDir+"/"+record.RecordFile)
	}
	return s.others.loadFresh(geas, taskDir)
}
