package models

import "strings"

// Einsum, as an attention may spell its two products with it (lucidrains'
// earlier ViT): the equations the import reads as MatMul's.

// The products of an attention that an Einsum's equation may spell.
const (
	einsumOther   = iota
	einsumScores  // "bhid,bhjd->bhij": q·kᵀ
	einsumProduct // "bhij,bhjd->bhid": a·b, as MatMul (softmax·v)
)

// einsumForm returns which product of an attention the Einsum equation eq
// spells over 4-dimensional [N,h,T,D/h] operands, their two leading axes
// named alike in each (or "..."), or einsumOther.
func einsumForm(eq string) int {
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, out, ok := strings.Cut(eq, "->")
	a, b, ok2 := strings.Cut(lhs, ",")
	if !ok || !ok2 || len(a) < 4 || len(a) != len(b) || len(a) != len(out) {
		return einsumOther
	}
	pre := a[:len(a)-2]
	if b[:len(b)-2] != pre || out[:len(out)-2] != pre || !(pre == "..." || len(pre) == 2 && pre[0] != pre[1]) {
		return einsumOther
	}
	x, y, z := a[len(a)-2:], b[len(b)-2:], out[len(out)-2:]
	distinct := func(s string) bool {
		return s[0] != s[1] && s[1] != s[2] && s[0] != s[2] && !strings.ContainsAny(pre, s)
	}
	switch {
	case x[1] == y[1] && z == x[:1]+y[:1] && distinct(x+y[:1]): // P·id, P·jd → P·ij
		return einsumScores
	case x[1] == y[0] && z == x[:1]+y[1:] && distinct(x+y[1:]): // P·ij, P·je → P·ie
		return einsumProduct
	}
	return einsumOther
}
