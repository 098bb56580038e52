// Package graphops is the machinery under gtstorm's networks: the layers of
// package models as custom Gorgonia ops backed by our own kernels, and the
// executor that runs their graphs without allocating.
//
// What Gorgonia supplies:
//   - the expression graph ([gorgonia.org/gorgonia.ExprGraph]) the layers are nodes of;
//   - symbolic differentiation: [gorgonia.org/gorgonia.Grad] asks each op for its
//     gradient ops (SymDiff) and adds them to the graph, so a network is
//     written forward only;
//   - the order of execution: [gorgonia.org/gorgonia.Sort]'s topological order, reversed,
//     which is the order Gorgonia's TapeMachine runs;
//   - the TapeMachine itself, as the reference the executor is checked
//     against bit for bit ([Program.TapeValues] and this package's tests).
//
// What we supply:
//   - the kernels: every op's Do calls the AVX-512 kernels of
//     internal/kernels (pure Go elsewhere) — convolution by im2col and GEMM,
//     2×2 max-pooling fused with bias and ReLU, dense layers, softmax
//     cross-entropy — or, for the logistic regression, gonum's Sgemv and
//     float32 loops that compute what the stock Gorgonia ops it replaced
//     computed, bit for bit;
//   - the buffers: each op writes into buffers its layer takes from a
//     [Workspace] shared by all the graphs of one worker and returns the
//     same tensor on every run;
//   - the executor: a [Program] calls each op's Do in the TapeMachine's
//     order from a layout fixed at compile time, so a steady-state run
//     allocates nothing.
//
// A network is a chain of [Graph] calls — [Graph.Conv2D],
// [Graph.BiasReLUMaxPool2x2], [Graph.Dense], [Graph.DenseReLU],
// [Graph.SoftmaxCrossEntropy] for the CNNs; [Graph.MatVec] or
// [Graph.SparseMatVec], [Graph.BinaryCrossEntropy], [Graph.NonConvexReg]
// and [Graph.AddScalars] for the logistic regression — followed by
// [Graph.Gradients] and [Graph.Compile], all inside [Build].
package graphops
