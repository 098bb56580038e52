package decentral

import "github.com/gtstorm/gtstorm/decentral/graph"

// Mixer is how a node combines, for one slab its method mixes, the vectors
// its neighbours sent with its own ([RoundContext.Mix]). The default is
// plain gossip, Σ_j W_ij v_j; package
// [github.com/gtstorm/gtstorm/decentral/robust] gives rules that resist
// neighbours that lie (Config.Mixer). A Mixer that is also a
// [MixingChecker] refuses the matrices it cannot use. A Mixer serves one
// optimizer at a time.
type Mixer interface {
	// Mix sets dst to node i's combination of own, its k-th shared vector,
	// which W weighs with W_ii, and the k-th vectors ex.Recv(i, j)[k] of
	// the nodes j of w.From(i), which W weighs with w.Row32(i). It must
	// not modify own or what it receives. worker is the id of the calling
	// worker: calls with distinct workers may run concurrently, so buffers
	// are the worker's.
	Mix(worker int, dst []float32, w *graph.Mixing, ex Exchange, i, k int, own []float32)
}

// gossipMixer is the default Mixer: plain gossip.
type gossipMixer struct{}

// Mix sets dst = Σ_j W_ij vec_j for node i, where vec_j is the k-th vector
// neighbour j sent this round and own is node i's.
func (gossipMixer) Mix(_ int, dst []float32, w *graph.Mixing, ex Exchange, i, k int, own []float32) {
	nb := w.From(i)
	self, ws := w.Row32(i)
	Gossip(dst, self, own, ws, len(nb), func(n int) []float32 { return ex.Recv(i, nb[n])[k] })
}

// Gossip sets dst = self·own + Σ_n ws[n]·vec(n) over n < count, in float32,
// in a fixed order of kernels: plain gossip's arithmetic, which every rule
// that reduces to it (package robust's mean, clip with nothing clipped)
// repeats bit for bit by calling it.
func Gossip(dst []float32, self float32, own []float32, ws []float32, count int, vec func(n int) []float32) {
	n := 0
	switch count {
	case 0:
		setScaled(dst, self, own)
		return
	case 1:
		setScaled2(dst, self, own, ws[0], vec(0))
		return
	case 2:
		setScaled3(dst, self, own, ws[0], vec(0), ws[1], vec(1))
		return
	default:
		setScaled4(dst, self, own, ws[0], vec(0), ws[1], vec(1), ws[2], vec(2))
		n = 3
	}
	for ; n+4 <= count; n += 4 {
		addScaled4(dst, ws[n], vec(n), ws[n+1], vec(n+1), ws[n+2], vec(n+2), ws[n+3], vec(n+3))
	}
	switch count - n {
	case 1:
		addScaled(dst, ws[n], vec(n))
	case 2:
		addScaled2(dst, ws[n], vec(n), ws[n+1], vec(n+1))
	case 3:
		addScaled3(dst, ws[n], vec(n), ws[n+1], vec(n+1), ws[n+2], vec(n+2))
	}
}
