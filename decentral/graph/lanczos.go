package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// lanczosWant says which end of the spectrum lanczos must converge.
type lanczosWant int

const (
	wantHigh lanczosWant = 1 << iota // the largest eigenvalue
	wantLow                          // the smallest eigenvalue
	wantBoth = wantHigh | wantLow
)

// lanczos returns the extreme eigenvalues lo ≤ hi of the symmetric n × n
// operator a restricted to the complement of the all-ones vector 1, which a
// must map into itself (as W and L do, 1 being an eigenvector of both); n ≥ 2.
// It runs thick-restart Lanczos with full reorthogonalisation (two passes of
// classical Gram–Schmidt), 1 deflated, from a fixed pseudo-random start,
// until the Ritz pairs of the wanted ends have residuals ‖A y − θ y‖ below
// lanczosTol·max(1, |θ|), which bounds their error; an end not wanted is
// only the extreme Ritz value, an inner bound. It fails after
// lanczosMaxProducts products with A.
func lanczos(n int, a func(dst, src []float64), want lanczosWant) (lo, hi float64, err error) {
	return lanczosN(n, a, want, lanczosMaxProducts)
}

// lanczosBasis returns the number of basis vectors lanczos keeps for an
// operator of order n.
func lanczosBasis(n int) int {
	return min(n-1, lanczosMaxBasis, max(lanczosMinBasis, lanczosBasisBytes/(8*n)))
}

// lanczosN is lanczos failing after maxProducts products with A.
func lanczosN(n int, a func(dst, src []float64), want lanczosWant, maxProducts int) (lo, hi float64, err error) {
	if n < 2 {
		return 0, 0, fmt.Errorf("lanczos: order %d, want at least 2", n)
	}
	lz := newLanczosRun(n, a)
	if err := lz.newDirection(0); err != nil {
		return 0, 0, err
	}
	for j := 0; ; j = lz.keep {
		beta, err := lz.extend(j)
		if err != nil {
			return 0, 0, err
		}
		if lz.nb == n-1 {
			beta = 0 // the basis spans the complement of 1: the Ritz values are exact
		}
		if err := lz.factorize(); err != nil {
			return 0, 0, err
		}
		lo, hi = lz.ritz[0], lz.ritz[lz.nb-1]
		tol := lanczosTol * max(1, math.Abs(lo), math.Abs(hi))
		res := lz.residual(beta, want)
		if res <= tol {
			return lo, hi, nil
		}
		if lz.products >= maxProducts {
			return 0, 0, fmt.Errorf("lanczos: no convergence in %d matrix-vector products "+
				"(residual %.2g, want %.2g): the spectral gap is too small", lz.products, res, tol)
		}
		if err := lz.restart(beta, want); err != nil {
			return 0, 0, err
		}
	}
}

// lanczosRun is the state of one thick-restart Lanczos run on an n × n
// operator a with a basis of nb vectors, the rows of v.
type lanczosRun struct {
	n, nb, keep int
	a           func(dst, src []float64)
	rng         *rand.Rand
	v           []float64 // nb × n basis, row-major
	h           []float64 // Vᵀ A V, nb × nb row-major
	w           []float64 // A v_j
	coef, corr  []float64 // Gram–Schmidt coefficients
	products    int       // products with a so far
	anorm       float64   // largest ‖A v_j‖ seen, a lower bound of ‖A‖

	hcopy []float64 // H for symEigen, which destroys it
	ritz  []float64 // Ritz values θ, increasing
	vecs  []float64 // Ritz vectors y of H, by column, nb × nb row-major
	sel   []int     // the Ritz pairs a restart keeps
	ysel  []float64 // the kept Ritz vectors as rows, keep × nb
	tmp   []float64 // keep × lanczosChunk
}

func newLanczosRun(n int, a func(dst, src []float64)) *lanczosRun {
	nb := lanczosBasis(n)
	keep := nb / 2
	return &lanczosRun{
		n: n, nb: nb, keep: keep, a: a,
		rng:   rand.New(rand.NewPCG(uint64(n), lanczosStream)),
		v:     make([]float64, nb*n),
		h:     make([]float64, nb*nb),
		w:     make([]float64, n),
		coef:  make([]float64, nb),
		corr:  make([]float64, nb),
		hcopy: make([]float64, nb*nb),
		ritz:  make([]float64, nb),
		vecs:  make([]float64, nb*nb),
		sel:   make([]int, 0, keep),
		ysel:  make([]float64, keep*nb),
		tmp:   make([]float64, keep*lanczosChunk),
	}
}

