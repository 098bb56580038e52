// Package graph holds the communication graphs of a decentralized run and
// their mixing matrices: who talks to whom, with what weights, and how fast
// one round of mixing contracts the disagreement between nodes.
//
//   - [Graph] (graph.go), built by [New] or a generator ([ErdosRenyi],
//     [Ring], [Path], [Complete], [Star], [Torus]; [Generate] picks one by
//     name, generators.go) or read from an edge-list file ([ReadEdgeList],
//     edgelist.go);
//   - [Mixing] (mixing.go): a sparse doubly stochastic W over a graph's
//     edges, W = I − 2/(3 λ_max(L)) L ([LaplacianMixing]) or
//     Metropolis–Hastings ([MetropolisHastings]), or given row by row
//     ([NewMixingRows]);
//   - the spectrum: λ = max(|λ_2|, |λ_m|) ([Mixing.Lambda]) in closed form
//     for the generators' graphs, else from a dense eigensolver for small m
//     (symeig.go) and sparse Lanczos iteration for large m (spectrum.go,
//     lanczos.go), and λ_min(W) ([Mixing.LambdaMin], bounds.go);
//   - [Topology] (topology.go): the W_t of each round, [Static] for a fixed
//     graph, or a time-varying one ([OnePeerExp], [LinkDrop],
//     timevarying.go);
//   - the memory a graph and its W take, from the sizes alone
//     ([ExpectedEdges], [Bytes], [MixingBytes], memory.go).
//
// Package decentral runs the optimizer over a Topology; this package knows
// nothing of optimizers.
package graph
