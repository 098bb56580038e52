package decentral

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

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
	v           blas64.General // nb × n basis
	h           []float64      // Vᵀ A V, nb × nb row-major
	w           []float64      // A v_j
	coef, corr  []float64      // Gram–Schmidt coefficients
	products    int            // products with a so far
	anorm       float64        // largest ‖A v_j‖ seen, a lower bound of ‖A‖

	es   mat.EigenSym
	hm   *mat.SymDense
	ritz []float64 // Ritz values θ, increasing
	vecs mat.Dense // Ritz vectors y of H, by column
	sel  []int     // the Ritz pairs a restart keeps
	ysel blas64.General
	tmp  blas64.General
}

func newLanczosRun(n int, a func(dst, src []float64)) *lanczosRun {
	nb := lanczosBasis(n)
	keep := nb / 2
	return &lanczosRun{
		n: n, nb: nb, keep: keep, a: a,
		rng:  rand.New(rand.NewPCG(uint64(n), lanczosStream)),
		v:    blas64.General{Rows: nb, Cols: n, Stride: n, Data: make([]float64, nb*n)},
		h:    make([]float64, nb*nb),
		w:    make([]float64, n),
		coef: make([]float64, nb),
		corr: make([]float64, nb),
		hm:   mat.NewSymDense(nb, nil),
		sel:  make([]int, 0, keep),
		ysel: blas64.General{Rows: keep, Cols: nb, Stride: nb, Data: make([]float64, keep*nb)},
		tmp:  blas64.General{Rows: keep, Cols: lanczosChunk, Stride: lanczosChunk, Data: make([]float64, keep*lanczosChunk)},
	}
}

func (lz *lanczosRun) row(i int) []float64 { return lz.v.Data[i*lz.n : (i+1)*lz.n] }

// orthogonalize makes x orthogonal to 1 and to the first j basis vectors,
// leaves the coefficients removed in coef[:j] and returns the norm of what
// is left.
func (lz *lanczosRun) orthogonalize(x []float64, j int) float64 {
	n := lz.n
	clear(lz.coef[:j])
	xv := blas64.Vector{N: n, Inc: 1, Data: x}
	for range 2 {
		mean := floats.Sum(x) / float64(n)
		floats.AddConst(-mean, x)
		if j == 0 {
			continue
		}
		vj := blas64.General{Rows: j, Cols: n, Stride: n, Data: lz.v.Data[:j*n]}
		c := blas64.Vector{N: j, Inc: 1, Data: lz.corr[:j]}
		blas64.Gemv(blas.NoTrans, 1, vj, xv, 0, c)
		blas64.Gemv(blas.Trans, -1, vj, c, 1, xv)
		floats.Add(lz.coef[:j], lz.corr[:j])
	}
	return floats.Norm(x, 2)
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
			floats.Scale(1/nrm, x)
			return nil
		}
	}
	return fmt.Errorf("lanczos: no direction orthogonal to %d vectors", j)
}

// next makes w/beta basis vector j, or a new direction when w vanished.
func (lz *lanczosRun) next(j int, beta float64) error {
	if beta > 1e-12*lz.anorm {
		floats.ScaleTo(lz.row(j), 1/beta, lz.w)
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
		lz.anorm = max(lz.anorm, floats.Norm(lz.w, 2))
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
	nb := lz.nb
	for r := 0; r < nb; r++ {
		for c := r; c < nb; c++ {
			lz.hm.SetSym(r, c, lz.h[r*nb+c])
		}
	}
	if !lz.es.Factorize(lz.hm, true) {
		return fmt.Errorf("lanczos: eigendecomposition of the %d×%d projection did not converge", nb, nb)
	}
	lz.ritz = lz.es.Values(lz.ritz)
	lz.es.VectorsTo(&lz.vecs)
	return nil
}

// residual is the largest residual beta·|y_k[nb−1]| of the wanted extreme
// Ritz pairs.
func (lz *lanczosRun) residual(beta float64, want lanczosWant) float64 {
	res := 0.0
	if want&wantLow != 0 {
		res = max(res, beta*math.Abs(lz.vecs.At(lz.nb-1, 0)))
	}
	if want&wantHigh != 0 {
		res = max(res, beta*math.Abs(lz.vecs.At(lz.nb-1, lz.nb-1)))
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
			lz.ysel.Data[s*nb+i] = lz.vecs.At(i, k)
		}
	}
	// V[:keep] = Ysel V, a column block at a time, in place.
	for start := 0; start < n; start += lanczosChunk {
		width := min(lanczosChunk, n-start)
		block := blas64.General{Rows: nb, Cols: width, Stride: n, Data: lz.v.Data[start:]}
		out := blas64.General{Rows: keep, Cols: width, Stride: lanczosChunk, Data: lz.tmp.Data}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, lz.ysel, block, 0, out)
		for s := range lz.sel {
			copy(lz.v.Data[s*n+start:s*n+start+width], lz.tmp.Data[s*lanczosChunk:s*lanczosChunk+width])
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
