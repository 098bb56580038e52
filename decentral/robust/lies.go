package robust

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/internal/detmath"
	"github.com/gtstorm/gtstorm/internal/splitmix"
)

// gaussStream separates the gauss attack's noise from the seed's other
// streams.
const gaussStream = 0x6761757373 // "gauss"

// A Byzantine node's lies are made where it runs, as a real attacker would
// make them: the liar, the exchange of the optimizer running node b, sends
// each neighbour j its own message m_bj in place of v_b, through the
// [decentral.ScatterExchange] it decorates, and what j receives is what it
// mixes. Over several processes the lies are what travels. An omniscient
// attack reads the vectors j's honest neighbours send j this round and j's
// own: the optimizer running b must run j and those neighbours too (see
// [liar.CheckMixing]). The honest nodes' vectors go through the decorated
// exchange as they are.

// liar is the exchange decorator of a run whose Byzantine nodes lie in
// their messages (Apply). It learns each round and its W_t from BeginRound
// (and BeginNextRound, see pipelinedLiar), and the shared vectors of the
// round from the optimizer (View).
type liar struct {
	inner    decentral.ScatterExchange
	attack   Attack
	seed     uint64
	byz      []bool
	local    []bool                      // the nodes the optimizer runs; nil: all
	round    int                         // the round whose vectors Send sends
	w        *graph.Mixing               // its W_t
	shared   func(node, k int) []float32 // the vectors of the round (View)
	nodes    []liarNode                  // per node, a Byzantine node's messages
	mean, sq []float64                   // an omniscient lie's sums, p floats each
}

// pipelinedLiar is the liar of a [decentral.PipelinedExchange] under an
// attack that reads no other node's vectors (signflip, gauss): each node
// tells its lies of round t+1 as soon as its round-t update is done. An
// omniscient attack's liar is never pipelined, since its lies read the
// other nodes' vectors of the round.
type pipelinedLiar struct{ *liar }

// newLiar returns the decorator of inner for the Byzantine nodes byz of m
// (ids outside [0, m) are left to decentral.New to refuse), of which the
// optimizer runs local (all when empty).
func newLiar(inner decentral.ScatterExchange, a Attack, seed uint64, byz, local []int, m int) decentral.Exchange {
	l := &liar{inner: inner, attack: a, seed: seed, byz: mark(byz, m), nodes: make([]liarNode, m)}
	if len(local) > 0 {
		l.local = mark(local, m)
	}
	if _, ok := inner.(decentral.PipelinedExchange); ok && !a.Omniscient() {
		return pipelinedLiar{l}
	}
	return l
}

// mark returns m flags, set for the nodes of list in [0, m).
func mark(list []int, m int) []bool {
	f := make([]bool, m)
	for _, i := range list {
		if i >= 0 && i < m {
			f[i] = true
		}
	}
	return f
}

// BeginRound records round t and its W_t, for the round's lies, and
// begins the round on the decorated exchange if it is a RoundExchange.
func (l *liar) BeginRound(t int, w *graph.Mixing, shares int) error {
	l.round, l.w = t, w
	if rx, ok := l.inner.(decentral.RoundExchange); ok {
		return rx.BeginRound(t, w, shares)
	}
	return nil
}

// BeginNextRound records round t and its W_t, whose vectors the nodes send
// from now on, and begins it on the decorated exchange.
func (p pipelinedLiar) BeginNextRound(t int, w *graph.Mixing, shares int) error {
	p.round, p.w = t, w
	return p.inner.(decentral.PipelinedExchange).BeginNextRound(t, w, shares)
}

// View keeps the optimizer's view of the round's shared vectors, which an
// omniscient attack reads.
func (l *liar) View(shared func(node, k int) []float32) { l.shared = shared }

// Wait waits on the decorated exchange.
func (l *liar) Wait(ctx context.Context) error { return l.inner.Wait(ctx) }

// Recv returns what the decorated exchange received.
func (l *liar) Recv(node, from int) [][]float32 { return l.inner.Recv(node, from) }

