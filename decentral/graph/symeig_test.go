package graph

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// laplacianOf returns the Laplacian of g for gonum.
func laplacianOf(g *Graph) *mat.SymDense { return mat.NewSymDense(g.N, laplacian(g)) }

// rowMajor returns a copy of a, row-major, for eigenvalues and symEigen.
func rowMajor(a *mat.SymDense) []float64 {
	n := a.SymmetricDim()
	out := make([]float64, n*n)
	for i := range n {
		for j := range n {
			out[i*n+j] = a.At(i, j)
		}
	}
	return out
}

// TestEigenvaluesAgainstGonum checks eigenvalues against gonum's EigenSym
// on Laplacians, random symmetric matrices and matrices with repeated and
// zero eigenvalues: every eigenvalue within 1e-12 of the matrix's scale.
func TestEigenvaluesAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var cases []*mat.SymDense
	for _, m := range []int{1, 2, 3, 10, 57, 200} {
		g, err := Generate("er", m, 0.3, uint64(m))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, laplacianOf(g))
		r := mat.NewSymDense(m, nil)
		for i := range m {
			for j := i; j < m; j++ {
				r.SetSym(i, j, rng.Float64()*2-1)
			}
		}
		cases = append(cases, r)
	}
	for _, name := range []string{"ring", "complete", "star", "path"} {
		g, err := Generate(name, 40, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, laplacianOf(g))
	}
	cases = append(cases, mat.NewSymDense(5, nil)) // all zero
	// The complete graph's Metropolis W, every entry 1/64: one eigenvalue
	// 1 and 63 zeros, where a relative deflation test alone never holds.
	ones := make([]float64, 64*64)
	for i := range ones {
		ones[i] = 1.0 / 64
	}
	cases = append(cases, mat.NewSymDense(64, ones))
	for _, a := range cases {
		n := a.SymmetricDim()
		got, err := eigenvalues(rowMajor(a), n)
		if err != nil {
			t.Fatal(err)
		}
		var es mat.EigenSym
		if !es.Factorize(a, false) {
			t.Fatal("gonum did not converge")
		}
		want := es.Values(nil)
		slices.Sort(want)
		nearSpectrum(t, got, want)
	}
}

// spectrumScale is the scale tolerances of eigenvalues are relative to:
// the largest magnitude in ev, at least 1.
func spectrumScale(ev []float64) float64 {
	scale := 1.0
	for _, v := range ev {
		scale = max(scale, math.Abs(v))
	}
	return scale
}

// nearSpectrum fails t unless the increasing eigenvalues got equal want's
// within 1e-12 of want's spectrumScale.
func nearSpectrum(t *testing.T, got, want []float64) {
	t.Helper()
	scale, n := spectrumScale(want), len(want)
	for i := range n {
		if math.Abs(got[i]-want[i]) > 1e-12*scale {
			t.Fatalf("%d×%d: eigenvalue %d = %v, want %v", n, n, i, got[i], want[i])
		}
	}
}

