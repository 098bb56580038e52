package compress

import (
	"math"
	"testing"
)

// qsgdVec returns a p-entry vector of mixed magnitudes and signs, with
// zeros, for the QSGD statistics.
func qsgdVec(p int) []float32 {
	v := make([]float32, p)
	for i := range v {
		x := float32(math.Sin(float64(i)*1.7)) * float32(math.Pow(3, float64(i%5-2)))
		if i%11 == 0 {
			x = 0
		}
		v[i] = x
	}
	return v
}

// TestQSGDUnbiased averages N decodings of one v with seeds 0, …, N−1 and
// checks every entry's mean lies within 6 standard errors of v_i, the
// variance of one decoded entry being (n/S)²·f(1−f), f the fractional part
// of S|v_i|/n. It also checks the mean squared error against its exact
// expectation and against QSGD's bound ω‖v‖², ω = min(p/S², √p/S).
func TestQSGDUnbiased(t *testing.T) {
	const p, N = 50, 20000
	v := qsgdVec(p)
	for _, s := range []int{1, 4, 7} {
		c := newQSGD(s)
		var sq float64
		for _, x := range v {
			sq += float64(x) * float64(x)
		}
		n := float64(float32(math.Sqrt(sq))) // the norm the message stores
		unit := n / float64(s)
		variance := make([]float64, p)
		var wantMSE float64
		random := 0
		for i, x := range v {
			r := math.Abs(float64(x)) / unit
			f := r - math.Floor(r)
			variance[i] = unit * unit * f * (1 - f)
			wantMSE += variance[i]
			if variance[i] > 0 {
				random++
			}
		}
		if random < p/2 {
			t.Fatalf("%s: only %d of %d entries are random: the test would be vacuous", c, random, p)
		}
		sum := make([]float64, p)
		mses := make([]float64, N)
		msg := make([]byte, 0, c.Size(p))
		out := make([]float32, p)
		for seed := range N {
			msg = c.Encode(msg[:0], v, uint64(seed))
			if err := c.Decode(out, msg); err != nil {
				t.Fatal(err)
			}
			for i, y := range out {
				sum[i] += float64(y)
				d := float64(y) - float64(v[i])
				mses[seed] += d * d
			}
		}
		for i, x := range v {
			mean := sum[i] / N
			// 6 standard errors, and float32 rounding of the decoded values.
			tol := 6*math.Sqrt(variance[i]/N) + 1e-6*n
			if tol > unit/20 {
				t.Fatalf("%s: entry %d tolerance %g is not below a level step %g/20", c, i, tol, unit)
			}
			if math.Abs(mean-float64(x)) > tol {
				t.Errorf("%s: entry %d mean of %d decodings %g, want %g ± %g", c, i, N, mean, x, tol)
			}
		}
		mean, se := meanSE(mses)
		if math.Abs(mean-wantMSE) > 6*se+1e-6*sq {
			t.Errorf("%s: E‖Q(v) − v‖² ≈ %g ± %g, want Σ(n/S)²f(1−f) = %g", c, mean, se, wantMSE)
		}
		omega := min(p/float64(s*s), math.Sqrt(p)/float64(s))
		if mean > omega*sq+6*se {
			t.Errorf("%s: E‖Q(v) − v‖² ≈ %g ± %g, want ≤ ω‖v‖² = %g", c, mean, se, omega*sq)
		}
	}
}

// meanSE returns the mean of xs and its standard error.
func meanSE(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}

// TestContraction checks every compressor, scaled by Scale(p), is a
// contraction on average over seeds: E‖v − Scale·Q(v)‖² ≤ (1 − δ)‖v‖²,
// with δ = 1 for none, k/p for top-k and rand-k, ‖v‖₁²/(p‖v‖²) for sign
// and Scale(p) = 1/τ for QSGD, and in every case < ‖v‖².
func TestContraction(t *testing.T) {
	const seeds = 300
	for _, spec := range testSpecs {
		c := mustParse(t, spec)
		for _, p := range []int{9, 1000} {
			v := randVec(p, uint64(p)+100)
			var sq, l1 float64
			for _, x := range v {
				sq += float64(x) * float64(x)
				l1 += math.Abs(float64(x))
			}
			var delta float64
			switch c := c.(type) {
			case none:
				delta = 1
			case topK:
				delta = float64(K(c.f, p)) / float64(p)
			case randK:
				delta = float64(K(c.f, p)) / float64(p)
			case sign:
				delta = l1 * l1 / (float64(p) * sq)
			case qsgd:
				delta = c.Scale(p)
			default:
				t.Fatalf("no δ for %s", c)
			}
			scale := c.Scale(p)
			errs := make([]float64, seeds)
			out := make([]float32, p)
			for seed := range seeds {
				if err := c.Decode(out, c.Encode(nil, v, uint64(seed))); err != nil {
					t.Fatal(err)
				}
				for i, y := range out {
					d := float64(v[i]) - scale*float64(y)
					errs[seed] += d * d
				}
			}
			mean, se := meanSE(errs)
			if bound := (1-delta)*sq + 6*se + 1e-6*sq; mean > bound {
				t.Errorf("%s, p = %d: E‖v − Scale·Q(v)‖² ≈ %g ± %g, want ≤ (1 − %.3g)‖v‖² = %g",
					spec, p, mean, se, delta, (1-delta)*sq)
			}
			if mean >= sq {
				t.Errorf("%s, p = %d: E‖v − Scale·Q(v)‖² ≈ %g, want < ‖v‖² = %g", spec, p, mean, sq)
			}
		}
	}
}
