package decentral

// The functions of this file give the memory this package allocates for a
// run, from the run's sizes alone, so that a caller can refuse a run that
// cannot fit before allocating anything (see train.Config.EstimateMemory).
// They follow New (setup.go: newOptimizer, connect and allocSlabs, with
// the slabs each method's Description names), the compressed messages
// (messages.go) and NewMemExchange: keep them in step. Package graph
// estimates the graph and its mixing matrix.

// sliceHeader is the bytes of a slice header, which the estimates count.
const sliceHeader = 24

// slabs returns how many m × p float32 slabs algo keeps (each of the
// method's slabs and its next-round copy) and how many of them a Snapshot
// copies.
func slabs(algo string) (kept, snapshot int, err error) {
	names, err := StateSlabs(algo)
	if err != nil {
		return 0, 0, err
	}
	return 2 * len(names), len(names), nil
}

// SlabFloats returns the floats per node of the optimizer's state slabs for
// algo with p parameters: each slab its method's Description names (x
// first) and its next-round copy, 2p per slab (2p for DSGD, 4p for
// GT-STORM). Counters.StateFloats counts only the state a method needs,
// not the copies.
func SlabFloats(algo string, p int) (int, error) {
	k, _, err := slabs(algo)
	return k * p, err
}

// SnapshotFloats returns the floats per node that State copies for a
// checkpoint: one row of each of the method's slabs.
func SnapshotFloats(algo string, p int) (int, error) {
	_, k, err := slabs(algo)
	return k * p, err
}

// OptimizerBytes returns the bytes New allocates for m nodes of p
// parameters with the given number of worker goroutines: the state slabs,
// the per-node counters and message lists, the in-memory exchange, each
// worker's two gradient buffers, the p-float reduction buffers and, for a
// method that compresses, each node's message.
func OptimizerBytes(algo string, m, p, workers int) (int64, error) {
	f, err := SlabFloats(algo, p)
	if err != nil {
		return 0, err
	}
	const perNode = 9*8 + 16 + // samples … rLoss, evalL; errs
		sliceHeader + 2*sliceHeader + // send[i] and its two vectors
		sliceHeader + 2*sliceHeader // the exchange's sent[i]
	n, pp, w := int64(m), int64(p), int64(max(workers, 1))
	b := n*int64(f)*4 + n*perNode
	b += w * (2*pp*4 + sliceHeader) // scratch
	b += pp * (4 + 8 + 4)           // x0, acc, mean32
	if d, _ := describe(algo); d.Compress != "" {
		// Each node's decoded message and its encoding, at most 4p bytes
		// (the uncompressed vector).
		b += n * (pp*(4+4) + 2*sliceHeader + 8)
	}
	return b, nil
}

// CheckpointBytes returns the bytes one checkpoint of m nodes with p
// parameters allocates while it is written: the Snapshot's copies of the
// state and the encoded file, which holds them again.
func CheckpointBytes(algo string, m, p int) (int64, error) {
	f, err := SnapshotFloats(algo, p)
	if err != nil {
		return 0, err
	}
	state := int64(m)*int64(f)*4 + int64(m)*4*8 // slabs and per-node counters
	return 2 * state, nil
}
