package kernels

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// fma32Exact is a·b + c computed exactly and rounded once to float32.
func fma32Exact(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
	f, _ := x.Float32()
	if f == 0 && math.Signbit(float64(a)*float64(b)) && math.Signbit(float64(c)) {
		return float32(math.Copysign(0, -1)) // −0 + −0; big.Float gives +0
	}
	return f
}

func TestFMA32(t *testing.T) {
	tiny := float32(math.SmallestNonzeroFloat32)
	cases := [][3]float32{
		{1, 1, 1},
		{0x1.000002p-12, 0x1.fffffcp-13, 0x1.000002p0}, // 1 + 3·2⁻²⁴ − 2⁻⁷⁰: double rounding goes up
		{-0x1.000002p-12, 0x1.fffffcp-13, -0x1.000002p0},
		{0x1.000002p-12, 0x1.000002p-12, 0x1.000002p0}, // just above a midpoint
		{3, 0x1p-26 + 0x1p-49, 1},
		{0x1.000002p0, 0x1.000002p0, -1},
		{0x1p-70, 0x1p-70, 0x1p-140}, // subnormal result
		{tiny, 0.5, tiny},            // subnormal midpoint
		{tiny, 0.75, 0},
		{-tiny, 0.5, 0},
		{float32(math.MaxFloat32), 2, -float32(math.MaxFloat32)},
		{float32(math.MaxFloat32), 1, float32(math.MaxFloat32) * 0x1p-25},
		{0, -1, float32(math.Copysign(0, -1))},
		{0, 1, float32(math.Copysign(0, -1))},
		{float32(math.Copysign(0, -1)), 1, float32(math.Copysign(0, -1))},
		{1, -1, 1},                         // exact cancellation: +0
		{0x1p-63, 0x1p-63, 0},              // float32's smallest normal
		{0x1p-64, 0x1p-63, 0},              // just below it, exact
		{0x1.000002p-64, 0x1.8p-63, -tiny}, // below it, exact
		// 2⁻¹²⁷ + 2⁻¹⁴⁹ + 2⁻¹⁵⁰ − 2⁻¹⁹⁶: the float64 sum is a midpoint of
		// the subnormals at 2⁻¹²⁷, and rounds twice upwards.
		{0x1.000002p-75, 0x1.fffffcp-76, 0x1.000004p-127},
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200000 {
		a := float32(rng.NormFloat64())
		b := float32(rng.NormFloat64())
		// c near −a·b makes cancellations; a shifted c makes long sums.
		c := -a * b * float32(1+rng.NormFloat64()*0x1p-20)
		if rng.IntN(2) == 0 {
			c = float32(rng.NormFloat64() * math.Ldexp(1, rng.IntN(60)-30))
		}
		cases = append(cases, [3]float32{a, b, c})
	}
	for _, tc := range cases {
		want := fma32Exact(tc[0], tc[1], tc[2])
		if got := fma32(tc[0], tc[1], tc[2]); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%x, %x, %x) = %x, want %x", tc[0], tc[1], tc[2], got, want)
		}
		if got := fma32Emulated(tc[0], tc[1], tc[2]); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32Emulated(%x, %x, %x) = %x, want %x", tc[0], tc[1], tc[2], got, want)
		}
	}
	// The loops that write the FMA out: one multiplier per call for axpy32,
	// 16 cases at a time for fmaLanes.
	for _, tc := range cases {
		y := []float32{tc[2]}
		axpy32(y, []float32{tc[1]}, tc[0])
		if want := fma32Exact(tc[0], tc[1], tc[2]); math.Float32bits(y[0]) != math.Float32bits(want) {
			t.Fatalf("axpy32: %x·%x + %x = %x, want %x", tc[0], tc[1], tc[2], y[0], want)
		}
	}
	for i := 0; i+dotLanes <= len(cases); i += dotLanes {
		var lane [dotLanes]float32
		x, y := make([]float32, dotLanes), make([]float32, dotLanes)
		for l := range lane {
			x[l], y[l], lane[l] = cases[i+l][0], cases[i+l][1], cases[i+l][2]
		}
		fmaLanes(&lane, x, y)
		for l, got := range lane {
			if want := fma32Exact(x[l], y[l], cases[i+l][2]); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("fmaLanes: %x·%x + %x = %x, want %x", x[l], y[l], cases[i+l][2], got, want)
			}
		}
	}
	// The double-rounding case must actually differ from a plain float64 sum.
	a, b, c := float32(0x1.000002p-12), float32(0x1.fffffcp-13), float32(0x1.000002p0)
	if plain := float32(float64(a)*float64(b) + float64(c)); plain == fma32Emulated(a, b, c) {
		t.Fatalf("test case does not exercise double rounding: plain sum %x", plain)
	}
}

