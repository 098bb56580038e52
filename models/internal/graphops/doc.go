// Package graphops is the machinery under gtstorm's networks: the layers of
// package models as custom Gorgonia ops backed by our own kernels, and the
// executor that runs their graphs without allocating.
//
// What Gorgonia supplies:
//   - the expression graph ([gorgonia.org/gorgonia.ExprGraph]) the layers are nodes of;
//   - symbolic differentiation: [gorgonia.org/gorgonia.Grad] asks each op for its
//     gradient ops (SymDiff) and adds them to the graph, so a network is
//     written forward only; where a node feeds several ops (a residual
//     block's input) it sums their gradient terms with its own Add;
//   - the order of execution: [gorgonia.org/gorgonia.Sort]'s topological order, reversed,
//     which is the order Gorgonia's TapeMachine runs;
//   - the TapeMachine itself, as the reference the executor is checked
//     against bit for bit ([Program.TapeValues] and this package's tests).
//
// What we supply:
//   - the kernels: every op's Do calls internal/kernels, whose kernel set
//     (AVX-512 or AVX2 assembly on amd64, NEON on arm64, pure Go anywhere;
//     GTSTORM_KERNELS picks one) gives the same bits on every set and
//     architecture — convolution by im2col and GEMM (any stride and zero
//     padding), 2×2 max-pooling fused with bias and ReLU, k×k max- and
//     average pooling, global average pooling, group normalisation, bias,
//     ReLU and residual sums, dense layers, softmax cross-entropy — and,
//     for the logistic regression, float32 loops that compute what the
//     stock Gorgonia ops they replaced computed, bit for bit (the dense
//     scores summed in the sparse scores' order, on every architecture);
//   - the buffers: each op writes into buffers its layer takes from a
//     [Workspace] shared by all the graphs of one worker and returns the
//     same tensor on every run;
//   - the executor: a [Program] calls each op's Do in the TapeMachine's
//     order from a layout fixed at compile time, running Gorgonia's sums
//     of gradient terms as kernel-backed adds into workspace buffers, so a
//     steady-state run allocates nothing.
//
// A network is a chain of [Graph] calls followed by [Graph.Gradients] and
// [Graph.Compile], all inside [Build]:
//   - convolutions: [Graph.Conv2D] (valid, stride 1) and
//     [Graph.Conv2DStrided] (stride and zero padding), without bias;
//     [Graph.ChannelBias] adds a per-channel bias, or
//     [Graph.BiasReLUMaxPool2x2] fuses it with ReLU and 2×2 max-pooling;
//   - normalisation and activation: [Graph.GroupNorm], [Graph.ReLU],
//     [Graph.LeakyReLU], [Graph.Tanh], [Graph.Sigmoid], [Graph.SiLU],
//     [Graph.ELU], [Graph.Softplus], [Graph.Hardsigmoid], [Graph.Hardswish], [Graph.GELU];
//   - residual connections: [Graph.Add]; the concatenation of branches
//     along the channels, [Graph.Concat] (copies, forward and backward);
//   - fixed arithmetic with constants that are no parameters, one value or
//     one per channel (an input normalisation (x − mean) / std):
//     [Graph.ChannelConst];
//   - pooling: [Graph.MaxPool], [Graph.AvgPool] (k×k, stride s, no
//     padding) and [Graph.GlobalAvgPool] ([n,C,H,W] → [n,C]);
//   - fully connected layers: [Graph.Dense], [Graph.DenseReLU] (of [n,C]
//     or of a flattened [n,C,H,W]);
//   - losses: [Graph.SoftmaxCrossEntropy] for the CNNs; [Graph.MatVec] or
//     [Graph.SparseMatVec], [Graph.BinaryCrossEntropy],
//     [Graph.NonConvexReg] and [Graph.AddScalars] for the logistic
//     regression.
//
// Layers with parameters are named after their first parameter node
// ("conv1.w" → "conv1"); parameter-free layers take a name. Each layer's
// name prefixes its buffers and its ops' names, and must be unique within
// a graph.
package graphops
