package decentral

import (
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

func TestMemExchange(t *testing.T) {
	g := mustGraph(graph.Star(4))
	ex := NewMemExchange(g)
	a, b := []float32{1, 2, 3}, []float32{4, 5, 6}
	n, err := ex.Send(0, g.Neighbors(0), [][]float32{a, b})
	if err != nil || n != 6*4*3 {
		t.Fatalf("centre sent %d bytes (%v), want 6 floats × 4 bytes × 3 neighbours = 72", n, err)
	}
	n, _ = ex.Send(2, g.Neighbors(2), [][]float32{b})
	if n != 3*4*1 {
		t.Fatalf("leaf sent %d bytes, want 12", n)
	}
	if got := ex.Recv(1, 0); len(got) != 2 || &got[1][0] != &b[0] {
		t.Fatalf("Recv(1, 0) = %v", got)
	}
	if _, err := ex.Send(4, nil, nil); err == nil {
		t.Error("Send from node 4 of 4 accepted")
	}
}