// TestKernelSetsSameBits checks that every kernel set this CPU runs gives
// the pure-Go kernels' bits on every GEMM path (broadcast, dot and packed),
// with partial panels, dot tails, batch reductions and long k blocked in
// several depth blocks; and that the pure-Go results are those recorded on
// amd64 (wantGemmDigest), so that an architecture whose compiler fuses
// fma32 (fma_fused.go) is checked too, with no vector set to compare.
func TestKernelSetsSameBits(t *testing.T) {
	sets := kernelSets()
	cases := []gemmCase{
		{m: 16, n: 576, k: 25, batch: 2, alpha: 1},
		{m: 32, n: 64, k: 400, batch: 3, alpha: 1, beta: 1},
		{transB: true, m: 32, n: 400, k: 64, batch: 5, alpha: 1},
		{transA: true, m: 400, n: 64, k: 32, batch: 1, alpha: 1},
		{transB: true, m: 64, n: 10, k: 512, batch: 1, alpha: 1},
		{transB: true, m: 7, n: 13, k: 1037, batch: 2, alpha: 0.5, beta: -1.5},
		{transA: true, transB: true, m: 37, n: 70, k: 300, batch: 2, alpha: 1, beta: 0.25},
		{transB: true, m: 9, n: 13, k: 31, batch: 4, alpha: 2},
		{m: 29, n: 1000, k: 3000, batch: 1, alpha: -1, beta: 0.5, padA: 3, padB: 1, padC: 2},
		{m: 1, n: 1, k: 1, batch: 1, alpha: 1},
	}
	for mr := 1; mr <= 15; mr++ {
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 47, 48, 49, 63, 64, 65} {
			cases = append(cases, gemmCase{m: mr, n: n, k: 11, batch: 2, alpha: 1, beta: 1, padA: 1, padC: 2})
			cases = append(cases, gemmCase{transA: true, m: mr, n: n, k: 300, batch: 1, alpha: 0.5, padC: 1})
		}
	}
	for m := 1; m <= 5; m++ {
		for n := 1; n <= 7; n++ { // every dot tile shape of every set, k with and without a tail
			cases = append(cases, gemmCase{transB: true, m: m, n: n, k: 32 + 5*m + n, batch: 2, alpha: 1, beta: 0.5, padA: 1, padB: 2})
		}
	}
	for _, k := range []int{32, 33, 47, 63, 64, 100, 1000} { // the 1×1 tile runs only for n = 1 and odd m
		cases = append(cases, gemmCase{transB: true, m: 1, n: 1, k: k, batch: 3, alpha: 1})
	}
	rng := rand.New(rand.NewPCG(11, 12))
	digest := sha256.New()
	for _, tc := range cases {
		a, b, c0, lda, sta, ldb, stb, ldc := tc.operands(rng)
		want := append([]float32(nil), c0...)
		sgemm(generic, 0, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.batch, tc.alpha, a, lda, sta, b, ldb, stb, tc.beta, want, ldc)
		for _, v := range want {
			digest.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
		}
		for _, ks := range sets[:len(sets)-1] {
			got := append([]float32(nil), c0...)
			sgemm(ks, 0, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.batch, tc.alpha, a, lda, sta, b, ldb, stb, tc.beta, got, ldc)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s %v: C[%d] = %x, pure Go %x", ks.name, tc, i, got[i], want[i])
				}
			}
		}
	}
	if got := hex.EncodeToString(digest.Sum(nil)); got != wantGemmDigest {
		t.Errorf("pure-Go GEMM results on %s: digest %s, amd64 gives %s", runtime.GOARCH, got, wantGemmDigest)
	}
}

// wantGemmDigest is TestKernelSetsSameBits's digest of the pure-Go results,
// recorded on amd64; a change to the canonical summation order must record
// the new value.
const wantGemmDigest = "ee06fb47471f996f90a5a8c43db4542ad7f655eda45bf498acbc59dfe58edf30"

func TestSelectSet(t *testing.T) {
	fast := &kernelSet{name: "avx2"}
	sets := []*kernelSet{fast, generic}
	tests := []struct {
		env, want, err string
	}{
		{"", "avx2", ""},
		{"auto", "avx2", ""},
		{"go", "go", ""},
		{" avx2 ", "avx2", ""},
		{"avx512", "", "GTSTORM_KERNELS=avx512: this CPU runs only avx2, go"},
		{"neon", "", "this CPU runs only avx2, go"},
		{"sse", "", `GTSTORM_KERNELS="sse": want auto, avx512, avx2, neon or go`},
	}
	for _, tt := range tests {
		ks, err := selectSet(tt.env, sets)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || ks != nil {
				t.Errorf("selectSet(%q) = %v, %v; want error containing %q", tt.env, ks, err, tt.err)
			}
			continue
		}
		if err != nil || ks.name != tt.want {
			t.Errorf("selectSet(%q) = %v, %v; want %s", tt.env, ks, err, tt.want)
		}
	}
}

