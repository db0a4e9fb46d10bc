package gate

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// callOrder runs forEachAfter over n calls and returns the order they started in.
func callOrder(t *testing.T, n, jobs int, after [][]int) []int {
	t.Helper()
	var mu sync.Mutex
	var order []int
	require.NoError(t, forEachAfter(context.Background(), n, jobs, after, func(i int) {
		mu.Lock()
		order = append(order, i)
		mu.Unlock()
	}))
	return order
}

func TestATaskRunsAfterTheTasksItBuildsOn(t *testing.T) {
	// 0 builds on 2, 1 on 0: with one job, 2, 0, 1, then the rest in index order.
	after := [][]int{{2}, {0}, nil, nil}
	assert.Equal(t, []int{2, 0, 1, 3}, callOrder(t, 4, 1, after))
	// With no order, index order.
	assert.Equal(t, []int{0, 1, 2, 3}, callOrder(t, 4, 1, nil))
	// With two jobs, every call still starts after the calls it waits on returned.
	for range 20 {
		var mu sync.Mutex
		returned := map[int]bool{}
		require.NoError(t, forEachAfter(context.Background(), 4, 2, after, func(i int) {
			mu.Lock()
			for _, j := range after[i] {
				assert.True(t, returned[j], "call %d started before call %d returned", i, j)
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			returned[i] = true
			mu.Unlock()
		}))
		assert.Len(t, returned, 4)
	}
}

func TestTasksThatBuildOnNothingRunInParallel(t *testing.T) {
	// 0 and 1 are unrelated: with two jobs both run at once (each waits for the other to start).
	var started atomic.Int32
	both := make(chan struct{})
	require.NoError(t, forEachAfter(context.Background(), 3, 2, [][]int{nil, nil, {0, 1}}, func(i int) {
		if i == 2 {
			assert.Equal(t, int32(2), started.Load())
			return
		}
		if started.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
		case <-time.After(5 * time.Second):
			t.Errorf("call %d ran alone", i)
		}
	}))
}

func TestAnOrderWithACycleStillRunsEveryTask(t *testing.T) {
	// A forged commit-graph may claim heads that descend from each other: every call still runs,
	// the cycle broken at its lowest index.
	assert.Equal(t, []int{0, 2, 1, 3}, callOrder(t, 4, 1, [][]int{{1}, {2}, {0}, {1}}))
	order := callOrder(t, 3, 2, [][]int{{1}, {0}, {0, 1}})
	assert.ElementsMatch(t, []int{0, 1, 2}, order)
	assert.Equal(t, 2, order[2])
}

func TestAnInterruptedOrderStopsHandingOutWork(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran []int
	err := forEachAfter(ctx, 3, 1, [][]int{nil, {0}, {1}}, func(i int) {
		ran = append(ran, i)
		cancel()
	})
	assert.ErrorIs(t, err, tiers.ErrInterrupted)
	assert.Equal(t, []int{0}, ran)
}

func TestOnlyTasksToBeGatedThatJudgeAHeadAreOrdered(t *testing.T) {
	loaded := func(id string, status vocab.State, profile vocab.Profile, base string) *tiers.Loaded {
		return &tiers.Loaded{Contract: &contract.Contract{TaskID: id, Status: status, GateProfile: profile, BaseSnapshot: base}}
	}
	gate := &MissionTask{TaskID: "a"}
	assert.True(t, ordered(gate, loaded("a", vocab.Integrated, vocab.ImplementationChange, "HEAD")))
	assert.True(t, ordered(gate, loaded("a", vocab.Reviewed, vocab.ArtifactOnly, "HEAD~1")), "a base makes a head judged")
	assert.False(t, ordered(gate, loaded("a", vocab.Reviewed, vocab.ArtifactOnly, "")), "no head judged")
	assert.False(t, ordered(gate, loaded("a", vocab.Verified, vocab.ImplementationChange, "HEAD")), "a re-check")
	assert.False(t, ordered(gate, loaded("a", vocab.Passed, vocab.ImplementationChange, "HEAD")), "a re-check")
	assert.False(t, ordered(gate, loaded("b", vocab.Integrated, vocab.ImplementationChange, "HEAD")), "another task's contract")
	assert.False(t, ordered(gate, &tiers.Loaded{Err: errors.New("invalid")}), "an unreadable contract")
	assert.False(t, ordered(&MissionTask{TaskID: "a", Outcome: OutcomeNotReady}, loaded("a", vocab.Integrated, vocab.ImplementationChange, "HEAD")))
	assert.False(t, ordered(gate, nil))
}