func (lz *lanczosRun) row(i int) []float64 { return lz.v[i*lz.n : (i+1)*lz.n] }

// orthogonalize makes x orthogonal to 1 and to the first j basis vectors,
// leaves the coefficients removed in coef[:j] and returns the norm of what
// is left.
func (lz *lanczosRun) orthogonalize(x []float64, j int) float64 {
	n := lz.n
	clear(lz.coef[:j])
	for range 2 {
		mean := sum(x) / float64(n)
		for p := range x {
			x[p] -= mean
		}
		if j == 0 {
			continue
		}
		c := lz.corr[:j]
		lz.dotRows(c, x)
		lz.subtractRows(x, c)
		for i, ci := range c {
			lz.coef[i] += ci
		}
	}
	return math.Sqrt(dot(x, x))
}

// dotRows sets c_i = v_i · x for the first len(c) basis vectors, each a
// sum in order of p, four rows a pass (one pass over x instead of four).
func (lz *lanczosRun) dotRows(c, x []float64) {
	i := 0
	for ; i+4 <= len(c); i += 4 {
		v0, v1, v2, v3 := lz.row(i)[:len(x)], lz.row(i + 1)[:len(x)], lz.row(i + 2)[:len(x)], lz.row(i + 3)[:len(x)]
		var s0, s1, s2, s3 float64
		for p, xp := range x {
			s0 += float64(v0[p] * xp)
			s1 += float64(v1[p] * xp)
			s2 += float64(v2[p] * xp)
			s3 += float64(v3[p] * xp)
		}
		c[i], c[i+1], c[i+2], c[i+3] = s0, s1, s2, s3
	}
	for ; i < len(c); i++ {
		s := 0.0
		for p, v := range lz.row(i)[:len(x)] {
			s += float64(v * x[p])
		}
		c[i] = s
	}
}

// subtractRows sets x −= Σ_i c_i v_i over the first len(c) basis vectors,
// each x_p taking its terms in order of i, four rows a pass (one pass
// over x instead of four).
func (lz *lanczosRun) subtractRows(x, c []float64) {
	i := 0
	for ; i+4 <= len(c); i += 4 {
		v0, v1, v2, v3 := lz.row(i)[:len(x)], lz.row(i + 1)[:len(x)], lz.row(i + 2)[:len(x)], lz.row(i + 3)[:len(x)]
		c0, c1, c2, c3 := c[i], c[i+1], c[i+2], c[i+3]
		for p := range x {
			x[p] = x[p] - float64(v0[p]*c0) - float64(v1[p]*c1) - float64(v2[p]*c2) - float64(v3[p]*c3)
		}
	}
	for ; i < len(c); i++ {
		for p, v := range lz.row(i)[:len(x)] {
			x[p] -= float64(v * c[i])
		}
	}
}

// sum returns Σ x_p in four interleaved partial sums (p mod 4), added as
// (s0 + s1) + (s2 + s3): one fixed order, so the same bits everywhere, and
// four independent chains.
func sum(x []float64) float64 {
	var s0, s1, s2, s3 float64
	p := 0
	for ; p+4 <= len(x); p += 4 {
		s0 += x[p]
		s1 += x[p+1]
		s2 += x[p+2]
		s3 += x[p+3]
	}
	for ; p < len(x); p++ {
		s0 += x[p]
	}
	return (s0 + s1) + (s2 + s3)
}

// scaleTo sets dst = a·x (dst may be x).
func scaleTo(dst []float64, a float64, x []float64) {
	for p, v := range x {
		dst[p] = a * v
	}
}

// dot returns Σ x_p y_p in sum's order, unfused.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	p := 0
	for ; p+4 <= len(x); p += 4 {
		s0 += float64(x[p] * y[p])
		s1 += float64(x[p+1] * y[p+1])
		s2 += float64(x[p+2] * y[p+2])
		s3 += float64(x[p+3] * y[p+3])
	}
	for ; p < len(x); p++ {
		s0 += float64(x[p] * y[p])
	}
	return (s0 + s1) + (s2 + s3)
}

