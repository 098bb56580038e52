package graphops

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// TestLayersMatchFiniteDifferences checks, for every network of netSpecs,
// activationSpecs, siluSpecs, joinSpecs, groupedSpecs, windowSpecs and
// convAxesSpecs (among others), that the graph's loss is the float64 reference loss (ref_test.go), and
// that its gradient with respect to every parameter tensor and to the
// input matches float64 central differences of that loss, at the first,
// last and six random coordinates of each.
func TestLayersMatchFiniteDifferences(t *testing.T) {
	for _, s := range slices.Concat(netSpecs, activationSpecs, siluSpecs, joinSpecs, groupedSpecs, windowSpecs, scaleSpecs, preluSpecs, globalMaxSpecs, chanMulSpecs, pointwiseSpecs, channelSpecs, layerNormSpecs, channelNormSpecs, convAxesSpecs, tokenSpecs, patchSpecs) {
		t.Run(s.name, func(t *testing.T) {
			bn, err := s.build(nil, 2, true, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			loss, grads, _, err := bn.run()
			if err != nil {
				t.Fatal(err)
			}
			p64 := map[string][]float64{}
			for name, v := range bn.ps.vals {
				p64[name] = make([]float64, len(v))
				for i, f := range v {
					p64[name][i] = float64(f)
				}
			}
			want := refLoss(s, p64, bn.labels)
			if d := math.Abs(float64(loss) - want); d > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("loss %.7g, reference %.7g", loss, want)
			}
			rng := rand.New(rand.NewPCG(5, 5))
			const h = 1e-6 // float64 keeps the rounding error near 1e-10; kinks are unlikely this close
			for i, name := range bn.ps.names {
				g, p := grads[i], p64[name]
				coords := []int{0, len(p) - 1}
				for range 6 {
					coords = append(coords, rng.IntN(len(p)))
				}
				gmax := 0.0
				for _, v := range g {
					gmax = math.Max(gmax, math.Abs(float64(v)))
				}
				if gmax == 0 {
					t.Errorf("%s: gradient is identically zero", name)
				}
				for _, j := range coords {
					orig := p[j]
					p[j] = orig + h
					up := refLoss(s, p64, bn.labels)
					p[j] = orig - h
					down := refLoss(s, p64, bn.labels)
					p[j] = orig
					fd := (up - down) / (2 * h)
					if d := math.Abs(float64(g[j]) - fd); d > 1e-3*math.Abs(fd)+1e-5*gmax+1e-7 {
						t.Errorf("%s[%d]: gradient %.6g, finite difference %.6g (max |g| %.3g)", name, j, g[j], fd, gmax)
					}
				}
			}
		})
	}
}

// TestLayersProgramMatchesTapeMachine runs the training and forward graphs
// of every network of netSpecs, activationSpecs, siluSpecs, joinSpecs, groupedSpecs and windowSpecs, on batches
// of 1 and 3 sharing one workspace, on a Program and on Gorgonia's TapeMachine, and checks that
// the loss, every gradient and the logits are the same to the bit (the
// residual networks' gradient sums run as kernel-backed adds on the
// Program, as Gorgonia's Add on the TapeMachine); and that a rerun of a
// Program allocates nothing.
func TestLayersProgramMatchesTapeMachine(t *testing.T) {
	for _, s := range slices.Concat(netSpecs, activationSpecs, siluSpecs, joinSpecs, groupedSpecs, windowSpecs, scaleSpecs, preluSpecs, globalMaxSpecs, chanMulSpecs, pointwiseSpecs, channelSpecs, layerNormSpecs, channelNormSpecs, convAxesSpecs, tokenSpecs, patchSpecs) {
		t.Run(s.name, func(t *testing.T) {
			ws := NewWorkspace()
			for _, n := range []int{3, 1} {
				train, err := s.build(ws, n, true, 2, nil)
				if err != nil {
					t.Fatal(err)
				}
				eval, err := s.build(ws, n, false, 2, train.ps)
				if err != nil {
					t.Fatal(err)
				}
				loss, grads, _, err := train.run()
				if err != nil {
					t.Fatal(err)
				}
				want, err := train.prog.TapeValues(append([]int{train.loss}, train.grads...)...)
				if err != nil {
					t.Fatal(err)
				}
				if err := sameBits([]float32{loss}, want[0]); err != nil {
					t.Errorf("batch %d: loss: %v", n, err)
				}
				for i, g := range grads {
					if err := sameBits(g, want[i+1]); err != nil {
						t.Errorf("batch %d: gradient of %s: %v", n, train.ps.names[i], err)
					}
				}
				_, _, logits, err := eval.run()
				if err != nil {
					t.Fatal(err)
				}
				if want, err = eval.prog.TapeValues(eval.logits); err != nil {
					t.Fatal(err)
				}
				if err := sameBits(logits, want[0]); err != nil {
					t.Errorf("batch %d: logits: %v", n, err)
				}
				for name, prog := range map[string]*Program{"training": train.prog, "forward": eval.prog} {
					// The fewest of three measures: AllocsPerRun counts the
					// whole process's allocations, and on a loaded host the
					// runtime's own can land in one; an allocation of Run
					// lands in every one.
					a := math.Inf(1)
					for range 3 {
						a = min(a, testing.AllocsPerRun(3, func() {
							if err := prog.Run(); err != nil {
								t.Fatal(err)
							}
						}))
					}
					if a != 0 {
						t.Errorf("batch %d: %s graph: %v allocations per run, want 0", n, name, a)
					}
				}
			}
		})
	}
}

