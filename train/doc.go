// Package train runs gtstorm's experiments: one decentralized training run
// from a Config (data → model → topology → optimizer → round loop), with its
// metrics, plots and resumable checkpoints written into an output folder;
// grids of runs over algorithms, partitions, seeds or one varied setting;
// timed benchmark rounds; and the use of a trained model ([Predict],
// [ExportONNX]).
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
