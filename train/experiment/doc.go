// Package experiment runs grids of training runs and reports on them: the
// cells of `gtstorm compare` (algorithms × partitions, [CompareCells]) and
// `gtstorm sweep` (settings varied, [VaryCells]), each under several
// seeds: every combination of repeated --vary settings ([VaryCells]:
// a Byzantine study's attacks × rules × B, with one clean cell per rule),
// on simulated networks ([NetworkCells]) or at an equal budget of
// samples per node ([ParseBudget], [BudgetCells]); [RunGrid] runs them in
// one output folder it owns (grid.json), reusing or resuming the runs an
// earlier attempt left there; [WriteReport] writes the grid's tables
// (table.md: mean ± std over seeds, time to target, and for a Byzantine
// study the honest accuracy and loss as attacks × rules), results.csv and
// curves.png.
//
// Each run is [train]'s: this package only chooses the configurations,
// asks train to run, resume or reuse them ([train.RunOrReuse]) and reads
// back their summaries and metrics.
//
// [train]: https://pkg.go.dev/github.com/gtstorm/gtstorm/train
package experiment
