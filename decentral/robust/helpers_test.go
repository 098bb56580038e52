package robust

import (
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// mustGraph returns g, panicking on a generator error.
func mustGraph(g *graph.Graph, err error) *graph.Graph {
	if err != nil {
		panic(err)
	}
	return g
}

// mustMixing builds a mixing matrix or fails the test.
func mustMixing(t testing.TB, kind string, g *graph.Graph) *graph.Mixing {
	t.Helper()
	mx, err := graph.NewMixing(kind, g)
	if err != nil {
		t.Fatal(err)
	}
	return mx
}
