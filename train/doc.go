// Package train runs gtstorm's experiments: one decentralized training run
// from a Config (data → model → topology → optimizer → round loop), with its
// metrics, plots and resumable checkpoints written into an output folder;
// grids of runs over algorithms, partitions, seeds or one varied setting;
// and timed benchmark rounds.
//
// It is where the lower packages meet: data draws the batches, models
// evaluates gradients, decentral mixes and steps, weights stores the state.
package train
