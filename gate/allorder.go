package gate

import (
	"context"
	"slices"
	"sync"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/tiers"
)

// gateInOrder gates the entries a recorded geas gate --all deferred (deferred[i] set: tasks to be
// gated that judge a head), o.Jobs at a time, each after the deferred tasks whose judged heads are
// strict ancestors of its own (tiers.BuildsOn): a task done on top of another's work is judged
// once that task's pass, if it passes, is recorded, so that the other task's files are
// attributed to it (SPEC §5.3 B) and not counted against this task's scope. Otherwise the order
// is id order. Re-checks of verified and passed tasks are not deferred: they write nothing, and
// their passes were judged against passes recorded before them. The order never makes a run
// trust anything more: each run judges the other tasks' passes as they are recorded, whatever
// the order, and an agent that forges heads or ancestry only changes which recorded passes exist
// when a task is judged. Each result goes to tasks[i], so the output keeps id order; deferred[i]
// is closed and cleared once its task ran.
func gateInOrder(ctx context.Context, p *project.Project, shared *tiers.Shared, mission string, tasks []*MissionTask, deferred []*tiers.Loaded, o AllOptions) error {
	var idx []int
	var order []tiers.OrderTask
	for i, k := range deferred {
		if k != nil {
			idx = append(idx, i)
			order = append(order, tiers.OrderTask{Contract: k.Contract, Loaded: k})
		}
	}
	if len(idx) == 0 {
		return nil
	}
	after, _ := tiers.BuildsOn(p.Dir, order)
	return forEachAfter(ctx, len(idx), o.Jobs, after, func(n int) {
		i := idx[n]
		k := deferred[i]
		deferred[i] = nil // gateEntry closes it
		tasks[i] = gateEntry(ctx, p, shared, mission, tasks[i], k, o)
	})
}

// ordered reports whether an entry classify returned is one gateInOrder orders: a task to be
// gated (not a re-check), whose contract reads as its own, that judges a head.
func ordered(at *MissionTask, k *tiers.Loaded) bool {
	return at.Outcome == "" && k != nil && k.Err == nil && k.Contract.TaskID == at.TaskID &&
		!k.Contract.Status.IsFinished() && tiers.JudgesHead(k.Contract)
}

// forEachAfter calls do(i) for every i in [0, n) on a pool of jobs workers, in an order: do(i) is
// called only once do(j) returned for every j in after[i] (after may be nil: no order), and of the
// calls that may start, the lowest i starts first, so that with no order, or one job, the calls go
// in index order as far as the order allows. Tasks run in parallel whenever nothing orders them.
// An order with a cycle (which no repository's ancestry makes, but a forged commit-graph could
// claim) is broken at the lowest index still waiting, so every i is called. An interruption stops
// handing out work, waits for the calls under way, and returns tiers.ErrInterrupted.
func forEachAfter(ctx context.Context, n, jobs int, after [][]int, do func(i int)) error {
	waiting := make([]int, n) // predecessors not yet returned
	next := make([][]int, n)  // the calls waiting on i
	for i := range after {
		for _, j := range after[i] {
			if j != i && j >= 0 && j < n {
				waiting[i]++
				next[j] = append(next[j], i)
			}
		}
	}
	queued := make([]bool, n)
	var ready []int // sorted
	push := func(i int) {
		if !queued[i] {
			queued[i] = true
			at, _ := slices.BinarySearch(ready, i)
			ready = slices.Insert(ready, at, i)
		}
	}
	for i := range n {
		if waiting[i] == 0 {
			push(i)
		}
	}
	work := make(chan int)
	done := make(chan int, n)
	var wg sync.WaitGroup
	for range max(1, min(jobs, n)) {
		wg.Go(func() {
			for i := range work {
				do(i)
				done <- i
			}
		})
	}
	finish := func(i int, running *int, finished *int) {
		*running--
		*finished++
		for _, s := range next[i] {
			if waiting[s]--; waiting[s] <= 0 {
				push(s)
			}
		}
	}
	running, finished := 0, 0
loop:
	for finished < n {
		switch {
		case ctx.Err() != nil:
			break loop
		case len(ready) > 0 && running < max(1, jobs):
			select {
			case work <- ready[0]:
				ready = ready[1:]
				running++
			case i := <-done:
				finish(i, &running, &finished)
			case <-ctx.Done():
				break loop
			}
		case running > 0:
			select {
			case i := <-done:
				finish(i, &running, &finished)
			case <-ctx.Done():
				break loop
			}
		default: // nothing runs, nothing may start: a cycle; start its lowest index
			for i := range n {
				if !queued[i] {
					push(i)
					break
				}
			}
		}
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return tiers.ErrInterrupted
	}
	return nil
}
