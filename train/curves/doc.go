// Package curves draws gtstorm's figures: test accuracy and stationarity
// S(x) against rounds (or samples, or simulated seconds), one line per
// [Curve] with a ±1 std band over seeds, in two panels and a shared legend
// written as one PNG ([Plot], [PlotReport]). It knows nothing of runs:
// train makes a run's curve.png from its metrics rows (train.CurveOf), and
// the experiment package a grid's curves.png, one curve per cell.
//
// It is a package of its own, below both, so that a single run and a grid
// of runs draw with the same code.
package curves
