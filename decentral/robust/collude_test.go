package robust

import (
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// TestOmniscientColluder: an omniscient attack reads no vector of a
// colluder's neighbourhood: placing Byzantine node 1 alone on a rank with
// node 0 elsewhere is refused only for the honest nodes it lies to.
func TestOmniscientColluder(t *testing.T) {
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Complete(4)))
	byz := []bool{true, true, false, false}
	here := func(i int) bool { return i != 0 } // node 0 runs elsewhere
	if err := omniscientReach(mx, byz, Attack{Name: AttackIPM}, 1, here); err != nil {
		t.Errorf("Byzantine node 1 with its colluder elsewhere: %v", err)
	}
}
