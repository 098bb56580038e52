package graph

import "testing"

// mustGraph returns g, panicking on a generator error: for fixed inputs
// that cannot fail unless the generator is broken.
func mustGraph(g *Graph, err error) *Graph {
	if err != nil {
		panic(err)
	}
	return g
}

// mustMixing builds a mixing matrix or fails the test.
func mustMixing(t testing.TB, kind string, g *Graph) *Mixing {
	t.Helper()
	mx, err := NewMixing(kind, g)
	if err != nil {
		t.Fatal(err)
	}
	return mx
}
