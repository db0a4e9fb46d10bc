package schemas

import (
	"crypto/sha256"
	"reflect"
	"sync"
)

// memoKey names one check of one document: what was checked (a kind, the Go type read, or a
// caller's name), the file name its errors carry, and the sha256 of its bytes.
type memoKey struct {
	what string
	kind Kind
	t    reflect.Type
	file string
	sum  [sha256.Size]byte
}

// memoMax bounds the remembered checks; past it the memory starts again empty.
const memoMax = 4096

// memo remembers what each check found on each document this process checked: a run reads the
// contract four times (gate --all's triage, the finished-task check, Gather, and the re-read of
// SPEC §7.4), the record, the evidence and the policy twice, and a mission's tasks share the
// policy. A check is a function of the bytes (and of the name its errors give the file), so
// answering from here is answering what the check would say; a file whose bytes changed has
// another key and is checked afresh.
var memo struct {
	mu sync.Mutex
	m  map[memoKey]error
}

// Remember returns check's result for data, running it only the first time this process sees
// these bytes under this (what, file). check must depend on nothing but data and file.
func Remember(what, file string, data []byte, check func() error) error {
	return remember(memoKey{what: what, file: file}, data, check)
}

func remember(key memoKey, data []byte, check func() error) error {
	key.sum = sha256.Sum256(data)
	memo.mu.Lock()
	err, ok := memo.m[key]
	memo.mu.Unlock()
	if ok {
		return err
	}
	err = check()
	memo.mu.Lock()
	if memo.m == nil || len(memo.m) >= memoMax {
		memo.m = make(map[memoKey]error)
	}
	memo.m[key] = err
	memo.mu.Unlock()
	return err
}
