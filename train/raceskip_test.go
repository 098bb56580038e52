package train

import "testing"

// skipVariantUnderRace skips t under the race detector, which slows the
// numerics 5 to 10 times and finds nothing in them: t is one of several
// variants of a run that differ only in single-goroutine numerics (an
// algorithm's update, a schedule, an attack), and kept, which does run
// under it, drives the same goroutines (node workers, checkpoints,
// interruption, resume). The plain go test ./... runs every variant.
func skipVariantUnderRace(t *testing.T, kept string) {
	t.Helper()
	if raceEnabled {
		t.Skipf("under -race only %s runs: the other variants differ from it in single-goroutine numerics, which the plain go test ./... checks", kept)
	}
}

// raceSkipsVariant reports whether the race detector is on, so that a loop
// over variants of a run leaves variant to the plain run because kept runs
// (see skipVariantUnderRace); it logs the skip.
func raceSkipsVariant(t *testing.T, variant, kept string) bool {
	t.Helper()
	if raceEnabled {
		t.Logf("skipped under -race: %s, which differs from what runs (%s) only in single-goroutine numerics; the plain go test ./... checks it", variant, kept)
	}
	return raceEnabled
}
