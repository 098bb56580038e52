package kernels

import (
	"math"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// TestErfsLog1psEveryFloat32 checks erfs and log1ps on every kernel set
// at the arguments GELU and Softplus give them for every float32 x,
// x/√2 and eˣ, against detmath.Erf and detmath.Log1p, bit for bit (NaN
// for NaN). It takes minutes: it runs only with GTSTORM_EXHAUSTIVE=1.
func TestErfsLog1psEveryFloat32(t *testing.T) {
	if os.Getenv("GTSTORM_EXHAUSTIVE") != "1" {
		t.Skip("set GTSTORM_EXHAUSTIVE=1 to check every float32")
	}
	const chunk = 1 << 24
	workers := runtime.GOMAXPROCS(0)
	var mu sync.Mutex
	var bad []string
	var wg sync.WaitGroup
	next := make(chan uint64)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var u, e, want, got [expBlock]float64
			for start := range next {
				for b := start; b < start+chunk; b += expBlock {
					for j := range u {
						v := float64(math.Float32frombits(uint32(b) + uint32(j)))
						u[j] = float64(v * sqrtHalf)
						e[j] = v
					}
					exp64s(use(), e[:], e[:])
					for _, c := range []struct {
						name string
						ref  func(float64) float64
						set  func(ks *kernelSet, dst, src []float64)
						in   []float64
					}{{"erfs", detmath.Erf, erfs, u[:]}, {"log1ps", detmath.Log1p, log1ps, e[:]}} {
						for j, x := range c.in {
							want[j] = c.ref(x)
						}
						for _, ks := range kernelSets() {
							c.set(ks, got[:], c.in)
							for j := range got {
								if g, w := got[j], want[j]; math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
									mu.Lock()
									if len(bad) < 20 {
										bad = append(bad, ks.name+" "+c.name)
										t.Errorf("%s %s(%v [%#x]) = %v, want %v (float32 %#x)", ks.name, c.name, c.in[j], math.Float64bits(c.in[j]), g, w, uint32(b)+uint32(j))
									}
									mu.Unlock()
								}
							}
						}
					}
				}
			}
		}()
	}
	for s := uint64(0); s < 1<<32; s += chunk {
		next <- s
	}
	close(next)
	wg.Wait()
}
