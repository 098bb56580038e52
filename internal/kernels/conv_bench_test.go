package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var convBenchShapes = []struct {
	name  string
	s     ConvShape
	batch int
}{
	{"mnist-conv1", ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 5}, 64},
	{"mnist-conv2", ConvShape{C: 16, H: 12, W: 12, KH: 5, KW: 5}, 64},
	{"cifar-conv1", ConvShape{C: 3, H: 32, W: 32, KH: 5, KW: 5}, 128},
	{"cifar-conv2", ConvShape{C: 6, H: 14, W: 14, KH: 5, KW: 5}, 128},
	// ResNet-20's convolutions (pure-Go data movement), and a valid one of
	// the padded size of the first for comparison.
	{"resnet-3x3-p1-32", ConvShape{C: 16, H: 32, W: 32, KH: 3, KW: 3, Pad: 1}, 32},
	{"resnet-3x3-p1-8", ConvShape{C: 64, H: 8, W: 8, KH: 3, KW: 3, Pad: 1}, 32},
	{"resnet-3x3-s2", ConvShape{C: 16, H: 32, W: 32, KH: 3, KW: 3, Stride: 2, Pad: 1}, 32},
	{"resnet-1x1-s2", ConvShape{C: 16, H: 32, W: 32, KH: 1, KW: 1, Stride: 2}, 32},
	{"valid-3x3-34", ConvShape{C: 16, H: 34, W: 34, KH: 3, KW: 3}, 32},
}

// BenchmarkIm2Col times the column matrices of a whole batch, image by
// image, into one reused per-image buffer (as a convolution op consuming
// each right away would); GB/s counts the bytes written.
func BenchmarkIm2Col(b *testing.B) {
	for _, cs := range convBenchShapes {
		s := cs.s
		x := randSlice(rand.New(rand.NewPCG(1, 2)), cs.batch*s.InSize())
		cols := make([]float32, s.K()*s.P())
		b.Run(cs.name+"/rows", func(b *testing.B) {
			for b.Loop() {
				for n := range cs.batch {
					Im2Col(cols, x[n*s.InSize():], s)
				}
			}
			b.ReportMetric(float64(4*cs.batch*len(cols))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		cv, err := NewConv(s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(cs.name+"/plan", func(b *testing.B) {
			for b.Loop() {
				for n := range cs.batch {
					cv.Im2Col(cols, x[n*s.InSize():])
				}
			}
			b.ReportMetric(float64(4*cs.batch*len(cols))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		if cv.Scratch() == 0 {
			continue
		}
		scratch := make([]float32, cv.Scratch())
		b.Run(cs.name+"/scratch", func(b *testing.B) {
			for b.Loop() {
				for n := range cs.batch {
					cv.Im2ColScratch(cols, x[n*s.InSize():], scratch)
				}
			}
			b.ReportMetric(float64(4*cs.batch*len(cols))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkCol2Im times the adjoint over a batch; GB/s counts the column
// bytes read.
func BenchmarkCol2Im(b *testing.B) {
	for _, cs := range convBenchShapes {
		s := cs.s
		dx := make([]float32, cs.batch*s.InSize())
		cols := randSlice(rand.New(rand.NewPCG(1, 2)), s.K()*s.P())
		b.Run(cs.name, func(b *testing.B) {
			for b.Loop() {
				for n := range cs.batch {
					Col2Im(dx[n*s.InSize():], cols, s)
				}
			}
			b.ReportMetric(float64(4*cs.batch*len(cols))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		cv, err := NewConv(s)
		if err != nil {
			b.Fatal(err)
		}
		if cv.Scratch() == 0 {
			continue
		}
		scratch := make([]float32, cv.Scratch())
		b.Run(cs.name+"/scratch", func(b *testing.B) {
			for b.Loop() {
				for n := range cs.batch {
					cv.Col2ImScratch(dx[n*s.InSize():], cols, scratch)
				}
			}
			b.ReportMetric(float64(4*cs.batch*len(cols))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

var poolBenchShapes = []struct {
	name string
	s    PoolShape
	c    int
}{
	{"mnist-pool1", PoolShape{Planes: 64 * 16, H: 24, W: 24}, 16},
	{"mnist-pool2", PoolShape{Planes: 64 * 32, H: 8, W: 8}, 32},
	{"cifar-pool1", PoolShape{Planes: 128 * 6, H: 28, W: 28}, 6},
	{"cifar-pool2", PoolShape{Planes: 128 * 16, H: 10, W: 10}, 16},
}

// BenchmarkMaxPool times the fused pool + bias + ReLU over a batch and its
// backward pass (with the bias gradient); GB/s counts the input bytes read.
func BenchmarkMaxPool(b *testing.B) {
	for _, ps := range poolBenchShapes {
		s := ps.s
		rng := rand.New(rand.NewPCG(3, 4))
		x, bias := randSlice(rng, s.In()), randSlice(rng, ps.c)
		y, code := make([]float32, s.Out()), make([]uint8, s.Out())
		dy, dx, db := randSlice(rng, s.Out()), make([]float32, s.In()), make([]float32, ps.c)
		b.Run(ps.name+"/forward", func(b *testing.B) {
			for b.Loop() {
				MaxPool2x2BiasReLU(y, code, x, s, bias, true)
			}
			b.ReportMetric(float64(4*s.In())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run(ps.name+"/backward", func(b *testing.B) {
			for b.Loop() {
				MaxPool2x2BiasReLUBackward(dx, db, dy, y, code, s, true)
			}
			b.ReportMetric(float64(4*s.In())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkTranspose times the transposes of the recompute recipe: one
// image's conv1 and conv2 output gradients.
func BenchmarkTranspose(b *testing.B) {
	for _, sh := range [][2]int{{16, 576}, {32, 64}} {
		src := randSlice(rand.New(rand.NewPCG(5, 6)), sh[0]*sh[1])
		dst := make([]float32, len(src))
		b.Run(fmt.Sprintf("%dx%d", sh[0], sh[1]), func(b *testing.B) {
			for b.Loop() {
				Transpose(dst, sh[0], src, sh[1], sh[0], sh[1])
			}
			b.ReportMetric(float64(8*len(src))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
