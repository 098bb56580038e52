package decentral

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// eigenvalues returns the eigenvalues of a in increasing order, with the
// same bits on every architecture: Householder reduction to tridiagonal
// form and the implicit QL iteration (tred2 and tqli, eigenvalues only),
// with every product converted before it meets an addition so that no
// compiler fuses it. gonum's EigenSym, which this replaces, gave other last
// bits on arm64 than on amd64 (its kernels are assembly on one, fused Go
// on the other), so the Laplacian mixing's c = 2/(3 λ_max(L)) and the λ a
// run reports differed between machines.
func eigenvalues(a *mat.SymDense) ([]float64, error) {
	n := a.SymmetricDim()
	m := make([]float64, n*n)
	for i := range n {
		for j := range n {
			m[i*n+j] = a.At(i, j)
		}
	}
	d, e := make([]float64, n), make([]float64, n)
	tridiagonalize(m, n, d, e)
	if err := tridiagonalEigenvalues(d, e); err != nil {
		return nil, fmt.Errorf("eigenvalues of a %d×%d matrix: %w", n, n, err)
	}
	slices.Sort(d)
	return d, nil
}

// tridiagonalize reduces the symmetric n×n matrix a (row-major, destroyed)
// to tridiagonal form by Householder reflections, from the last row up
// (Numerical Recipes' tred2 without the transformation): d gets the
// diagonal, e[i] the subdiagonal element of row i (e[0] = 0).
func tridiagonalize(a []float64, n int, d, e []float64) {
	at := func(i, j int) *float64 { return &a[i*n+j] }
	for i := n - 1; i > 0; i-- {
		l := i - 1
		h := 0.0
		if l == 0 {
			e[i] = *at(i, l)
			d[i] = h
			continue
		}
		scale := 0.0
		for k := 0; k <= l; k++ {
			scale += math.Abs(*at(i, k))
		}
		if scale == 0 {
			e[i] = *at(i, l)
			d[i] = h
			continue
		}
		for k := 0; k <= l; k++ {
			*at(i, k) /= scale
			h += float64(*at(i, k) * *at(i, k))
		}
		f := *at(i, l)
		g := math.Sqrt(h)
		if f >= 0 {
			g = -g
		}
		e[i] = float64(scale * g)
		h -= float64(f * g)
		*at(i, l) = f - g
		f = 0
		for j := 0; j <= l; j++ {
			g = 0
			for k := 0; k <= j; k++ {
				g += float64(*at(j, k) * *at(i, k))
			}
			for k := j + 1; k <= l; k++ {
				g += float64(*at(k, j) * *at(i, k))
			}
			e[j] = g / h
			f += float64(e[j] * *at(i, j))
		}
		hh := f / (h + h)
		for j := 0; j <= l; j++ {
			f = *at(i, j)
			g = e[j] - float64(hh*f)
			e[j] = g
			for k := 0; k <= j; k++ {
				*at(j, k) -= float64(f*e[k]) + float64(g**at(i, k))
			}
		}
		d[i] = h
	}
	e[0] = 0
	for i := range n {
		d[i] = *at(i, i)
	}
}

// tridiagonalEigenvalues overwrites d with the eigenvalues (unordered) of
// the symmetric tridiagonal matrix of diagonal d and subdiagonal e[1:]
// (e is destroyed), by the QL iteration with implicit shifts (Numerical
// Recipes' tqli without eigenvectors).
func tridiagonalEigenvalues(d, e []float64) error {
	n := len(d)
	if n == 0 {
		return nil
	}
	copy(e, e[1:])
	e[n-1] = 0
	// An off-diagonal element below 2⁻⁶⁰ of the matrix's scale deflates
	// too: next to eigenvalues near zero (a complete graph's W has 63 of
	// 64) the relative test alone never holds.
	norm := 0.0
	for i := range n {
		norm = max(norm, math.Abs(d[i])+math.Abs(e[i]))
	}
	tiny := float64(0x1p-60 * norm)
	for l := range n {
		for iter := 0; ; iter++ {
			m := l
			for ; m < n-1; m++ {
				dd := math.Abs(d[m]) + math.Abs(d[m+1])
				if math.Abs(e[m]) <= float64(0x1p-52*dd) || math.Abs(e[m]) <= tiny {
					break
				}
			}
			if m == l {
				break
			}
			if iter == 60 {
				return fmt.Errorf("QL iteration did not converge at eigenvalue %d", l)
			}
			g := (d[l+1] - d[l]) / float64(2*e[l])
			r := hypot(g, 1)
			g = d[m] - d[l] + e[l]/(g+math.Copysign(r, g))
			s, c, p := 1.0, 1.0, 0.0
			i := m - 1
			for ; i >= l; i-- {
				f := float64(s * e[i])
				b := float64(c * e[i])
				r = hypot(f, g)
				e[i+1] = r
				if r == 0 {
					d[i+1] -= p
					e[m] = 0
					break
				}
				s, c = f/r, g/r
				g = d[i+1] - p
				r = float64((d[i]-g)*s) + float64(2*c*b)
				p = float64(s * r)
				d[i+1] = g + p
				g = float64(c*r) - b
			}
			if r == 0 && i >= l {
				continue
			}
			d[l] -= p
			e[l] = g
			e[m] = 0
		}
	}
	return nil
}

// hypot returns √(a² + b²) without undue overflow, in plain arithmetic
// (math.Hypot is assembly on amd64, pure Go elsewhere).
func hypot(a, b float64) float64 {
	a, b = math.Abs(a), math.Abs(b)
	if a < b {
		a, b = b, a
	}
	if a == 0 {
		return 0
	}
	q := b / a
	return float64(a * math.Sqrt(1+float64(q*q)))
}
