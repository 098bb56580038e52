// Package decentral runs decentralized optimizers — DSGD, D², GNSD, D-GET,
// GT-STORM and CHOCO-SGD — over m simulated nodes on a communication graph
// that may change per round.
//
// The package holds every node's parameters as one flat m × p float32 slab,
// mixes them through a sparse doubly stochastic matrix W over the graph's
// neighbour lists (O(|E|·p) per round), and asks a gradient [Oracle] for
// stochastic gradients on minibatches ([Batch]) drawn by a [BatchSource]. It
// knows nothing about models or datasets: a node's loss is reached only
// through those interfaces. An Oracle that also implements [PairGrader]
// lets GT-STORM share a batch's loading between its two gradients.
//
// A run is: build a [Graph] ([NewTopology] or a generator such as [Ring]),
// its [Mixing] ([NewMixing]), then an [Optimizer] with [New] from a [Config];
// call [Optimizer.Init] once and [Optimizer.Step] once per communication
// round, and measure with [Optimizer.Mean], [Optimizer.ConsensusError] and
// [Optimizer.GradNormSq]. [Optimizer.State] and [Optimizer.Restore] save and
// resume a run bit for bit (package [github.com/gtstorm/gtstorm/weights]
// writes the [Snapshot] to disk). The package example runs DSGD on four nodes
// of a ring.
//
// The pieces, one idea per file:
//
//   - [Graph] and its generators ([ErdosRenyi], [Ring], [Path], [Complete],
//     [Star], [Torus], [ReadEdgeList]), [NewTopology] to pick one by name;
//   - [Mixing]: W = I − 2/(3 λ_max(L)) L ([LaplacianMixing]) or
//     Metropolis–Hastings ([MetropolisHastings]), with
//     λ = max(|λ_2|, |λ_m|) ([Mixing.Lambda]) in closed form for the
//     generators' graphs, else from a dense eigensolver for small m and
//     sparse Lanczos iteration for large m (spectrum.go);
//   - [Exchange]: how a node's vectors reach its neighbours each round
//     ([MemExchange] in memory; a network transport can replace it);
//   - [Schedule]: the step sizes η_t and GT-STORM's β_t;
//   - [Topology]: the mixing matrix W_t of each round ([Static] for a fixed
//     graph; a time-varying one returns another [Mixing] per round, and the
//     exchange delivers to round t's neighbours);
//   - DSGD, D², GNSD, D-GET, GT-STORM and CHOCO-SGD, one self-contained
//     file each (dsgd.go, d2.go, gnsd.go, dget.go, gtstorm.go, choco.go),
//     each a [Method] run by an [Optimizer] that counts samples, rounds,
//     bytes and state floats ([Counters]) as SPEC §6 defines them;
//   - compressed messages (messages.go): a [Compressing] method's messages
//     go through Config.Compress, a compressor of package
//     [github.com/gtstorm/gtstorm/decentral/compress], and count their
//     encoded bytes;
//   - the simulated clock (netclock.go): a [Network] of latency, bandwidth
//     and per-node compute turns rounds into [Optimizer.SimSeconds].
//
// # Adding an algorithm
//
// An algorithm is one new file plus one line in the registry (the methods
// list in method.go). The file defines its name constant and a type
// implementing [Method]: its name, default step-size exponent, the names of
// its state slabs (x first; the optimizer allocates each as a
// double-buffered m × p slab, saves it in a [Snapshot] under that name and
// checks it on restore), its state floats for [Counters], the vectors a node
// shares per round, and Init and Step for one node, which work only through
// the [RoundContext]: the node's current and next rows of each slab, Mix
// with W_t's row over what the neighbours shared, Batch, Grad and GradPair
// (counted), η_t, β_{t+1}, the worker's scratch and SetLoss. Optional
// interfaces add what only some algorithms have: [Tracker] (the slab
// [Optimizer.Direction] returns), [Momentum] (the β_t [Optimizer.Beta]
// reports), [Preparer] (work before the round's messages are sent),
// [Compressing] (messages through RoundContext.Compress) and [StaticOnly]
// (no time-varying W). The optimizer, the snapshot format and package weights need no
// change: a new algorithm's checkpoints hold its named slabs.
//
// D² and D-GET were added exactly so, and are the examples to copy: d2.go
// (D², one shared bracket vector and a [MixingChecker] that refuses a W with
// λ_min(W) ≤ −1/3) and dget.go (D-GET, a constant step and a large-batch
// gradient every Config.Period rounds through RoundContext.FullGrad and a
// [FullBatcher]) are one new file each, plus their line in the registry;
// so is choco.go (CHOCO-SGD: a Prepare that takes the local step and
// compresses the message, and a Step that applies the neighbours'
// messages).
package decentral
