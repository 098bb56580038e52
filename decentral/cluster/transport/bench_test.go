package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// benchSizes are the vector lengths benchmarked: 18,378 and 62,006 floats.
var benchSizes = []int{18378, 62006}

// BenchmarkLoopback measures rounds between two ranks of one node each on
// 127.0.0.1: each round both send one vector to the other and wait for
// its. The MB/s count the payload of both directions.
func BenchmarkLoopback(b *testing.B) {
	ca := newCA(b, "bench CA")
	for _, secure := range []bool{false, true} {
		for _, p := range benchSizes {
			name := fmt.Sprintf("floats=%d", p)
			if secure {
				name = "TLS/" + name
			}
			b.Run(name, func(b *testing.B) {
				var certs [2]*tls.Config
				if secure {
					certs = [2]*tls.Config{ca.tls(b, 0), ca.tls(b, 1)}
				}
				cl := newCluster(b, 2, 2, func(i int) int { return i }, func(r int, c *Config) {
					if secure {
						c.Insecure, c.TLS = false, certs[r]
					}
				})
				w := must(graph.MetropolisHastings(must(graph.Path(2))))
				ctx := context.Background()
				round := func(x *Exchange, t int, v [][]float32) error {
					if err := x.BeginRound(t, w, 1); err != nil {
						return err
					}
					i := x.Local()[0]
					if _, err := x.Send(i, w.To(i), v); err != nil {
						return err
					}
					return x.Wait(ctx)
				}
				vecs := [2][][]float32{{vec(0, 0, 0, p)}, {vec(1, 0, 0, p)}}
				var errs [2]error
				for t := range 3 { // connect and warm up
					var wg sync.WaitGroup
					for r, x := range cl.xs {
						wg.Go(func() { errs[r] = round(x, t, vecs[r]) })
					}
					wg.Wait()
				}
				b.SetBytes(2 * 4 * int64(p))
				b.ResetTimer()
				var wg sync.WaitGroup
				for r, x := range cl.xs {
					wg.Go(func() {
						for t := 3; t < b.N+3 && errs[r] == nil; t++ {
							errs[r] = round(x, t, vecs[r])
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				for r, err := range errs {
					if err != nil {
						b.Fatalf("rank %d: %v", r, err)
					}
				}
			})
		}
	}
}

// BenchmarkRawTCP does the same byte copy over a plain TCP connection on
// 127.0.0.1, for comparison: each round both ends encode a vector into a
// wire frame, write it, read the other's and copy its floats out.
func BenchmarkRawTCP(b *testing.B) {
	for _, p := range benchSizes {
		b.Run(fmt.Sprintf("floats=%d", p), func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					b.Error(err)
				}
				accepted <- c
			}()
			c0, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			c1 := <-accepted
			if c1 == nil {
				b.FailNow()
			}
			defer c0.Close()
			defer c1.Close()
			b.SetBytes(2 * 4 * int64(p))
			b.ResetTimer()
			var wg sync.WaitGroup
			var errs [2]error
			for r, c := range []net.Conn{c0, c1} {
				wg.Go(func() { errs[r] = rawRounds(c, vec(r, 0, 0, p), b.N) })
			}
			wg.Wait()
			b.StopTimer()
			for r, err := range errs {
				if err != nil {
					b.Fatalf("end %d: %v", r, err)
				}
			}
		})
	}
}

// rawRounds runs n rounds on one end of a TCP connection: write v's frame
// from one goroutine while reading the other end's frame in this one.
func rawRounds(c net.Conn, v []float32, n int) error {
	p := len(v)
	out := make([]byte, 0, wire.HeaderSize+4*p)
	in := make([]byte, wire.HeaderSize+4*p)
	got := make([]float32, p)
	werr := make(chan error, 1)
	for t := range n {
		out = wire.AppendFloats(out[:0], wire.Header{Kind: wire.Data, Round: uint64(t), Total: uint32(p)}, v)
		go func() { _, err := c.Write(out); werr <- err }()
		if _, err := io.ReadFull(c, in); err != nil {
			return err
		}
		f, err := wire.Decode(in, true)
		if err != nil {
			return err
		}
		wire.CopyFloats(got, f.Payload)
		if err := <-werr; err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkDenseGraph measures rounds of a dense graph split over two
// ranks, the shape of a8a's logistic regression on 200 nodes (Erdős–Rényi,
// p_c 0.5, about 5,000 edges between the ranks, two vectors of 124 floats a
// node): many small vectors per round, all between one pair of ranks. Each
// round checks every vector received, bit for bit.
func BenchmarkDenseGraph(b *testing.B) {
	const m, p, shares = 200, 124, 2
	topo := graph.Static{W: must(graph.MetropolisHastings(must(graph.ErdosRenyi(m, 0.5, 1))))}
	cl := newCluster(b, 2, m, func(i int) int { return i * 2 / m }, nil)
	ctx := context.Background()
	for r, err := range cl.runAll(ctx, topo, shares, p, 0, 2, nil) { // connect and warm up
		if err != nil {
			b.Fatalf("rank %d: %v", r, err)
		}
	}
	b.ResetTimer()
	for r, err := range cl.runAll(ctx, topo, shares, p, 2, b.N, nil) {
		if err != nil {
			b.Fatalf("rank %d: %v", r, err)
		}
	}
}
