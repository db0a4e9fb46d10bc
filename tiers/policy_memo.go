package tiers

import (
	"crypto/sha256"
	"maps"
	"slices"
	"sync"
)

// policyMemo remembers what ParsePolicy answered for each policy document this process read:
// every run reads the policy twice (before tier 1 and in the re-read of SPEC §7.4), and the tasks
// of geas gate --all share one, so without it each task validated, decoded and compiled the
// same document (its stub patterns are regular expressions) twice. ParsePolicy is a function of
// the bytes and of the name its errors give the file, so answering from here is answering what
// it would say; a document whose bytes changed has another key and is parsed afresh.
var policyMemo struct {
	mu sync.Mutex
	m  map[policyKey]parsedPolicy
}

type policyKey struct {
	file string
	sum  [sha256.Size]byte
}

type parsedPolicy struct {
	p   Policy
	err error
}

// policyMemoMax bounds the remembered documents; past it the memory starts again empty.
const policyMemoMax = 64

// parsePolicy is ParsePolicy answered from policyMemo when the same document was parsed before.
// Each caller gets a Policy of its own (maps and slices copied), so one run changing its policy
// cannot change another's.
func parsePolicy(file string, data []byte) (Policy, error) {
	key := policyKey{file: file, sum: sha256.Sum256(data)}
	policyMemo.mu.Lock()
	got, ok := policyMemo.m[key]
	policyMemo.mu.Unlock()
	if ok {
		return got.p.clone(), got.err
	}
	p, err := ParsePolicy(file, data)
	policyMemo.mu.Lock()
	if policyMemo.m == nil || len(policyMemo.m) >= policyMemoMax {
		policyMemo.m = make(map[policyKey]parsedPolicy)
	}
	policyMemo.m[key] = parsedPolicy{p: p.clone(), err: err}
	policyMemo.mu.Unlock()
	return p, err
}

// clone is a deep copy of p's maps and slices; the compiled expressions, which nothing changes,
// are shared.
func (p Policy) clone() Policy {
	c := p
	if p.Evaluators != nil {
		c.Evaluators = make(map[string][]string, len(p.Evaluators))
		for k, v := range p.Evaluators {
			c.Evaluators[k] = slices.Clone(v)
		}
	}
	c.StubCap = maps.Clone(p.StubCap)
	c.StubPatterns = slices.Clone(p.StubPatterns)
	c.SharedGlobs = slices.Clone(p.SharedGlobs)
	c.Holdout.Commands = slices.Clone(p.Holdout.Commands)
	return c
}
