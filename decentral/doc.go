// Package decentral runs decentralized optimizers — DSGD, D², GNSD, D-GET,
// GT-STORM, CHOCO-SGD, DSGDm and quasi-global momentum — over m nodes on a
// communication graph that may change per round.
//
// The package holds every node's parameters as one flat m × p float32 slab,
// mixes them through a sparse doubly stochastic matrix W over the graph's
// neighbour lists (O(|E|·p) per round), and asks a gradient [Oracle] for
// stochastic gradients on minibatches ([Batch]) drawn by a [BatchSource]. It
// knows nothing about models or datasets: a node's loss is reached only
// through those interfaces. An Oracle that also implements [PairGrader]
// lets GT-STORM share a batch's loading between its two gradients.
//
// A run is: build a graph and its mixing matrix W with package
// [github.com/gtstorm/gtstorm/decentral/graph] (graph.Generate or a
// generator such as graph.Ring, then graph.NewMixing), then an [Optimizer]
// with [New] from a [Config]; call [Optimizer.Init] once and
// [Optimizer.Step] once per communication round, and measure with
// [Optimizer.Mean], [Optimizer.ConsensusError] and [Optimizer.GradNormSq].
// [Optimizer.State] and [Optimizer.Restore] save and resume a run bit for
// bit (package [github.com/gtstorm/gtstorm/weights] writes the [Snapshot]
// to disk). The package example runs DSGD on four nodes of a ring.
//
// This package holds the driver and the methods; two packages beside it
// hold the other ideas of a run:
//
//   - package graph: graphs, their generators and edge lists, the mixing
//     matrices W, their spectra (λ) and the time-varying topologies that
//     give each round's W_t (graph.Topology; graph.Static for a fixed
//     graph), which the optimizer asks for every round;
//   - package [github.com/gtstorm/gtstorm/decentral/robust]: Byzantine
//     nodes, their attacks and the robust aggregation rules. They plug in
//     through two hooks of this package: a [Mixer] (Config.Mixer), which
//     [RoundContext.Mix] calls in place of plain gossip, and an exchange
//     decorator (Config.Exchange) that tells the lies through a
//     [ScatterExchange] and reads the round's vectors through a
//     [ViewingExchange]. Config.Byzantine names the nodes the measures
//     leave out.
//
// The driver's pieces, one idea per file:
//
//   - [Optimizer] (optimizer.go, setup.go, parallel.go, context.go): the
//     round, the workers, and the [RoundContext] a method sees;
//   - [Exchange] (exchange.go): how a node's vectors reach its neighbours
//     each round ([MemExchange] in memory; package cluster/transport's over
//     the network), and the [Mixer] (mixer.go) that combines them;
//   - [Schedule] (schedule.go): the step sizes η_t and GT-STORM's β_t;
//   - the measures (measures.go) and counters ([Counters], counters.go) of
//     samples, rounds, bytes and state floats as SPEC §6 defines them;
//   - DSGD, D², GNSD, D-GET, GT-STORM, CHOCO-SGD, DSGDm and quasi-global
//     momentum, one self-contained file each (dsgd.go, d2.go, gnsd.go,
//     dget.go, gtstorm.go, choco.go, dsgdm.go, qgdsgdm.go), each a [Method];
//   - compressed messages (messages.go): the messages of a method whose
//     [Description] names a compressor (CHOCO's Compress knob) go through a
//     compressor of package [github.com/gtstorm/gtstorm/decentral/compress],
//     and count their encoded bytes;
//   - pipelined rounds (pipeline.go) over a [PipelinedExchange];
//   - the simulated clock (netclock.go): a [Network] of latency, bandwidth
//     and per-node compute turns rounds into [Optimizer.SimSeconds];
//   - the memory a run takes, from its sizes alone (memory.go).
//
// # Methods as configured values
//
// A [Method] is a value that carries its own knobs, such as
// DGETMethod{Period: 10, BigBatch: 500} or CHOCOMethod{Gamma: 0.1,
// Compress: "topk:0.01"}; Config.Method holds it (or Config.Algorithm names
// a registered method with its default knobs). The method describes itself
// once, with a [Description] the optimizer reads in New: its name, its
// state slabs (x first; each a double-buffered m × p slab that a
// [Snapshot] saves under its name), which slabs a node shares each round,
// its tracked direction, its state floats per parameter, its default
// step-size exponent, whether it weighs the mixed direction with β_t,
// whether it needs a static graph and its message compressor. The step
// sizes and β (η_0, ρ, the cube-root and constant-step switches) are the
// [Schedule]'s: the driver computes them, reports them and saves them in a
// Snapshot, so they stay in Config.
//
// Init and Step work on one node through the [RoundContext]: its current
// and next rows of each slab, Mix with W_t's row over what the neighbours
// shared, Batch, Grad, GradPair and FullGrad (counted), η_t, β_{t+1}, the
// worker's scratch and SetLoss. Three small optional interfaces add
// behaviour only some methods have: [Preparer] (work before the round's
// messages are sent: CHOCO's local step and compression), [MixingChecker]
// (D² refuses a W with λ_min(W) ≤ −1/3) and [Validator] (knobs out of
// range).
//
// # Adding an algorithm or a knob
//
// An algorithm is one new file plus one line in the registry (registry.go).
// The file defines its name constant and a type implementing [Method]:
// Describe, Init, Step and Samples, the knobs its registry line declares
// and the constructor it names, which makes the type from the knobs'
// typed values ([Knobs], by flag name; an absent knob is 0, the default).
// The optimizer, the snapshot format and
// package weights need no change: a new algorithm's checkpoints hold its
// named slabs. dsgd.go is the smallest example; d2.go (one shared bracket
// vector and a MixingChecker), dget.go (a constant step and a large-batch
// gradient every Period rounds through RoundContext.FullGrad and a
// [FullBatcher]) and choco.go (a Prepare that takes the local step and
// compresses the message, and a Step that applies the neighbours'
// messages) were added exactly so.
//
// A knob is a field of its method's type and a [Knob] in its registry line
// (IntKnob, FloatKnob, BoolKnob or StringKnob: its flag name, usage,
// default and check), read in the constructor by its name (k.Int("period"))
// and checked once, by the Knob: [NewMethod] and the method's Validate run
// the check, and train's settings table makes the knob's flag, its
// validation and its place in config.json (under "method") from the
// declaration. Nothing else changes: train hands the run's knobs to
// [NewMethod], and no knob passes through Config or the RoundContext. What
// the driver or a run must know of a method is a property of the method
// ([Description], [ShareBatcher], [DirectedCautioner]), never its name.
package decentral
