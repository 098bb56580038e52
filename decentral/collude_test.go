package decentral

import "testing"

// TestByzantineCollude: Byzantine nodes tell each other the truth. On K4
// with nodes 0 and 1 Byzantine under signflip:1, node 1 mixes the honest
// vectors of all three neighbours, while honest node 2 gets the flipped
// vectors of both.
func TestByzantineCollude(t *testing.T) {
	pr := newLS(4, 2, 4, 0, 1)
	mx := mustMixing(t, MixLaplacian, mustGraph(Complete(4)))
	xs := [][]float32{{1, 2}, {3, 0}, {2, 0}, {4, 6}}
	a, _ := ParseAttack("signflip:1")
	o, _ := lsRun(t, Config{Algorithm: DSGD, Eta0: 0.1, Byzantine: []int{0, 1}, Attack: a}, mx, pr, 1, 1)
	got := mixedRows(t, o, xs)
	// W: 1/2 on the diagonal, 1/6 elsewhere.
	for _, c := range []struct {
		node int
		want []float32
	}{
		{1, []float32{(3.0/2 + (1+2+4)/6.0), (0 + (2+0+6)/6.0)}},     // honest mix
		{2, []float32{(2.0/2 + (-1-3+4)/6.0), (0 + (-2-0+6)/6.0)}},   // both lie
		{0, []float32{(1.0/2 + (3+2+4)/6.0), (2.0/2 + (0+0+6)/6.0)}}, // honest mix
	} {
		if !near(got[c.node], c.want, 1e-6) {
			t.Errorf("node %d mixes %v, want %v", c.node, got[c.node], c.want)
		}
	}
	// An omniscient attack reads no vector of a colluder's neighbourhood:
	// placing Byzantine node 1 alone on a rank with node 0 elsewhere is
	// refused only for the honest nodes it lies to.
	byz := []bool{true, true, false, false}
	here := func(i int) bool { return i != 0 } // node 0 runs elsewhere
	if err := omniscientReach(mx, byz, Attack{Name: AttackIPM}, 1, here); err != nil {
		t.Errorf("Byzantine node 1 with its colluder elsewhere: %v", err)
	}
}
