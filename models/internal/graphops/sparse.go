package graphops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/data"
)

// SparseRows names the samples a sparse op reads: rows Index of the CSR
// dataset Data. The worker owning the graph points it at the current batch
// before each run, so no sample is copied or densified.
type SparseRows struct {
	Data  *data.Dataset
	Index []int
}

// sparseScoresOp is a Gorgonia op computing the scores z_b = x_bᵀw of the
// current batch's sparse rows: w [p] → z [n], in O(nnz).
type sparseScoresOp struct {
	rows *SparseRows
	n, p int
	out  tensor.Tensor // reused across runs: overwritten by each Do
}

// sparseScoresGradOp is its adjoint: g [n] → Σ_b g_b x_b [p], scattered
// into a dense vector (the gradient of xᵀw with respect to w).
type sparseScoresGradOp struct {
	rows *SparseRows
	n, p int
	out  tensor.Tensor // reused across runs: zeroed and refilled by each Do
}

// SparseMatVec adds the scores z = X w [n] of the batch rows X, n sparse
// rows over p features, by the weights w [p], in O(nnz).
func (g *Graph) SparseMatVec(w *G.Node, rows *SparseRows, n int) *G.Node {
	if !g.ok("sparse scores", w) {
		return nil
	}
	z, err := G.ApplyOp(&sparseScoresOp{rows: rows, n: n, p: w.Shape().TotalSize(), out: newVec(n)}, w)
	return g.keep(z, err, "sparse scores")
}

func vecType() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 1, Of: a}, G.TensorType{Dims: 1, Of: a})
}

func (op *sparseScoresOp) Arity() int    { return 1 }
func (op *sparseScoresOp) Type() hm.Type { return vecType() }
func (op *sparseScoresOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.n}, nil
}
func (op *sparseScoresOp) ReturnsPtr() bool      { return false }
func (op *sparseScoresOp) CallsExtern() bool     { return false }
func (op *sparseScoresOp) OverwritesInput() int  { return -1 }
func (op *sparseScoresOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *sparseScoresOp) Hashcode() uint32      { return hashOf(op) }

// String names the op; the rows pointer keeps distinct instances distinct
// for Gorgonia's hash-based node deduplication.
func (op *sparseScoresOp) String() string {
	return fmt.Sprintf("SparseScores{n=%d, p=%d, rows=%p}", op.n, op.p, op.rows)
}

func (op *sparseScoresOp) Do(inputs ...G.Value) (G.Value, error) {
	w, err := vecInput(inputs, op.p)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	if len(op.rows.Index) != op.n {
		return nil, fmt.Errorf("%v: bound to %d rows", op, len(op.rows.Index))
	}
	z := f32(op.out)
	for k, i := range op.rows.Index {
		cols, vals := op.rows.Data.Sparse(i)
		var s float32
		for j, c := range cols {
			if c < 0 || int(c) >= op.p {
				return nil, fmt.Errorf("%v: sample %d has feature index %d, model has %d features", op, i, c, op.p)
			}
			s += float32(vals[j] * w[c])
		}
		z[k] = s
	}
	return op.out, nil
}

func (op *sparseScoresOp) DiffWRT(int) []bool { return []bool{true} }

func (op *sparseScoresOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	adj := &sparseScoresGradOp{rows: op.rows, n: op.n, p: op.p, out: newVec(op.p)}
	d, err := G.ApplyOp(adj, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

func (op *sparseScoresGradOp) Arity() int    { return 1 }
func (op *sparseScoresGradOp) Type() hm.Type { return vecType() }
func (op *sparseScoresGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.p}, nil
}
func (op *sparseScoresGradOp) ReturnsPtr() bool      { return false }
func (op *sparseScoresGradOp) CallsExtern() bool     { return false }
func (op *sparseScoresGradOp) OverwritesInput() int  { return -1 }
func (op *sparseScoresGradOp) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *sparseScoresGradOp) Hashcode() uint32      { return hashOf(op) }

func (op *sparseScoresGradOp) String() string {
	return fmt.Sprintf("SparseScoresGrad{n=%d, p=%d, rows=%p}", op.n, op.p, op.rows)
}

func (op *sparseScoresGradOp) Do(inputs ...G.Value) (G.Value, error) {
	g, err := vecInput(inputs, op.n)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", op, err)
	}
	if len(op.rows.Index) != op.n {
		return nil, fmt.Errorf("%v: bound to %d rows", op, len(op.rows.Index))
	}
	out := f32(op.out)
	clear(out)
	for k, i := range op.rows.Index {
		cols, vals := op.rows.Data.Sparse(i)
		for j, c := range cols {
			out[c] += float32(g[k] * vals[j])
		}
	}
	return op.out, nil
}

// vecInput returns the float32 data of the single input of an op, which must
// have length n.
func vecInput(inputs []G.Value, n int) ([]float32, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(inputs))
	}
	v, ok := floatData(inputs[0])
	if !ok {
		return nil, fmt.Errorf("input holds %T, want a float32 tensor", inputs[0])
	}
	if len(v) != n {
		return nil, fmt.Errorf("input has %d values, want %d", len(v), n)
	}
	return v, nil
}
