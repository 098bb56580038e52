package decentral

// Batch is one node's minibatch for one round. The optimizer looks inside it
// only through Len, the number of samples it counts per gradient evaluation:
// a [BatchSource] makes it and an [Oracle] consumes it, possibly twice
// (GT-STORM evaluates x_t and x_{t−1} on the same batch). Return a pointer
// (such as a *data.Batch) from BatchSource.Sample: a pointer stored in an
// interface costs no allocation per round.
type Batch interface {
	Len() int
}

// BatchSource draws the nodes' minibatches: Sample returns node's next one.
// Sample is called for a node only from the goroutine doing that node's work
// in a round, in round order, so a per-node random stream gives the same
// batches whatever the scheduling; calls for distinct nodes may run
// concurrently. The returned Batch must be non-nil and stay valid until the
// next Sample call for the same node.
type BatchSource interface {
	Sample(node int) Batch
}

// Oracle evaluates stochastic gradients. Grad writes ∇f(x; b) (the mean over
// the batch) into grad and returns the loss. Calls with distinct worker ids,
// 0 ≤ worker < the optimizer's worker count, may run concurrently.
type Oracle interface {
	Grad(worker int, x []float32, b Batch, grad []float32) (loss float32, err error)
}

// PairGrader is an [Oracle] that evaluates the gradients at two points on
// one batch for less than two Grad calls cost, as GT-STORM's round needs (the
// batch's input-side work is shared). Its results must be those of
// Grad(xNew, b, gNew) followed by Grad(xOld, b, gOld); the optimizer uses it
// whenever the Oracle implements it. It is the optimizer's side of
// models.PairWorker, one level up: a worker evaluates one node's batch,
// the Oracle any node's.
type PairGrader interface {
	Oracle
	GradPair(worker int, xNew, xOld []float32, b Batch, gNew, gOld []float32) (lossNew float32, err error)
}

// FullBatcher is a [BatchSource] that also gives a node's large batch S1, as
// D-GET needs: FullBatch returns S1 in pieces small enough for one gradient
// evaluation each, whose sizes add up to the size of S1. S1 is the node's
// whole share when n is 0, else n samples drawn from the node's stream. The
// pieces stay valid until the node's next Sample or FullBatch call.
type FullBatcher interface {
	BatchSource
	FullBatch(node, n int) []Batch
}
