package decentral

import (
	"fmt"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// benchP is the MNIST CNN's parameter count (SPEC §5).
const benchP = 18378

// quadOracle is f(x; ζ) = ½‖x‖², a gradient that costs one pass over x.
type quadOracle struct{}

func (quadOracle) Grad(_ int, x []float32, _ Batch, g []float32) (float32, error) {
	copy(g, x)
	return 0, nil
}

// unitSampler hands out one fixed single-row batch.
type unitSampler struct{ b Batch }

func (s unitSampler) Sample(int) Batch { return s.b }

// benchGraphs returns the ring and an Erdős–Rényi graph of expected degree 8
// on m nodes.
func benchGraphs(b *testing.B, m int) map[string]*graph.Graph {
	er, err := graph.ErdosRenyi(m, min(1, 8/float64(m-1)), 1)
	if err != nil {
		b.Fatal(err)
	}
	return map[string]*graph.Graph{"ring": mustGraph(graph.Ring(m)), "er-deg8": er}
}

// BenchmarkMixingRound times one mixing round of x (p = 18,378 floats per
// node) over all m nodes on one goroutine, through the Exchange exactly as a
// Step does; ns/term is the time per (2|E| + m)·p multiply-adds, flat if a
// round costs O(|E|·p).
func BenchmarkMixingRound(b *testing.B) {
	for _, m := range []int{10, 100, 1000} {
		graphs := benchGraphs(b, m)
		for _, name := range []string{"ring", "er-deg8"} {
			g := graphs[name]
			b.Run(fmt.Sprintf("%s/m=%d", name, m), func(b *testing.B) {
				mx, err := graph.LaplacianMixing(g)
				if err != nil {
					b.Fatal(err)
				}
				x0 := make([]float32, benchP)
				for k := range x0 {
					x0[k] = float32(k%7) * 0.1
				}
				o, err := New(Config{Algorithm: DSGD, Workers: 1, StepSizes: StepSizes{Eta0: 0.1}}, mx, unitSampler{lrBatch{0}}, quadOracle{}, x0)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < m; i++ {
					copy(o.row(o.x, i), x0)
				}
				gr := o.Mixing().Graph()
				terms := float64(2*len(g.Edges)+m) * benchP
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					for i := 0; i < m; i++ {
						o.send[i] = o.share(i, o.send[i][:0])
						if _, err := o.ex.Send(i, gr.Neighbors(i), o.send[i]); err != nil {
							b.Fatal(err)
						}
					}
					for i := 0; i < m; i++ {
						o.mixer.Mix(0, o.row(o.nxt[0], i), o.mix, o.ex, i, 0, o.row(o.x, i))
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/terms, "ns/term")
				b.ReportMetric(float64(len(g.Edges)), "edges")
			})
		}
	}
}

// BenchmarkStep times a whole round of each algorithm on 10 nodes (ER
// p_c = 0.5) with p = 18,378 and a gradient that costs one pass over x: the
// optimizer's own overhead per round.
func BenchmarkStep(b *testing.B) {
	mx, err := graph.LaplacianMixing(mustGraph(graph.ErdosRenyi(10, 0.5, 1)))
	if err != nil {
		b.Fatal(err)
	}
	for _, algo := range Algorithms() {
		b.Run(algo, func(b *testing.B) {
			o, err := New(Config{Algorithm: algo, StepSizes: StepSizes{Eta0: 1e-3}}, mx, unitSampler{lrBatch{0}}, quadOracle{}, make([]float32, benchP))
			if err != nil {
				b.Fatal(err)
			}
			defer o.Close()
			if err := o.Init(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := o.Step(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMixingLambda times NewMixing — the weights and λ — on m = 10,000
// nodes: the ring and the torus in closed form, Erdős–Rényi graphs of
// expected degree 10, 20 and 50 by sparse Lanczos. The graphs are built once,
// outside the timing. Run with
//
//	go test ./decentral/ -run '^$' -bench MixingLambda -benchtime 3x
func BenchmarkMixingLambda(b *testing.B) {
	const m = 10_000
	graphs := []struct {
		name string
		make func() (*graph.Graph, error)
	}{
		{"ring", func() (*graph.Graph, error) { return graph.Ring(m) }},
		{"torus", func() (*graph.Graph, error) { return graph.Torus(m) }},
		{"er-deg10", func() (*graph.Graph, error) { return graph.ErdosRenyi(m, 10.0/(m-1), 1) }},
		{"er-deg20", func() (*graph.Graph, error) { return graph.ErdosRenyi(m, 20.0/(m-1), 1) }},
		{"er-deg50", func() (*graph.Graph, error) { return graph.ErdosRenyi(m, 50.0/(m-1), 1) }},
	}
	for _, gc := range graphs {
		g, err := gc.make()
		if err != nil {
			b.Fatal(err)
		}
		for _, kind := range []string{graph.MixLaplacian, graph.MixMetropolis} {
			b.Run(fmt.Sprintf("%s/%s/m=%d", gc.name, kind, m), func(b *testing.B) {
				var lam float64
				for range b.N {
					mx, err := graph.NewMixing(kind, g)
					if err != nil {
						b.Fatal(err)
					}
					lam = mx.Lambda()
				}
				b.ReportMetric(lam, "lambda")
			})
		}
	}
}
