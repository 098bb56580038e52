package decentral

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Phases of node work run in parallel.
const (
	phaseInit = iota
	phaseStep
	phasePrepare
	phaseEval
)

// parallel runs job i = 0..n-1 of the given phase on the worker goroutines,
// each job on one goroutine, and returns the error of the lowest failing job,
// so the outcome does not depend on the scheduling. Workers take jobs from a
// shared counter; a node's result depends only on its inputs, never on which
// worker ran it.
func (o *Optimizer) parallel(phase, n int) error {
	o.phase, o.jobs = phase, n
	o.next.Store(0)
	procs := min(o.procs, n)
	if procs <= 1 {
		o.work(0)
	} else {
		if o.team == nil {
			o.team = startTeam(o.procs, o.work)
		}
		o.team.run(procs)
	}
	for i := 0; i < n; i++ {
		if err := o.errs[i]; err != nil {
			if phase == phaseEval {
				return fmt.Errorf("batch %d: %w", i, err)
			}
			return fmt.Errorf("node %d: %w", o.local[i], err)
		}
	}
	return nil
}

// work is one worker's loop: take the next job until none are left.
func (o *Optimizer) work(w int) {
	for {
		i := int(o.next.Add(1) - 1)
		if i >= o.jobs {
			return
		}
		o.errs[i] = o.job(w, i)
	}
}

// job runs job i of the current phase on worker w, turning a panic (of the
// oracle, say) into an error.
func (o *Optimizer) job(w, i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	switch o.phase {
	case phaseInit:
		node := o.local[i]
		o.rSamples[node], o.rEvals[node] = 0, 0
		return o.meth.Init(RoundContext{o, w, node})
	case phasePrepare:
		node := o.local[i]
		o.rSamples[node], o.rEvals[node] = 0, 0
		return o.meth.(Preparer).Prepare(RoundContext{o, w, node})
	case phaseStep:
		node := o.local[i]
		if _, prepared := o.meth.(Preparer); !prepared {
			o.rSamples[node], o.rEvals[node] = 0, 0
		}
		if err := o.meth.Step(RoundContext{o, w, node}); err != nil {
			return err
		}
		if o.pipe.sending {
			o.sendNextRound(node) // a pipelined round: the node's next vectors go now
		}
		return nil
	default:
		return o.evalJob(w, i)
	}
}

// team is a set of long-lived worker goroutines, so that a round starts its
// workers without allocating. Worker 0 is the goroutine calling run.
type team struct {
	work func(w int)
	wake []chan struct{} // wake[w] for w ≥ 1
	done sync.WaitGroup
	live atomic.Int32 // worker goroutines running their loop; read by tests
}

func startTeam(n int, work func(w int)) *team {
	t := &team{work: work, wake: make([]chan struct{}, n)}
	for w := 1; w < n; w++ {
		t.wake[w] = make(chan struct{})
		go func() {
			t.live.Add(1)
			defer t.live.Add(-1)
			for range t.wake[w] {
				t.work(w)
				t.done.Done()
			}
		}()
	}
	return t
}

// run runs work on workers 0..procs-1 and waits for all of them.
func (t *team) run(procs int) {
	t.done.Add(procs - 1)
	for w := 1; w < procs; w++ {
		t.wake[w] <- struct{}{}
	}
	t.work(0)
	t.done.Wait()
}

// stop ends the worker goroutines.
func (t *team) stop() {
	for _, c := range t.wake[1:] {
		close(c)
	}
}
