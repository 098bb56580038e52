package decentral

import (
	"fmt"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// Method is one decentralized algorithm, a configured value that carries its
// own knobs (DGETMethod{Period: 10}, CHOCOMethod{Gamma: 0.1}). The
// [Optimizer] is the driver: it schedules the nodes on its workers, runs
// the [Exchange], counts and measures, and never knows which Method runs.
// It reads what it needs of the method once, from [Method.Describe]. A
// Method keeps no per-run data itself; its state lives in the named m × p
// slabs the description lists, which the optimizer allocates, saves in a
// [Snapshot] and double-buffers (a round reads a slab's current rows and
// writes its next ones, which become current once every node succeeded).
//
// Init and Step run concurrently for distinct nodes and must touch only the
// node's rows (through the [RoundContext]) and the worker's scratch.
//
// Optional interfaces add behaviour only some methods have: [Preparer],
// [MixingChecker] and [Validator].
type Method interface {
	// Describe returns what the optimizer needs to know of the method.
	Describe() Description
	// Init runs the initialisation of node c.Node(), after x_0 is set.
	Init(c RoundContext) error
	// Step runs round t of node c.Node(): it reads the current rows and
	// writes the next ones of every slab.
	Step(c RoundContext) error
	// Samples returns the samples a node draws in round t (t = 0 is Init,
	// round t ≥ 1 the t-th Step) at the given cost: what its Init and Step
	// count, which lets a budget of samples be turned into rounds.
	Samples(t int, c Cost) int64
}

// Description is what a [Method] says of itself, once: its name, its state,
// what its nodes send and what it needs of the driver.
type Description struct {
	// Name is the name the registry and Config.Algorithm know it by.
	Name string
	// Slabs names the state slabs, x first: what a Snapshot holds.
	Slabs []string
	// Shared lists the slabs whose current rows a node sends each
	// neighbour every round, in the order RoundContext.Mix numbers them. A
	// method with a compressor sends its one compressed message instead
	// (see Compress) and leaves Shared empty.
	Shared []int
	// Direction is the slab of the tracked direction (GNSD's y, GT-STORM's
	// v) that [Optimizer.Direction] returns; 0, which is x, means none.
	Direction int
	// StateFloats is the state per node beyond the model that the
	// algorithm needs, in floats per parameter, as Counters.StateFloats
	// reports it (times p).
	StateFloats int
	// Power is the default step-size exponent: η_t = η_0/(1 + 0.1t)^Power;
	// 0 is a constant step.
	Power float64
	// Momentum reports that the method weighs the mixed direction with the
	// schedule's β_{t+1} (RoundContext.Beta), which [Optimizer.Beta] then
	// reports; other methods report 0.
	Momentum bool
	// StaticGraph reports that the method needs the same W every round
	// (CHOCO keeps Σ_j W_ij x̂_j): New refuses a time-varying topology.
	StaticGraph bool
	// Compress is the spec of package compress ("topk:0.01"; "none" is the
	// identity) that the method's messages go through: each node sends the
	// one message its RoundContext.Compress made, and the optimizer counts
	// its encoded length as the bytes sent. Empty means the method sends
	// its Shared rows uncompressed.
	Compress string
}

// Shares returns the number of vectors a node sends each neighbour per
// round: one encoded message for a method that compresses, else its
// shared slabs.
func (d Description) Shares() int {
	if d.Compress != "" {
		return 1
	}
	return len(d.Shared)
}

// validate reports a description the optimizer cannot run.
func (d Description) validate() error {
	switch {
	case d.Name == "":
		return fmt.Errorf("method %+v: no name", d)
	case len(d.Slabs) == 0 || d.Slabs[0] != "x":
		return fmt.Errorf("method %s: slabs %q, want x first", d.Name, d.Slabs)
	case d.Direction < 0 || d.Direction >= len(d.Slabs):
		return fmt.Errorf("method %s: direction slab %d of %d", d.Name, d.Direction, len(d.Slabs))
	case d.Compress != "" && len(d.Shared) != 0:
		return fmt.Errorf("method %s: a compressed message and shared slabs %v", d.Name, d.Shared)
	case d.StateFloats < 0:
		return fmt.Errorf("method %s: %d state floats per parameter", d.Name, d.StateFloats)
	}
	for _, k := range d.Shared {
		if k < 0 || k >= len(d.Slabs) {
			return fmt.Errorf("method %s: shared slab %d of %d", d.Name, k, len(d.Slabs))
		}
	}
	return nil
}

// Cost is what a round's samples depend on: the minibatch size and the
// samples of a node's whole share, what a large batch of the whole share
// (D-GET's S1 by default) draws.
type Cost struct {
	Batch, Full int
}

// MixingChecker is a [Method] that cannot use every doubly stochastic W (D²
// needs λ_min(W) > −1/3): the optimizer calls CheckMixing with every W_t
// before the first round that mixes with it, and stops on its error.
type MixingChecker interface {
	CheckMixing(w *graph.Mixing) error
}

// Preparer is a [Method] whose nodes work before the round's messages are
// sent (CHOCO takes its local step and compresses what it sends): the
// optimizer runs Prepare for every node, in parallel, before the messages
// go out. Prepare may write the node's next rows, which Step then reads.
type Preparer interface {
	Prepare(c RoundContext) error
}

// Validator is a [Method] whose knobs can be out of range: New calls
// Validate and refuses the method on its error. A registered method's
// Validate runs its knobs' checks (see [Knob.Want]).
type Validator interface {
	Validate() error
}

// ShareBatcher is a [Method] that draws batches of a fixed size from a
// node's share (D-GET's large batch S1): ShareBatch returns the size, 0 for
// the whole share, and the knob that sets it. A run refuses a size larger
// than the smallest share, which would draw the same samples over and over.
type ShareBatcher interface {
	ShareBatch() (knob Knob, size int)
}

// DirectedCautioner is a [Method] whose theory wants a symmetric W:
// DirectedCaution returns what a run on the directed graph named graph
// should be told (D²'s recursion can have modes that grow on (I + P)/2).
type DirectedCautioner interface {
	DirectedCaution(graph string) string
}
