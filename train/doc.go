// Package train is gtstorm's run engine: one decentralized training run
// from a Config (data → model → topology → optimizer → round loop), with its
// metrics, curve and resumable checkpoints written into an output folder
// it locks; its resume, and its reuse by a grid ([RunOrReuse]); the ranks
// of a run over several processes ([RunRank], [ResumeRank]) and a rank's
// life around its run ([RunRankJob]); timed benchmark rounds ([Bench]);
// and the memory estimate that refuses a run too large before it starts.
//
// All four runs are plans that one function executes, each in its role
// (one process, or one rank): engine.go is where a newcomer starts.
//
// Grids of runs and their tables and plots are the experiment package's
// (train/experiment); the use of a trained model file (predict, eval, ONNX
// export) is modelfile's (train/modelfile); the figures are drawn by
// train/curves.
//
// It is where the lower packages meet: [data] draws the batches, [models]
// evaluates gradients, [decentral] mixes and steps, [weights] stores the
// state.
//
// Every run setting is one entry of the settings table (settings.go): its
// flag name, help, validation and whether `sweep --vary` may change it.
// [Config.Flags] registers the flags, [Config.Validate] checks them and
// [Config.Set] sets one for a sweep, all from that table, so adding a
// setting is one table entry plus its Config field and its use. The
// datasets are one table too (datasets.go): each names its model and its
// headline measure.
//
// Errors are typed where the user can act on them ([ConfigError],
// [RunExistsError], [InterruptedError], [MemoryError], …); the command line
// adds the advice.
//
// [data]: https://pkg.go.dev/github.com/gtstorm/gtstorm/data
// [models]: https://pkg.go.dev/github.com/gtstorm/gtstorm/models
// [decentral]: https://pkg.go.dev/github.com/gtstorm/gtstorm/decentral
// [weights]: https://pkg.go.dev/github.com/gtstorm/gtstorm/weights
package train
