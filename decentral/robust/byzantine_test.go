package robust

import (
	"slices"
	"testing"
)

// TestChooseByzantine: the draw is the seed's, distinct, sorted, and B < m.
func TestChooseByzantine(t *testing.T) {
	a, err := ChooseByzantine(20, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ChooseByzantine(20, 3, 7)
	if !slices.Equal(a, b) || len(a) != 3 || !slices.IsSorted(a) || a[0] == a[1] || a[1] == a[2] {
		t.Errorf("seed 7: %v then %v, want the same 3 distinct sorted nodes", a, b)
	}
	differ := false
	for seed := range uint64(10) {
		c, _ := ChooseByzantine(20, 3, seed)
		differ = differ || !slices.Equal(a, c)
	}
	if !differ {
		t.Error("every seed drew the same nodes")
	}
	for _, bad := range []int{-1, 20, 21} {
		if _, err := ChooseByzantine(20, bad, 1); err == nil {
			t.Errorf("B = %d of 20: no error", bad)
		}
	}
}

// TestParseByzantine covers counts and lists, good and bad.
func TestParseByzantine(t *testing.T) {
	for spec, want := range map[string][]int{"": nil, "0": nil, "7,3": {3, 7}, "5,": {5}, "0, 9": {0, 9}} {
		got, err := ParseByzantine(spec, 10, 1)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v, %v; want %v", spec, got, err, want)
		}
	}
	if got, _ := ParseByzantine("2", 10, 1); len(got) != 2 {
		t.Errorf("2: %v, want two nodes", got)
	}
	for _, spec := range []string{"-1", "10", "x", "3,3", "1,10", "-1,", "0,1,2,3,4,5,6,7,8,9"} {
		if got, err := ParseByzantine(spec, 10, 1); err == nil {
			t.Errorf("%q: %v and no error", spec, got)
		}
	}
}

// TestParseAttack covers the flag forms, good and bad.
func TestParseAttack(t *testing.T) {
	for spec, want := range map[string]string{"": "", "signflip": "signflip", "signflip:2": "signflip:2",
		"gauss:0.5": "gauss:0.5", "alie": "alie", "alie:1.5": "alie:1.5", "ipm:0.1": "ipm:0.1",
		"dissensus:1": "dissensus:1", "labelflip": "labelflip"} {
		a, err := ParseAttack(spec)
		if err != nil || a.String() != want {
			t.Errorf("%q: %v, %v; want %s", spec, a, err, want)
		}
	}
	for _, spec := range []string{"flip", "signflip:-1", "gauss:x", "ipm:inf", "alie:NaN", "labelflip:1", "signflip:"} {
		if _, err := ParseAttack(spec); err == nil {
			t.Errorf("%q: no error", spec)
		}
	}
}