// sameBitsSets returns the vector sets this CPU runs, whose every kernel is
// checked bit for bit against the pure-Go ones.
func sameBitsSets() []*kernelSet {
	var sets []*kernelSet
	for _, ks := range kernelSets() {
		if ks != generic {
			sets = append(sets, ks)
		}
	}
	return sets
}

// specialInput is random data salted with NaN, ±0 and ties.
func specialInput(rng *rand.Rand, n int) []float32 {
	x := randSlice(rng, n)
	for i := range x {
		switch rng.IntN(20) {
		case 0:
			x[i] = float32(math.NaN())
		case 1:
			x[i] = float32(math.Copysign(0, -1))
		case 2:
			x[i] = 0
		case 3:
			x[i] = 0.5
		}
	}
	return x
}

func sameFloats(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: [%d] = %x, pure Go %x", what, i, got[i], want[i])
		}
	}
}

// TestPoolSameBits checks the pooling kernels bit for bit against the
// pure-Go ones: outputs, codes, input gradients and bias gradients, with
// NaN, −0 and ties, on rows that are and are not whole vectors.
func TestPoolSameBits(t *testing.T) {
	sets := sameBitsSets()
	if len(sets) == 0 {
		t.Skip("no vector kernel set to compare on this CPU")
	}
	shapes := append([]PoolShape{{Planes: 6, H: 24, W: 24}, {Planes: 4, H: 8, W: 8}, {Planes: 3, H: 10, W: 10},
		{Planes: 3, H: 28, W: 28}, {Planes: 2, H: 13, W: 15}, {Planes: 2, H: 6, W: 70}}, poolShapes...)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, s := range shapes {
		for _, relu := range []bool{false, true} {
			x := specialInput(rng, s.In())
			bias := specialInput(rng, 3)
			dy := specialInput(rng, s.Out())
			// And dy without NaN (−0 instead), whose bias gradients are not
			// all NaN, so that their summation order shows.
			dyNum := append([]float32(nil), dy...)
			for i, v := range dyNum {
				if v != v {
					dyNum[i] = float32(math.Copysign(0, -1))
				}
			}
			run := func(ks *kernelSet) (y []float32, code []uint8, dx, db []float32) {
				y, code = make([]float32, s.Out()), make([]uint8, s.Out())
				maxPool(ks, y, code, x, s, bias, len(bias), relu)
				var gate []float32
				if relu {
					gate = y
				}
				for _, g := range [][]float32{dy, dyNum} {
					dxg, dbg := make([]float32, s.In()), make([]float32, len(bias))
					maxPoolBackward(ks, dxg, g, gate, code, s, dbg)
					dx, db = append(dx, dxg...), append(db, dbg...)
				}
				return y, code, dx, db
			}
			wy, wc, wdx, wdb := run(generic)
			for _, ks := range sets {
				what := func(part string) string { return ks.name + " " + part + " " + fmt.Sprint(s, relu) }
				y, code, dx, db := run(ks)
				sameFloats(t, what("y"), y, wy)
				if string(code) != string(wc) {
					t.Fatalf("%s: codes differ", what("code"))
				}
				sameFloats(t, what("dx"), dx, wdx)
				sameFloats(t, what("dbias"), db, wdb)
			}
		}
	}
}

// TestConvSameBits checks im2col and col2im bit for bit against the pure-Go
// kernels, with NaN and −0 among the values.
func TestConvSameBits(t *testing.T) {
	sets := sameBitsSets()
	if len(sets) == 0 {
		t.Skip("no vector kernel set to compare on this CPU")
	}
	rng := rand.New(rand.NewPCG(23, 24))
	for _, s := range convShapes {
		x := specialInput(rng, s.InSize())
		y := specialInput(rng, s.K()*s.P())
		run := func(ks *kernelSet) (cols, dx []float32) {
			cols, dx = make([]float32, s.K()*s.P()), make([]float32, s.InSize())
			im2col(ks, cols, x, s, nil)
			col2im(ks, dx, y, s)
			return cols, dx
		}
		wcols, wdx := run(generic)
		for _, ks := range sets {
			cols, dx := run(ks)
			sameFloats(t, fmt.Sprint(ks.name, " im2col ", s), cols, wcols)
			sameFloats(t, fmt.Sprint(ks.name, " col2im ", s), dx, wdx)
		}
	}
}
