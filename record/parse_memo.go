package record

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"sync"
)

// parseKnown is Parse for Load: a run reads a task's record.json twice, before tier 1 and again
// after it (SPEC §7.4), and the re-read reads the bytes again (a record changed meanwhile is seen)
// but, when they are the very bytes parsed last time under the same name, does not parse them
// again: it gets a copy of that parse, which no caller can change through the one it holds.
func parseKnown(file string, data []byte) (*Record, error) {
	h := sha256.New()
	h.Write([]byte(file))
	h.Write([]byte{0})
	h.Write(data)
	var key [32]byte
	h.Sum(key[:0])
	parsedRecords.Lock()
	r, ok := parsedRecords.m[key]
	parsedRecords.Unlock()
	if ok {
		return r.clone(), nil
	}
	r, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	parsedRecords.Lock()
	if len(parsedRecords.m) >= 8 { // the tasks a few workers have between their two reads
		clear(parsedRecords.m)
	}
	parsedRecords.m[key] = r.clone()
	parsedRecords.Unlock()
	return r, nil
}

// parsedRecords holds the last records Load parsed, by the sha256 of their name and bytes.
var parsedRecords = struct {
	sync.Mutex
	m map[[32]byte]*Record
}{m: map[[32]byte]*Record{}}

// clone copies r deeply enough that changing the copy, or what its accessors return, never
// changes r: what Parse sets (the files are read after it, by the caller).
func (r *Record) clone() *Record {
	c := *r
	c.members = slices.Clone(r.members)
	for i := range c.members {
		c.members[i].Value = bytes.Clone(c.members[i].Value)
	}
	if r.selfCheck != nil {
		s := *r.selfCheck
		s.KnownRisks = slices.Clone(s.KnownRisks)
		s.UntestedPaths = slices.Clone(s.UntestedPaths)
		s.PossibleStubs = slices.Clone(s.PossibleStubs)
		c.selfCheck = &s
	}
	if r.implementation != nil {
		im := *r.implementation
		im.KnownRisks = slices.Clone(im.KnownRisks)
		c.implementation = &im
	}
	if r.integration != nil {
		in := *r.integration
		c.integration = &in
	}
	c.history = cloneEntries(r.history)
	c.store.integRaw = bytes.Clone(r.store.integRaw)
	c.store.badInteg = r.store.badInteg
	return &c
}
