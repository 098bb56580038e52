package graph

import (
	"fmt"
	"math"
	"slices"
)

// eigenvalues returns the eigenvalues of a in increasing order, with the
// same bits on every architecture: Householder reduction to tridiagonal
// form and the implicit QL iteration (tred2 and tqli, eigenvalues only),
// with every product converted before it meets an addition so that no
// compiler fuses it. gonum's EigenSym, which this replaces, gave other last
// bits on arm64 than on amd64 (its kernels are assembly on one, fused Go
// on the other), so the Laplacian mixing's c = 2/(3 λ_max(L)) and the λ a
// run reports differed between machines. a is the n×n matrix, row-major
// (only its lower triangle is read); it is overwritten.
func eigenvalues(a []float64, n int) ([]float64, error) {
	d, e := make([]float64, n), make([]float64, n)
	tridiagonalize(a, n, d, e)
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
		scale := 0.0
		if l > 0 {
			for k := 0; k <= l; k++ {
				scale += math.Abs(*at(i, k))
			}
		}
		if scale == 0 { // row 1, or zeros left of the diagonal: nothing to reduce
			e[i] = *at(i, l)
			continue
		}
		h := 0.0
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
	}
	e[0] = 0
	for i := range n { // tred2 keeps h in d[i] for the vectors; here d is the diagonal
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

// symEigen computes all eigenvalues and eigenvectors of the symmetric n×n
// matrix a (row-major; its upper triangle is destroyed) by the cyclic
// Jacobi method (Numerical Recipes' jacobi), unfused, so with the same
// bits on every architecture: vals gets the eigenvalues in increasing
// order, vecs (n×n, row-major) the unit eigenvector of vals[k] in column k.
// It serves Lanczos's small projected matrices.
func symEigen(a []float64, n int, vals, vecs []float64) error {
	d, b, z := vals[:n], make([]float64, n), make([]float64, n)
	clear(vecs[:n*n])
	for i := range n {
		vecs[i*n+i] = 1
		d[i] = a[i*n+i]
		b[i] = d[i]
	}
	for sweep := 1; sweep <= 50; sweep++ {
		off := 0.0
		for p := range n {
			for q := p + 1; q < n; q++ {
				off += math.Abs(a[p*n+q])
			}
		}
		if off == 0 {
			sortEigen(vals[:n], vecs, n)
			return nil
		}
		thresh := 0.0
		if sweep < 4 {
			thresh = float64(0.2*off) / float64(n*n)
		}
		for p := range n - 1 {
			for q := p + 1; q < n; q++ {
				apq := a[p*n+q]
				g := float64(100 * math.Abs(apq))
				if sweep > 4 && math.Abs(d[p])+g == math.Abs(d[p]) && math.Abs(d[q])+g == math.Abs(d[q]) {
					a[p*n+q] = 0
					continue
				}
				if math.Abs(apq) > thresh {
					jacobiRotate(a, vecs, d, z, n, p, q)
				}
			}
		}
		for p := range n {
			b[p] += z[p]
			d[p] = b[p]
			z[p] = 0
		}
	}
	return fmt.Errorf("Jacobi iteration on a %d×%d matrix did not converge in 50 sweeps", n, n)
}

// jacobiRotate applies the Jacobi rotation that zeroes a[p][q] (p < q) to
// a's upper triangle, the eigenvector columns vecs, the diagonal d and its
// accumulated change z (Numerical Recipes' jacobi, one pair).
func jacobiRotate(a, vecs, d, z []float64, n, p, q int) {
	apq := a[p*n+q]
	g := float64(100 * math.Abs(apq))
	h := d[q] - d[p]
	var t float64
	if math.Abs(h)+g == math.Abs(h) {
		t = apq / h
	} else {
		theta := float64(0.5*h) / apq
		t = 1 / (math.Abs(theta) + math.Sqrt(1+float64(theta*theta)))
		if theta < 0 {
			t = -t
		}
	}
	c := 1 / math.Sqrt(1+float64(t*t))
	s := float64(t * c)
	tau := s / (1 + c)
	h = float64(t * apq)
	z[p] -= h
	z[q] += h
	d[p] -= h
	d[q] += h
	a[p*n+q] = 0
	for j := 0; j < p; j++ {
		rotate(a, n, j, p, j, q, s, tau)
	}
	for j := p + 1; j < q; j++ {
		rotate(a, n, p, j, j, q, s, tau)
	}
	for j := q + 1; j < n; j++ {
		rotate(a, n, p, j, q, j, s, tau)
	}
	for j := range n {
		rotate(vecs, n, j, p, j, q, s, tau)
	}
}

// rotate applies the rotation (s, tau) to the pair m[i*n+j], m[k*n+l] of
// the n×n matrix m.
func rotate(m []float64, n, i, j, k, l int, s, tau float64) {
	g, h := m[i*n+j], m[k*n+l]
	m[i*n+j] = g - float64(s*(h+float64(g*tau)))
	m[k*n+l] = h + float64(s*(g-float64(h*tau)))
}

// sortEigen orders the eigenvalues vals increasingly, moving the columns of
// vecs (n×n, row-major) with them (a selection sort: n is small).
func sortEigen(vals, vecs []float64, n int) {
	for i := range n {
		k := i
		for j := i + 1; j < n; j++ {
			if vals[j] < vals[k] {
				k = j
			}
		}
		if k == i {
			continue
		}
		vals[i], vals[k] = vals[k], vals[i]
		for r := range n {
			vecs[r*n+i], vecs[r*n+k] = vecs[r*n+k], vecs[r*n+i]
		}
	}
}
