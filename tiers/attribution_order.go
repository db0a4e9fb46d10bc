package tiers

import (
	"errors"
	"io/fs"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// MaxOrderedHeads bounds how many distinct judged heads BuildsOn compares: at most
// MaxOrderedHeads × (MaxOrderedHeads-1) ancestry checks. With more, BuildsOn orders nothing and
// the tasks are gated in id order.
const MaxOrderedHeads = 32

// JudgesHead reports whether a run on a task with contract c resolves a head in the repository
// (tier 0's baseline: implementation_change always, any other profile when it names a base), so
// that its change, and what other tasks' passes account for in it (SPEC §5.3 B), depend on the
// ancestry of its head.
func JudgesHead(c *contract.Contract) bool {
	return c != nil && (c.GateProfile == vocab.ImplementationChange || c.BaseSnapshot != "")
}

// OrderTask is a task geas gate --all is about to gate, for BuildsOn: its contract and the task
// directory the contract was read from (Loaded.Dir, open), whose record.json names the
// integration commit.
type OrderTask struct {
	Contract *contract.Contract
	Loaded   *Loaded
}

// BuildsOn says, for each task, which of the other tasks' judged heads are strict ancestors of
// its own (after[i] lists those j, in order): the tasks whose passes its attribution may need
// (SPEC §5.3 B), which a recorded geas gate --all gates first. The head is the one tier 0 judges:
// integration.json's commit when it names one, else HEAD. A task that judges no head (JudgesHead),
// whose record or head cannot be read, or whose ancestry cannot be read against another's, builds
// on nothing and nothing builds on it: the order only chooses which recorded passes exist when a
// task is judged, and the run judges each of them as it would in any order. Tasks with the same
// head build on each other in neither direction. Nothing is ordered (nil) when the repository
// cannot be opened, or when more than MaxOrderedHeads distinct heads would be compared; heads
// reports how many distinct heads there were.
func BuildsOn(projectDir string, tasks []OrderTask) (after [][]int, heads int) {
	var idx []int // tasks that judge a head
	for i, t := range tasks {
		if JudgesHead(t.Contract) && t.Loaded != nil && t.Loaded.Dir != nil {
			idx = append(idx, i)
		}
	}
	if len(idx) < 2 {
		return nil, len(idx)
	}
	repo, err := git.Open(projectDir)
	if err != nil {
		return nil, 0
	}
	defer repo.Close()
	headOf := make(map[int]string, len(idx))
	var distinct []string
	seen := map[string]bool{}
	for _, i := range idx {
		h := judgedHead(repo, tasks[i].Loaded)
		if h == "" {
			continue
		}
		headOf[i] = h
		if !seen[h] {
			seen[h] = true
			distinct = append(distinct, h)
		}
	}
	if len(distinct) < 2 || len(distinct) > MaxOrderedHeads {
		return nil, len(distinct)
	}
	// below[h] are the distinct heads that are strict ancestors of h.
	below := map[string]map[string]bool{}
	for _, a := range distinct {
		for _, b := range distinct {
			if a == b || below[a][b] {
				continue // b above a already: a is not also above b
			}
			ok, err := repo.IsAncestor(a, b)
			if err != nil || !ok {
				continue
			}
			if below[b] == nil {
				below[b] = map[string]bool{}
			}
			below[b][a] = true
		}
	}
	after = make([][]int, len(tasks))
	for _, i := range idx {
		hi, ok := headOf[i]
		if !ok {
			continue
		}
		for _, j := range idx {
			if hj, ok := headOf[j]; ok && below[hi][hj] {
				after[i] = append(after[i], j)
			}
		}
	}
	return after, len(distinct)
}

// maxIntegrationBytes bounds integration.json as record.Load bounds it (three short strings).
const maxIntegrationBytes = 64 << 10

// judgedHead is the full SHA of the head a run on the task would judge, as tier 0's baseline
// resolves it; "" when it cannot be read. integration.json is read alone (not the history): only
// without it is the whole record read, whose earlier layout kept the integration in record.json.
func judgedHead(repo *git.Repo, k *Loaded) string {
	name := k.Dir.Name + "/" + record.IntegrationFile
	var integ *record.Integration
	data, err := k.Dir.ReadLimitedAbsent(name, maxIntegrationBytes)
	switch {
	case err == nil:
		if integ, _, err = record.ParseIntegration(name, data); err != nil {
			return ""
		}
	case errors.Is(err, fs.ErrNotExist):
		rec, err := record.LoadFrom(k.Dir, k.Dir.Name+"/"+record.RecordFile)
		if err != nil {
			return ""
		}
		integ, _ = rec.Integration()
	default:
		return ""
	}
	rev := "HEAD"
	if integ != nil && integ.Commit != "" {
		rev = integ.Commit
	}
	h, err := repo.Resolve(rev)
	if err != nil {
		return ""
	}
	return h
}