// Send sends node's vectors of the round to the nodes of to: an honest
// node's as they are, a Byzantine node's lies to each honest neighbour, its
// own message each. The Byzantine nodes collude: they send each other
// their honest vectors, so that each keeps the state an honest node in its
// place would have (from which signflip and gauss lie), and none is driven
// to overflow by the others' lies.
func (l *liar) Send(node int, to []int, vecs [][]float32) (int64, error) {
	if node < 0 || node >= len(l.byz) || !l.byz[node] {
		return l.inner.Send(node, to, vecs)
	}
	p := 0
	if len(vecs) > 0 {
		p = len(vecs[0])
	}
	b := &l.nodes[node]
	msgs := b.messages(l.round, len(to), len(vecs), p)
	for n, j := range to {
		for k, v := range vecs {
			if l.byz[j] {
				copy(msgs[n][k], v)
				continue
			}
			l.lie(b, msgs[n][k], j, k, node, v)
		}
	}
	return l.inner.SendEach(node, to, msgs)
}

// liarNode is a local Byzantine node's messages and noise: msgs[t&1][n] is
// what it sends to[n] in round t, its vectors backed by flat[t&1].
type liarNode struct {
	flat [2][]float32
	hdrs [2][][]float32
	msgs [2][][][]float32
	pcg  *rand.PCG
	rng  *rand.Rand
}

// messages returns the node's buffers of round t for n neighbours and
// shares vectors each, growing them as needed.
func (l *liarNode) messages(t, n, shares, p int) [][][]float32 {
	par := t & 1
	if len(l.msgs[par]) == n && (n == 0 || len(l.msgs[par][0]) == shares) {
		return l.msgs[par]
	}
	if cap(l.flat[par]) < n*shares*p {
		l.flat[par] = make([]float32, n*shares*p)
		l.hdrs[par] = make([][]float32, n*shares)
		l.msgs[par] = make([][][]float32, n)
	}
	flat, hdrs, msgs := l.flat[par], l.hdrs[par][:n*shares], l.msgs[par][:n]
	for q := range hdrs {
		hdrs[q] = flat[q*p : (q+1)*p : (q+1)*p]
	}
	for q := range msgs {
		msgs[q] = hdrs[q*shares : (q+1)*shares : (q+1)*shares]
	}
	l.msgs[par] = msgs
	return msgs
}

// lie sets m to Byzantine node b's message to node j in the round on
// shared vector k, v being the vector b would send honestly (see [Attack]).
func (l *liar) lie(n *liarNode, m []float32, j, k, b int, v []float32) {
	switch a := l.attack; a.Name {
	case AttackSignFlip:
		scale := float32(-a.param(1))
		for q, x := range v[:len(m)] {
			m[q] = scale * x
		}
	case AttackGauss:
		l.gauss(n, m, v, a.param(1), b, j, k)
	default:
		l.omniscient(m, j, k)
	}
}

// gauss sets m = v + σξ, ξ ~ N(0, I) from the stream of (seed, round, b,
// j, slab k): node b's noise to node j.
func (l *liar) gauss(n *liarNode, m, v []float32, sigma float64, b, j, k int) {
	if n.pcg == nil {
		n.pcg = rand.NewPCG(0, 0)
		n.rng = rand.New(n.pcg)
	}
	h := splitmix.Hash(l.seed ^ gaussStream)
	h = splitmix.Hash(h ^ uint64(l.round))
	h = splitmix.Hash(h ^ uint64(b)<<20 ^ uint64(j))
	n.pcg.Seed(h, uint64(k))
	for q, x := range v {
		m[q] = float32(float64(x) + float64(sigma*detmath.NormFloat64(n.rng)))
	}
}

