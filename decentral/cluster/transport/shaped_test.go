package transport

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
)

// A link of limited bandwidth between two ranks on loopback: the rank
// listeners wrap the connections they accept so that each direction's
// bytes pass no faster than a given rate. Loopback has no other way to slow
// down here (no netem), and a round's cost on a real network is mostly its
// bytes at the link's rate.

// pacer lets bytes pass at rate bytes per second, over every connection
// that shares it, in bursts of at most rate × burst bytes.
type pacer struct {
	mu   sync.Mutex
	rate float64
	next time.Time // when the bytes passed so far have gone through
}

// burst is how far a pacer's schedule may lag behind the clock.
const burst = time.Millisecond

// pass waits until n more bytes have gone through.
func (p *pacer) pass(n int) {
	p.mu.Lock()
	now := time.Now()
	if early := now.Add(-burst); p.next.Before(early) {
		p.next = early // an idle link's credit, so that Sleep's lateness does not add up
	}
	p.next = p.next.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
	d := p.next.Sub(now)
	p.mu.Unlock()
	time.Sleep(d)
}

// shapedConn paces what it reads with in and what it writes with out.
type shapedConn struct {
	net.Conn
	in, out *pacer
}

func (c *shapedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.in.pass(n)
	return n, err
}

func (c *shapedConn) Write(b []byte) (int, error) {
	c.out.pass(len(b))
	return c.Conn.Write(b)
}

// shapedListener gives every connection it accepts the pacers in and out.
type shapedListener struct {
	net.Listener
	in, out *pacer
}

func (l shapedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &shapedConn{c, l.in, l.out}, nil
}

// shapedPair returns the listeners of two ranks joined by a link of rate
// bytes per second each way: every connection between them has one end
// accepted by one of these, which paces both directions.
func shapedPair(t testing.TB, rate float64) []net.Listener {
	up, down := &pacer{rate: rate}, &pacer{rate: rate} // 0→1 and 1→0
	lns := listeners(t, 2)
	return []net.Listener{shapedListener{lns[0], down, up}, shapedListener{lns[1], up, down}}
}

// slowOracle is a qOracle whose gradient takes compute, as a model's
// would, without holding a core: the benchmark then measures how the
// transfer overlaps the work, not two ranks contending for two cores.
type slowOracle struct {
	qOracle
	compute time.Duration
}

func (o slowOracle) Grad(w int, x []float32, b decentral.Batch, g []float32) (float32, error) {
	time.Sleep(o.compute)
	return o.qOracle.Grad(w, x, b, g)
}

// BenchmarkShapedLink times a GT-STORM round of the default MNIST run's
// shape — 10 nodes on an Erdős–Rényi graph (p_c 0.5), 18,378 floats, two
// ranks of one worker each, 2 ms a gradient — over a link of 1 Gbit/s and
// of 250 Mbit/s each way, with rounds pipelined (each node's vectors leave
// as soon as its update is done) and not (they leave when the rank's last
// node is done). ns/op is one round; link-ms/op the time rank 0's bytes of
// a round take at the link's rate, beside the 20 ms of its gradients.
func BenchmarkShapedLink(b *testing.B) {
	const m, p, compute = 10, 18378, 2 * time.Millisecond
	w := must(graph.MetropolisHastings(must(graph.ErdosRenyi(m, 0.5, 1))))
	topo := graph.Static{W: w}
	for _, mbit := range []float64{1000, 250} {
		for _, pipe := range []bool{false, true} {
			b.Run(fmt.Sprintf("Mbit=%g/pipelined=%v", mbit, pipe), func(b *testing.B) {
				owner := func(i int) int { return i * 2 / m }
				cl := newClusterOn(b, shapedPair(b, mbit*1e6/8), m, owner, func(r int, c *Config) { c.VectorLen = p })
				const warm = 3
				ctx := context.Background()
				opts := make([]*decentral.Optimizer, 2)
				for r, x := range cl.xs {
					cfg := decentral.Config{Algorithm: decentral.GTSTORM, Workers: 1, Topology: topo, Local: x.Local(), Exchange: x, StepSizes: decentral.StepSizes{Eta0: 0.01}}
					src, orc := quadratic(m, p)
					o, err := decentral.New(cfg, w, src, slowOracle{orc, compute}, make([]float32, p))
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { o.Close() })
					if pipe {
						o.SetFinalRound(warm + b.N)
					}
					opts[r] = o
				}
				errs := make([]error, 2)
				run := func(rounds int, init bool) {
					var wg sync.WaitGroup
					for r, o := range opts {
						wg.Go(func() {
							if init {
								if errs[r] = o.Init(ctx); errs[r] != nil {
									return
								}
							}
							for range rounds {
								if errs[r] = o.Step(ctx); errs[r] != nil {
									return
								}
							}
						})
					}
					wg.Wait()
					for r, err := range errs {
						if err != nil {
							b.Fatalf("rank %d: %v", r, err)
						}
					}
				}
				run(warm, true) // connect and warm up
				b.ResetTimer()
				run(b.N, false)
				b.StopTimer()
				// The time rank 0's bytes of a round take on the link alone
				// (Init sends nothing).
				sent := float64(cl.xs[0].Stats().BytesSent) / float64(warm+b.N)
				b.ReportMetric(sent/(mbit*1e6/8)*1e3, "link-ms/op")
			})
		}
	}
}