// envLayersChild makes the test binary print the networks' digest and exit
// (see TestLayersSameBitsOnEveryKernelSet).
const envLayersChild = "GTSTORM_TEST_LAYERS_DIGEST"

// layersDigest digests every bit of the loss and gradients of every
// network of netSpecs, and of its logits at other parameters.
func layersDigest(t testing.TB) string { return specsDigest(t, netSpecs) }

// specsDigest digests every bit of the loss and gradients of every
// network of specs, and of its logits at other parameters.
func specsDigest(t testing.TB, specs []netSpec) string {
	h := sha256.New()
	put := func(v ...float32) {
		for _, f := range v {
			binary.Write(h, binary.LittleEndian, math.Float32bits(f))
		}
	}
	for i, s := range specs {
		train, err := s.build(nil, 3, true, uint64(10+i), nil)
		if err != nil {
			t.Fatal(err)
		}
		eval, err := s.build(nil, 3, false, uint64(10+i), train.ps)
		if err != nil {
			t.Fatal(err)
		}
		loss, grads, _, err := train.run()
		if err != nil {
			t.Fatal(err)
		}
		put(loss)
		for j, g := range grads {
			put(g...)
			p := train.ps.vals[train.ps.names[j]]
			for k := range p {
				p[k] -= float32(0.1 * g[k]) // converted: no fused multiply-add on arm64
			}
		}
		_, _, logits, err := eval.run()
		if err != nil {
			t.Fatal(err)
		}
		put(logits...)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestLayersSameBitsOnEveryKernelSet runs the networks of netSpecs in a
// child process per kernel set this CPU runs (GTSTORM_KERNELS) and checks
// that every set gives the recorded bits, wantLayersDigest, which are the
// same on every architecture (under qemu: kernelstest.EnvEmulator).
func TestLayersSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestLayersSameBitsOnEveryKernelSet", envLayersChild, layersDigest)
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantLayersDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantLayersDigest, digests["go"])
		}
	}
}

// wantLayersDigest is layersDigest's value on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantLayersDigest = "47447fa15ea8c13200280ee75087908770a206587ca5071629060c60c2773d72"

// BenchmarkResidualBlock times one training step (forward and backward,
// "train") and one forward pass ("forward") of a ResNet basic block with a
// projected shortcut, 16 → 32 channels at stride 2 on 32×32 inputs, batch
// 32, then global pooling, a dense layer and the cross-entropy
// (GTSTORM_KERNELS picks the kernel set).
func BenchmarkResidualBlock(b *testing.B) {
	s := netSpec{"block", []int{16, 32, 32}, 10, func(b net, x any) any {
		h := basicBlock(b, x, "b1", 32, 2, true)
		return b.dense(b.globalAvgPool("gap", h), "fc", 10, false)
	}}
	ws := NewWorkspace()
	train, err := s.build(ws, 32, true, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	eval, err := s.build(ws, 32, false, 1, train.ps)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		bn   *builtNet
	}{{"train", train}, {"forward", eval}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.bn.prog.Run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/step")
		})
	}
}