// TestSymEigen checks the Jacobi eigenpairs of random symmetric matrices
// and a Laplacian: values as gonum's to 1e-12 of the scale, increasing,
// and A y = θ y with unit, orthogonal vectors.
func TestSymEigen(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g, err := Generate("er", 30, 0.3, 2)
	if err != nil {
		t.Fatal(err)
	}
	mats := []*mat.SymDense{laplacianOf(g), mat.NewSymDense(4, nil)}
	for _, n := range []int{1, 2, 7, 40} {
		r := mat.NewSymDense(n, nil)
		for i := range n {
			for j := i; j < n; j++ {
				r.SetSym(i, j, rng.Float64()*2-1)
			}
		}
		mats = append(mats, r)
	}
	for _, a := range mats {
		n := a.SymmetricDim()
		vals, vecs := make([]float64, n), make([]float64, n*n)
		if err := symEigen(rowMajor(a), n, vals, vecs); err != nil {
			t.Fatal(err)
		}
		want, err := eigenvalues(rowMajor(a), n)
		if err != nil {
			t.Fatal(err)
		}
		nearSpectrum(t, vals, want)
		scale := spectrumScale(want)
		for k := range n {
			for l := range n { // yₖ·yₗ = δₖₗ
				d := 0.0
				for i := range n {
					d += vecs[i*n+k] * vecs[i*n+l]
				}
				want := 0.0
				if k == l {
					want = 1
				}
				if math.Abs(d-want) > 1e-12 {
					t.Fatalf("%d×%d: y_%d·y_%d = %v, want %v", n, n, k, l, d, want)
				}
			}
			for i := range n { // (A y − θ y)_i
				r := -vals[k] * vecs[i*n+k]
				for j := range n {
					r += a.At(i, j) * vecs[j*n+k]
				}
				if math.Abs(r) > 1e-11*scale {
					t.Fatalf("%d×%d: residual of pair %d is %v at row %d", n, n, k, r, i)
				}
			}
		}
	}
}

// TestEigenvaluesDigest checks the bits of eigenvalues and of the
// Laplacian mixing's weights on Erdős–Rényi graphs against a digest
// recorded on amd64: the test that catches an architecture whose bits
// differ (.ci/run runs decentral's tests under qemu-aarch64).
func TestEigenvaluesDigest(t *testing.T) {
	h := sha256.New()
	put := func(v float64) { h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))) }
	for m := 10; m <= 150; m += 20 {
		g, err := Generate("er", m, 0.3, uint64(m))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := eigenvalues(laplacian(g), m)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range ev {
			put(v)
		}
		mx, err := NewMixing(MixLaplacian, g)
		if err != nil {
			t.Fatal(err)
		}
		for i := range m {
			self, ws := mx.Row(i)
			put(self)
			for _, w := range ws {
				put(w)
			}
		}
		put(mx.Lambda())
	}
	// Above denseSpectrumMax nodes, Lanczos gives λ_max(L) and λ.
	g, err := Generate("er", denseSpectrumMax+100, 0.05, 7)
	if err != nil {
		t.Fatal(err)
	}
	mx, err := NewMixing(MixLaplacian, g)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := mx.Row(0)
	put(self)
	put(mx.Lambda())
	// The one-peer exponential graph's λ, from the eigenvalues of AᵀA.
	e, err := OnePeerExponential(48)
	if err != nil {
		t.Fatal(err)
	}
	lam, err := e.Lambda(100)
	if err != nil {
		t.Fatal(err)
	}
	put(lam)
	if got := hex.EncodeToString(h.Sum(nil)); got != wantEigenDigest {
		t.Errorf("eigenvalues and Laplacian weights on %s: digest %s, amd64 gives %s", runtime.GOARCH, got, wantEigenDigest)
	}
}

// wantEigenDigest is TestEigenvaluesDigest's digest, recorded on amd64.
const wantEigenDigest = "848919459891e58c81a868a58f9aeaaa9b4f5d31452d7051e4f87bdf75251be6"

// BenchmarkEigenvalues times the dense spectrum of an Erdős–Rényi
// Laplacian (as laplacianMax computes it up to denseSpectrumMax nodes)
// against gonum's EigenSym, which it replaced:
//
//	go test ./decentral/ -run '^$' -bench Eigenvalues -benchtime 5x
func BenchmarkEigenvalues(b *testing.B) {
	for _, m := range []int{100, denseSpectrumMax} {
		g, err := Generate("er", m, 0.3, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("m=%d/ours", m), func(b *testing.B) {
			for b.Loop() {
				if _, err := eigenvalues(laplacian(g), m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("m=%d/gonum", m), func(b *testing.B) {
			lap := laplacianOf(g)
			for b.Loop() {
				var es mat.EigenSym
				if !es.Factorize(lap, false) {
					b.Fatal("no convergence")
				}
			}
		})
	}
}