// omniscient sets m to the message every Byzantine neighbour of node j
// sends j on shared vector k under an omniscient attack: from μ_j and σ_j,
// the mean and standard deviation of the vectors j's honest neighbours in
// W_t = mx send (j's own, when none), or, for dissensus, from j's honest
// gossip step.
func (l *liar) omniscient(m []float32, j, k int) {
	mx, p := l.w, len(m)
	nb := mx.From(j)
	own := l.shared(j, k)
	liars := 0
	for _, c := range nb {
		if l.byz[c] {
			liars++
		}
	}
	if len(l.mean) < p {
		l.mean, l.sq = make([]float64, p), make([]float64, p)
	}
	mean, sq := l.mean[:p], l.sq[:p]
	clear(mean)
	clear(sq)
	a := l.attack
	if a.Name == AttackDissensus {
		// mean = Σ_{h honest} W_jh (v_h − v_j), the honest gossip step;
		// the liars' weights share −ε times it.
		_, ws := mx.Row(j)
		byzW := 0.0
		for n, h := range nb {
			if l.byz[h] {
				byzW += ws[n]
				continue
			}
			for q, x := range l.shared(h, k) {
				mean[q] += float64(ws[n] * (float64(x) - float64(own[q])))
			}
		}
		f := a.param(1) / byzW
		for q, x := range own {
			m[q] = float32(float64(x) - float64(f*mean[q]))
		}
		return
	}
	count := 0
	for _, h := range nb {
		if l.byz[h] {
			continue
		}
		count++
		for q, x := range l.shared(h, k) {
			mean[q] += float64(x)
			sq[q] += float64(float64(x) * float64(x))
		}
	}
	if count == 0 {
		count = 1
		for q, x := range own {
			mean[q], sq[q] = float64(x), float64(x)*float64(x)
		}
	}
	inv := 1 / float64(count)
	switch a.Name {
	case AttackIPM:
		e := a.param(0.1)
		for q := range m {
			m[q] = float32(-e * mean[q] * inv)
		}
	case AttackALIE:
		z := a.param(alieZ(len(nb)+1, liars))
		for q := range m {
			mu := float64(mean[q] * inv)
			sd := math.Sqrt(max(float64(sq[q]*inv)-float64(mu*mu), 0))
			m[q] = float32(mu - float64(z*sd))
		}
	}
}

// CheckMixing refuses W_t = mx when the run's attack is omniscient and a
// Byzantine node the optimizer runs lies to a node whose vectors, or whose
// honest neighbours', it does not hold: the lies are made where the
// Byzantine node runs, from the vectors of its own process.
func (l *liar) CheckMixing(mx *graph.Mixing) error {
	if !l.attack.Omniscient() || l.local == nil {
		return nil
	}
	for b, local := range l.local {
		if local && l.byz[b] {
			if err := omniscientReach(mx, l.byz, l.attack, b, func(i int) bool { return l.local[i] }); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckPlacement refuses a run spread over processes, node i on rank
// owner[i], whose attack a is omniscient and whose Byzantine node b (of
// byz) lies in W = mx to an honest node j that b's rank does not run, or one of
// whose honest neighbours it does not run: b's lies to j read the vectors
// of the round j and those neighbours share, and are made on b's rank.
// The other attacks go anywhere.
func CheckPlacement(mx *graph.Mixing, byz []int, a Attack, owner []int) error {
	if !a.Omniscient() || len(byz) == 0 {
		return nil
	}
	if len(owner) != mx.Nodes() {
		return fmt.Errorf("%d node owners for %d nodes", len(owner), mx.Nodes())
	}
	isByz := make([]bool, mx.Nodes())
	for _, b := range byz {
		isByz[b] = true
	}
	for _, b := range byz {
		if err := omniscientReach(mx, isByz, a, b, func(i int) bool { return owner[i] == owner[b] }); err != nil {
			return err
		}
	}
	return nil
}

// omniscientReach returns an error naming the first node that Byzantine
// node b, lying in W = mx under the omniscient attack a, needs the vectors
// of and that here says runs elsewhere, or nil.
func omniscientReach(mx *graph.Mixing, byz []bool, a Attack, b int, here func(int) bool) error {
	for _, j := range mx.To(b) {
		if byz[j] { // a colluder, told the truth
			continue
		}
		far := -1
		if !here(j) {
			far = j
		}
		for _, h := range mx.From(j) {
			if far < 0 && !byz[h] && !here(h) {
				far = h
			}
		}
		if far >= 0 {
			return fmt.Errorf("attack %s: Byzantine node %d lies to node %d from the vectors node %d receives, but node %d runs on another rank: an omniscient attack is made on its Byzantine node's rank, which must run the nodes it lies to and their honest neighbours (place them with node lines in ranks.txt), or take signflip, gauss or labelflip", a, b, j, j, far)
		}
	}
	return nil
}
