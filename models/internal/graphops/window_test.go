package graphops

import (
	"math"
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// windowSpecs check MaxPoolWindow and AvgPoolWindow, padded, with
// ExcludePad and in ceil mode, through small networks of them, run by
// TestLayersMatchFiniteDifferences and TestLayersProgramMatchesTapeMachine;
// their bits are windowDigest's, not layersDigest's.
var windowSpecs = []netSpec{
	{"pool-ceil", []int{2, 12, 12}, 3, func(b net, x any) any {
		w := b.(windowNet)
		h := b.relu("r", b.conv(x, "c1", 4, 3, 1, 1))
		h = w.poolWindow("p1", h, true, Window{K: 3, Stride: 2, Ceil: true})                            // 12 → 6: the last window holds 2 rows
		h = w.poolWindow("p2", h, false, Window{K: 3, Stride: 2, Pad: 1, Ceil: true})                   // 6 → 4: the last divides by 2·3
		h = w.poolWindow("p3", h, false, Window{K: 3, Stride: 2, Pad: 1, ExcludePad: true, Ceil: true}) // 4 → 3
		return b.dense(h, "fc", 3, false)
	}},
	{"pool-padded", []int{3, 7, 9}, 3, func(b net, x any) any {
		w := b.(windowNet)
		h := b.conv(x, "c1", 4, 3, 1, 1)
		h = w.poolWindow("p1", h, true, Window{K: 3, Stride: 2, Pad: 1})                    // 7×9 → 4×5
		h = w.poolWindow("p2", h, false, Window{K: 2, Stride: 1, Pad: 1})                   // → 5×6
		h = w.poolWindow("p3", h, false, Window{K: 3, Stride: 2, Pad: 1, ExcludePad: true}) // → 3×3
		return b.dense(h, "fc", 3, false)
	}},
	{"pool-ceil-drop", []int{2, 5, 5}, 3, func(b net, x any) any {
		w := b.(windowNet)
		h := w.poolWindow("p1", x, true, Window{K: 2, Stride: 2, Pad: 1, Ceil: true}) // 5 → 3: a fourth window would start in the padding
		h = b.conv(h, "c1", 3, 1, 1, 0)
		h = w.poolWindow("p2", h, false, Window{K: 2, Stride: 2, Ceil: true}) // 3 → 2: the last window holds one row
		return b.dense(h, "fc", 3, false)
	}},
}

// windowNet is the pooling of windowSpecs, max or average, configured by a
// Window.
type windowNet interface {
	poolWindow(name string, x any, max bool, w Window) any
}

func (b *graphNet) poolWindow(name string, x any, max bool, w Window) any {
	if max {
		return b.g.MaxPoolWindow(name, node(x), w)
	}
	return b.g.AvgPoolWindow(name, node(x), w)
}

// poolWindow is PyTorch's max_pool2d and avg_pool2d in float64: the output
// size from the float floor or ceiling (less a last window starting in the
// trailing padding), each window [start, start+K) clipped to the map for its
// values and, for count_include_pad's divisor, to the trailing padding's end.
func (r *refNet) poolWindow(_ string, xa any, isMax bool, w Window) any {
	x := t(xa)
	h, wd := x.shape[2], x.shape[3]
	side := func(size int) int {
		q := float64(size+2*w.Pad-w.K) / float64(w.Stride)
		if !w.Ceil {
			return int(math.Floor(q)) + 1
		}
		o := int(math.Ceil(q)) + 1
		if (o-1)*w.Stride >= size+w.Pad {
			o--
		}
		return o
	}
	span := func(out, size int) (lo, hi, counted int) {
		start := out*w.Stride - w.Pad
		end := min(start+w.K, size+w.Pad)
		return max(start, 0), min(end, size), end - start
	}
	oh, ow := side(h), side(wd)
	y := newT64(x.shape[0], x.shape[1], oh, ow)
	for p := range x.shape[0] * x.shape[1] {
		for oy := range oh {
			y0, y1, ny := span(oy, h)
			for ox := range ow {
				x0, x1, nx := span(ox, wd)
				var win []float64
				for i := y0; i < y1; i++ {
					win = append(win, x.v[(p*h+i)*wd+x0:(p*h+i)*wd+x1]...)
				}
				v := maxOf(win)
				if !isMax {
					div := ny * nx
					if w.ExcludePad {
						div = len(win)
					}
					var sum float64
					for _, u := range win {
						sum += u
					}
					v = sum / float64(div)
				}
				y.v[(p*oh+oy)*ow+ox] = v
			}
		}
	}
	return y
}

// envWindowChild makes the test binary print windowSpecs' digest and exit
// (see TestWindowLayersSameBitsOnEveryKernelSet).
const envWindowChild = "GTSTORM_TEST_WINDOW_DIGEST"

// TestWindowLayersSameBitsOnEveryKernelSet runs the networks of windowSpecs
// (padded and ceil-mode pools between convolutions and dense layers) in a
// child process per kernel set this CPU runs and checks that every set
// gives the recorded bits, wantWindowDigest: the pools are pure Go, the
// same bits on every set and architecture.
func TestWindowLayersSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestWindowLayersSameBitsOnEveryKernelSet", envWindowChild,
		func(t testing.TB) string { return specsDigest(t, windowSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantWindowDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantWindowDigest, digests["go"])
		}
	}
}

// wantWindowDigest is specsDigest(windowSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantWindowDigest = "e8d5f4f5dce1ff67b95febe2e2d57d720bf26708adb83a4fb8af0a795763d468"
