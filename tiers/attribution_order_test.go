package tiers

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/vocab"
)

// orderTasks makes, for each commit (full SHA, a revision, or "" for none: HEAD is judged), a
// task of mission m1 named after its index whose integration.json names that commit, and returns
// them as BuildsOn takes them.
func orderTasks(t *testing.T, f *fixture, profile vocab.Profile, commits ...string) []OrderTask {
	t.Helper()
	rec := string(f.read(taskFile("record.json")))
	p := f.Open()
	var tasks []OrderTask
	for i, c := range commits {
		dir := fmt.Sprintf("missions/m1/tasks/o%d", i)
		f.write(".geas/"+dir+"/record.json", rec)
		if c != "" {
			f.write(".geas/"+dir+"/integration.json", fmt.Sprintf(`{"status": "merged", "commit": %q}`, c))
		}
		d := fsutil.OpenSubdir(p.Geas, dir)
		t.Cleanup(func() { d.Close() })
		tasks = append(tasks, OrderTask{Contract: &contract.Contract{GateProfile: profile}, Loaded: &Loaded{Dir: d}})
	}
	return tasks
}

func TestATaskIsOrderedAfterTheTasksWhoseHeadsItsHeadDescendsFrom(t *testing.T) {
	f := newFixture(t, true)
	f.write("a.txt", "a\n")
	ha := f.commit("a")
	f.write("b.txt", "b\n")
	hb := f.commit("b on a")
	f.git("checkout", "-q", "-b", "side", ha+"~1")
	f.write("c.txt", "c\n")
	hc := f.commit("c, beside a")
	// o0 builds on o1 (its head descends from o1's), o1 on nothing; o2 is on another branch;
	// o3 has o1's very head (a tie: neither builds on the other); o4 judges HEAD (side, c's).
	tasks := orderTasks(t, f, vocab.ImplementationChange, hb, ha, hc, ha, "")
	after, heads := BuildsOn(f.dir, tasks)
	assert.Equal(t, 3, heads)
	assert.Equal(t, [][]int{{1, 3}, nil, nil, nil, nil}, after)

	// The honest control: unrelated heads build on nothing.
	after, _ = BuildsOn(f.dir, orderTasks(t, f, vocab.ImplementationChange, hc, hb))
	assert.Equal(t, [][]int{nil, nil}, after)
}

func TestATaskThatJudgesNoHeadIsNotOrdered(t *testing.T) {
	f := newFixture(t, true)
	f.write("a.txt", "a\n")
	ha := f.commit("a")
	f.write("b.txt", "b\n")
	hb := f.commit("b")
	// artifact_only without a base judges no head: nothing to order.
	after, heads := BuildsOn(f.dir, orderTasks(t, f, vocab.ArtifactOnly, hb, ha))
	assert.Nil(t, after)
	assert.Zero(t, heads)
	// A head that does not resolve orders nothing either.
	after, _ = BuildsOn(f.dir, orderTasks(t, f, vocab.ImplementationChange, hb, "0123456789012345678901234567890123456789"))
	assert.Nil(t, after)
	// Without a repository, nothing is ordered.
	g := newFixture(t, false)
	after, _ = BuildsOn(g.dir, orderTasks(t, g, vocab.ImplementationChange, "", ""))
	assert.Nil(t, after)
}

func TestManyDistinctHeadsAreNotCompared(t *testing.T) {
	f := newFixture(t, true)
	var commits []string
	for i := range MaxOrderedHeads + 1 {
		f.write("n.txt", fmt.Sprintf("%d\n", i))
		commits = append(commits, f.commit(fmt.Sprint(i)))
	}
	after, heads := BuildsOn(f.dir, orderTasks(t, f, vocab.ImplementationChange, commits...))
	assert.Nil(t, after)
	assert.Equal(t, MaxOrderedHeads+1, heads)
	// At the bound they are: each builds on every earlier one.
	after, heads = BuildsOn(f.dir, orderTasks(t, f, vocab.ImplementationChange, commits[1:]...))
	require.Len(t, after, MaxOrderedHeads)
	assert.Equal(t, MaxOrderedHeads, heads)
	assert.Len(t, after[MaxOrderedHeads-1], MaxOrderedHeads-1)
	assert.Empty(t, after[0])
}
