package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

var poolShapes = []PoolShape{
	{Planes: 3, H: 24, W: 24}, // MNIST conv1 output
	{Planes: 5, H: 8, W: 8},
	{Planes: 2, H: 28, W: 28},
	{Planes: 2, H: 7, W: 9},  // odd rows and columns
	{Planes: 1, H: 2, W: 66}, // more than one 16-output chunk
	{Planes: 2, H: 5, W: 65},
	{Planes: 2, H: 1, W: 6}, // no output rows
	{Planes: 1, H: 4, W: 64},
}

// tiedInput draws values from a small set so that windows often tie.
func tiedInput(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.IntN(5) - 2)
	}
	return x
}

func TestMaxPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, ks := range kernelSets() {
		for _, s := range poolShapes {
			for _, relu := range []bool{false, true} {
				for _, ties := range []bool{false, true} {
					x := randSlice(rng, s.In())
					if ties {
						x = tiedInput(rng, s.In())
					}
					const nc = 1
					bias := []float32{0}
					if relu {
						bias[0] = 0.25
					}
					if s.Planes%2 == 0 {
						bias = []float32{-0.5, 0.75}
					}
					y := make([]float32, s.Out()+3)
					code := make([]uint8, s.Out()+3)
					for i := s.Out(); i < len(y); i++ {
						y[i], code[i] = 99, 99
					}
					maxPool(ks, y, code, x, s, bias, len(bias), relu)
					oh, ow := s.OH(), s.OW()
					for p := range s.Planes {
						for oy := range oh {
							for ox := range ow {
								o := (p*oh+oy)*ow + ox
								// Definition: first maximum in window order.
								best, bc := float32(math.Inf(-1)), -1
								for q := range 4 {
									v := x[(p*s.H+2*oy+q/2)*s.W+2*ox+q%2]
									if v > best {
										best, bc = v, q
									}
								}
								want := best + bias[p%len(bias)]
								if relu {
									want = max(want, 0)
								}
								if y[o] != want || int(code[o]) != bc {
									t.Fatalf("%s %+v relu=%v: out %d = %g code %d, want %g code %d", ks.name, s, relu, o, y[o], code[o], want, bc)
								}
							}
						}
					}
					for i := s.Out(); i < len(y); i++ {
						if y[i] != 99 || code[i] != 99 {
							t.Fatalf("%s %+v: wrote past the output at %d", ks.name, s, i)
						}
					}
					_ = nc
					// Backward: dense write of dx, gate, bias gradient.
					dy := randSlice(rng, s.Out())
					dx := make([]float32, s.In()+2)
					for i := range dx {
						dx[i] = float32(math.NaN())
					}
					db := make([]float32, len(bias))
					db[0] = 1 // accumulates
					var gate []float32
					if relu {
						gate = y
					}
					maxPoolBackward(ks, dx, dy, gate, code, s, db)
					wantDx := make([]float32, s.In())
					wantDb := make([]float64, len(bias))
					wantDb[0] = 1
					for p := range s.Planes {
						for oy := range oh {
							for ox := range ow {
								o := (p*oh+oy)*ow + ox
								g := dy[o]
								if relu && !(y[o] > 0) {
									g = 0
								}
								q := int(code[o])
								wantDx[(p*s.H+2*oy+q/2)*s.W+2*ox+q%2] = g
								wantDb[p%len(bias)] += float64(g)
							}
						}
					}
					for i, w := range wantDx {
						if dx[i] != w {
							t.Fatalf("%s %+v relu=%v: dx[%d] = %g, want %g", ks.name, s, relu, i, dx[i], w)
						}
					}
					for i := s.In(); i < len(dx); i++ {
						if !math.IsNaN(float64(dx[i])) {
							t.Fatalf("%s %+v: backward wrote past dx at %d", ks.name, s, i)
						}
					}
					for c, w := range wantDb {
						if math.Abs(float64(db[c])-w) > 1e-5*(1+math.Abs(w)) {
							t.Fatalf("%s %+v: dbias[%d] = %g, want %g", ks.name, s, c, db[c], w)
						}
					}
				}
			}
		}
	}
}

// TestMaxPoolMatchesReLUThenPool checks the claim of MaxPool2x2BiasReLU:
// pooling then bias and ReLU equals ReLU(x+bias) then pooling.
func TestMaxPoolMatchesReLUThenPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	s := PoolShape{Planes: 4, H: 12, W: 12}
	x := randSlice(rng, s.In())
	bias := []float32{0.3, -0.2}
	y := make([]float32, s.Out())
	code := make([]uint8, s.Out())
	MaxPool2x2BiasReLU(y, code, x, s, bias, true)
	r := make([]float32, s.In())
	for i, v := range x {
		r[i] = max(0, v+bias[(i/(s.H*s.W))%2])
	}
	y2 := make([]float32, s.Out())
	MaxPool2x2(y2, make([]uint8, s.Out()), r, s)
	for i := range y {
		if y[i] != y2[i] {
			t.Fatalf("output %d: pool-then-bias-ReLU %g, ReLU-then-pool %g", i, y[i], y2[i])
		}
	}
}