// newDirection makes basis vector j a random unit vector orthogonal to 1
// and the vectors before it.
func (lz *lanczosRun) newDirection(j int) error {
	x := lz.row(j)
	for range 3 {
		for p := range x {
			x[p] = detmath.NormFloat64(lz.rng)
		}
		if nrm := lz.orthogonalize(x, j); nrm > 1e-8*math.Sqrt(float64(lz.n)) {
			scaleTo(x, 1/nrm, x)
			return nil
		}
	}
	return fmt.Errorf("lanczos: no direction orthogonal to %d vectors", j)
}

// next makes w/beta basis vector j, or a new direction when w vanished.
func (lz *lanczosRun) next(j int, beta float64) error {
	if beta > 1e-12*lz.anorm {
		scaleTo(lz.row(j), 1/beta, lz.w)
		return nil
	}
	return lz.newDirection(j)
}

// extend grows the basis from j to nb vectors: A V = V H + f e_nbᵀ. It
// returns ‖f‖.
func (lz *lanczosRun) extend(j int) (beta float64, err error) {
	nb := lz.nb
	for ; j < nb; j++ {
		lz.a(lz.w, lz.row(j))
		lz.products++
		lz.anorm = max(lz.anorm, math.Sqrt(dot(lz.w, lz.w)))
		beta = lz.orthogonalize(lz.w, j+1)
		for i := 0; i <= j; i++ {
			lz.h[i*nb+j], lz.h[j*nb+i] = lz.coef[i], lz.coef[i]
		}
		if j+1 == nb {
			break
		}
		if err := lz.next(j+1, beta); err != nil {
			return 0, err
		}
	}
	return beta, nil
}

// factorize computes the Ritz values and vectors of H.
func (lz *lanczosRun) factorize() error {
	copy(lz.hcopy, lz.h)
	if err := symEigen(lz.hcopy, lz.nb, lz.ritz, lz.vecs); err != nil {
		return fmt.Errorf("lanczos: eigendecomposition of the projection: %w", err)
	}
	return nil
}

// residual is the largest residual beta·|y_k[nb−1]| of the wanted extreme
// Ritz pairs.
func (lz *lanczosRun) residual(beta float64, want lanczosWant) float64 {
	res := 0.0
	if want&wantLow != 0 {
		res = max(res, beta*math.Abs(lz.vecs[(lz.nb-1)*lz.nb]))
	}
	if want&wantHigh != 0 {
		res = max(res, beta*math.Abs(lz.vecs[(lz.nb-1)*lz.nb+lz.nb-1]))
	}
	return res
}

// restart keeps the Ritz vectors at the wanted end(s), half the basis, and
// goes on from the residual direction f.
func (lz *lanczosRun) restart(beta float64, want lanczosWant) error {
	n, nb, keep := lz.n, lz.nb, lz.keep
	lz.sel = lz.sel[:0]
	switch want {
	case wantLow:
		for k := 0; k < keep; k++ {
			lz.sel = append(lz.sel, k)
		}
	case wantHigh:
		for k := nb - keep; k < nb; k++ {
			lz.sel = append(lz.sel, k)
		}
	default:
		for k := 0; k < keep/2; k++ {
			lz.sel = append(lz.sel, k)
		}
		for k := nb - (keep - keep/2); k < nb; k++ {
			lz.sel = append(lz.sel, k)
		}
	}
	for s, k := range lz.sel {
		for i := 0; i < nb; i++ {
			lz.ysel[s*nb+i] = lz.vecs[i*nb+k]
		}
	}
	// V[:keep] = Ysel V, a column block at a time, in place.
	for start := 0; start < n; start += lanczosChunk {
		width := min(lanczosChunk, n-start)
		for s := range lz.sel {
			out := lz.tmp[s*lanczosChunk : s*lanczosChunk+width]
			clear(out)
			for i, y := range lz.ysel[s*nb : (s+1)*nb] {
				for p, v := range lz.v[i*n+start : i*n+start+width] {
					out[p] += float64(y * v)
				}
			}
		}
		for s := range lz.sel {
			copy(lz.v[s*n+start:s*n+start+width], lz.tmp[s*lanczosChunk:s*lanczosChunk+width])
		}
	}
	clear(lz.h)
	for s, k := range lz.sel {
		lz.h[s*nb+s] = lz.ritz[k]
	}
	return lz.next(keep, beta)
}

// lanczosChunk is the number of coordinates a thick restart rotates at once.
const lanczosChunk = 512
