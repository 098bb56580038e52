package cluster

import (
	"reflect"
	"strings"
	"testing"
)

func TestAssign(t *testing.T) {
	for _, tc := range []struct {
		ranks, nodes int
		want         []int
	}{
		{1, 3, []int{0, 0, 0}},
		{3, 3, []int{0, 1, 2}},
		{2, 5, []int{0, 0, 0, 1, 1}},
		{3, 10, []int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}},
		{4, 6, []int{0, 0, 1, 1, 2, 3}},
	} {
		rk, err := Loopback(tc.ranks)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := rk.Assign(tc.nodes)
		if err != nil || !reflect.DeepEqual(owner, tc.want) {
			t.Errorf("%d ranks, %d nodes: %v, %v; want %v", tc.ranks, tc.nodes, owner, err, tc.want)
		}
		// Every node exactly once across the ranks' Local lists, in order.
		var all []int
		for r := 0; r < tc.ranks; r++ {
			local := rk.Local(r, owner)
			if len(local) == 0 {
				t.Errorf("%d ranks, %d nodes: rank %d runs no node", tc.ranks, tc.nodes, r)
			}
			all = append(all, local...)
		}
		for i, n := range all {
			if n != i {
				t.Fatalf("%d ranks, %d nodes: Local lists %v", tc.ranks, tc.nodes, all)
			}
		}
	}
}

func TestAssignTable(t *testing.T) {
	rk, err := ParseRanks(strings.NewReader("a:1\nb:1\nnode 0 1\nnode 1 0\nnode 2 1\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	owner, err := rk.Assign(3)
	if err != nil || !reflect.DeepEqual(owner, []int{1, 0, 1}) {
		t.Fatalf("Assign = %v, %v", owner, err)
	}
	owner[0] = 0
	if rk.Owner[0] != 1 {
		t.Error("Assign returned the Ranks' own table")
	}
	if got := rk.Local(1, []int{1, 0, 1}); !reflect.DeepEqual(got, []int{0, 2}) {
		t.Errorf("Local(1) = %v", got)
	}
	if got := rk.Local(5, []int{1, 0, 1}); len(got) != 0 {
		t.Errorf("Local(5) = %v", got)
	}
}

func TestAssignErrors(t *testing.T) {
	table, err := ParseRanks(strings.NewReader("a:1\nb:1\nnode 0 1\nnode 1 0\n"), "t.txt")
	if err != nil {
		t.Fatal(err)
	}
	three, _ := Loopback(3)
	for _, tc := range []struct {
		name  string
		rk    *Ranks
		nodes int
		want  string
	}{
		{"too few nodes", three, 2, "2 nodes for 3 ranks (loopback): every rank needs at least one node"},
		{"no nodes", three, 0, "0 nodes for 3 ranks"},
		{"negative", three, -1, "-1 nodes"},
		{"table too short", table, 3, "t.txt lists 2 nodes in its node lines, but the run has 3"},
		{"table too long", table, 1, "t.txt lists 2 nodes in its node lines, but the run has 1"},
		{"bad table", &Ranks{Name: "x", Addrs: []string{"a:1"}, Owner: []int{1}}, 1, "x: node 0 on rank 1, but there are 1 ranks"},
		{"no ranks", &Ranks{Name: "x"}, 1, "x: no ranks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner, err := tc.rk.Assign(tc.nodes)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Assign(%d) = %v, %v; want %q", tc.nodes, owner, err, tc.want)
			}
		})
	}
}
