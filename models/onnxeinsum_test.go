package models

import "testing"

// TestEinsumForm checks which equations the import reads as an
// attention's scores or output.
func TestEinsumForm(t *testing.T) {
	for _, c := range []struct {
		eq   string
		want int
	}{
		{"bhid,bhjd->bhij", einsumScores},
		{"b h i d, b h j d -> b h i j", einsumScores},
		{"...id,...jd->...ij", einsumScores},
		{"nhqd,nhkd->nhqk", einsumScores},
		{"bhij,bhjd->bhid", einsumProduct},
		{"...ij,...jd->...id", einsumProduct},
		{"bhid,bhjd->bhji", einsumOther},   // the scores transposed
		{"bhid,bhdj->bhij", einsumProduct}, // q·kᵀ of k transposed
		{"bhij,bhjd->bhjd", einsumOther},   // not a product
		{"bhid,bhid->bhii", einsumOther},   // i twice
		{"bbid,bbjd->bbij", einsumOther},   // a leading axis named twice
		{"bhid,bhjd->bij", einsumOther},    // a head summed
		{"bhid,hbjd->bhij", einsumOther},   // leading axes differ
		{"bhjd,bhid->bhij", einsumOther},   // operands swapped
		{"bhij,bhjd", einsumOther},         // no output
		{"bhbd,bhjd->bhbj", einsumOther},   // i is a leading axis
		{"bhij,bhjh->bhih", einsumOther},   // the output's feature a leading axis
		{"bid,bjd->bij", einsumOther},      // 3-dimensional
		{"bhid,bhjd,bhjd->bhij", einsumOther},
	} {
		if got := einsumForm(c.eq); got != c.want {
			t.Errorf("einsumForm(%q) = %d, want %d", c.eq, got, c.want)
		}
	}
}
