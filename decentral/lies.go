package decentral

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// gaussStream separates the gauss attack's noise from the seed's other
// streams.
const gaussStream = 0x6761757373 // "gauss"

// A Byzantine node's lies are made where it runs, as a real attacker would
// make them: the optimizer running node b sends each neighbour j its own
// message m_bj in place of v_b, through a [ScatterExchange], and what j
// receives is what it mixes. Over several processes the lies are what
// travels. An omniscient attack reads the vectors j's honest neighbours
// send j this round and j's own: the optimizer running b must run j and
// those neighbours too (see [Optimizer.checkOmniscient]).

// liar is a local Byzantine node's messages: msgs[t&1][n] is what it sends
// to[n] in round t, its vectors backed by flat[t&1].
type liar struct {
	flat [2][]float32
	hdrs [2][][]float32
	msgs [2][][][]float32
}

// messages returns the liar's buffers of round t for n neighbours and
// shares vectors each, growing them as needed.
func (l *liar) messages(t, n, shares, p int) [][][]float32 {
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

// sendNode sends node i's vectors of round t, vecs, to the nodes of to,
// which W_t = mx gives: as they are, or, for a Byzantine node under an
// attack on messages, each honest neighbour its own lies made with worker
// w's scratch. The Byzantine nodes collude: they send each other their
// honest vectors, so that each keeps the state an honest node in its place
// would have (from which signflip and gauss lie), and none is driven to
// overflow by the others' lies.
func (o *Optimizer) sendNode(w, i, t int, mx *Mixing, to []int, vecs [][]float32) (int64, error) {
	if o.byz == nil || !o.byz[i] || !o.attack.Lies() {
		return o.ex.Send(i, to, vecs)
	}
	msgs := o.liars[i].messages(t, len(to), len(vecs), o.p)
	s := &o.rob[w]
	for n, j := range to {
		for k, v := range vecs {
			if o.byz[j] {
				copy(msgs[n][k], v)
				continue
			}
			o.lie(s, msgs[n][k], mx, t, i, j, k, v)
		}
	}
	return o.ex.(ScatterExchange).SendEach(i, to, msgs)
}

// lie sets m to Byzantine node b's message to node j in round t on shared
// vector k, v being the vector b would send honestly (see [Attack]).
func (o *Optimizer) lie(s *robustScratch, m []float32, mx *Mixing, t, b, j, k int, v []float32) {
	switch a := o.attack; a.Name {
	case AttackSignFlip:
		setScaled(m, float32(-a.param(1)), v)
	case AttackGauss:
		o.gauss(s, m, v, a.param(1), t, b, j, k)
	default:
		o.omniscient(s, m, mx, j, k)
	}
}

// gauss sets m = v + σξ, ξ ~ N(0, I) from the stream of (seed, round t, b,
// j, slab k): node b's noise to node j.
func (o *Optimizer) gauss(s *robustScratch, m, v []float32, sigma float64, t, b, j, k int) {
	if s.pcg == nil {
		s.pcg = rand.NewPCG(0, 0)
		s.rng = rand.New(s.pcg)
	}
	h := splitmix(o.cfg.Seed ^ gaussStream)
	h = splitmix(h ^ uint64(t))
	h = splitmix(h ^ uint64(b)<<20 ^ uint64(j))
	s.pcg.Seed(h, uint64(k))
	for q, x := range v {
		m[q] = float32(float64(x) + float64(sigma*detmath.NormFloat64(s.rng)))
	}
}

// shared returns the vector k node i shares this round: its current row
// of the k-th shared slab, what it mixes as its own.
func (o *Optimizer) shared(i, k int) []float32 { return o.row(o.cur[o.desc.Shared[k]], i) }

// omniscient sets m to the message every Byzantine neighbour of node j
// sends j on shared vector k under an omniscient attack: from μ_j and σ_j,
// the mean and standard deviation of the vectors j's honest neighbours in
// W_t = mx send (j's own, when none), or, for dissensus, from j's honest
// gossip step.
func (o *Optimizer) omniscient(s *robustScratch, m []float32, mx *Mixing, j, k int) {
	nb := mx.from[j]
	own := o.shared(j, k)
	liars := 0
	for _, c := range nb {
		if o.byz[c] {
			liars++
		}
	}
	if len(s.mean) < o.p {
		s.mean, s.sq = make([]float64, o.p), make([]float64, o.p)
	}
	mean, sq := s.mean[:o.p], s.sq[:o.p]
	clear(mean)
	clear(sq)
	a := o.attack
	if a.Name == AttackDissensus {
		// mean = Σ_{h honest} W_jh (v_h − v_j), the honest gossip step;
		// the liars' weights share −ε times it.
		ws, byzW := mx.w[j], 0.0
		for n, h := range nb {
			if o.byz[h] {
				byzW += ws[n]
				continue
			}
			for q, x := range o.shared(h, k) {
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
		if o.byz[h] {
			continue
		}
		count++
		for q, x := range o.shared(h, k) {
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

// checkOmniscient refuses W_t = mx when the run's attack is omniscient and
// a Byzantine node this optimizer runs lies to a node whose vectors, or
// whose honest neighbours', it does not hold: the lies are made where the
// Byzantine node runs, from the vectors of its own process.
func (o *Optimizer) checkOmniscient(mx *Mixing) error {
	if o.byz == nil || !o.attack.Omniscient() || len(o.local) == o.m {
		return nil
	}
	if o.isLocal == nil {
		o.isLocal = make([]bool, o.m)
		for _, i := range o.local {
			o.isLocal[i] = true
		}
	}
	for _, b := range o.local {
		if o.byz[b] {
			if err := omniscientReach(mx, o.byz, o.attack, b, func(i int) bool { return o.isLocal[i] }); err != nil {
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
func CheckPlacement(mx *Mixing, byz []int, a Attack, owner []int) error {
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
func omniscientReach(mx *Mixing, byz []bool, a Attack, b int, here func(int) bool) error {
	for _, j := range mx.to[b] {
		if byz[j] { // a colluder, told the truth
			continue
		}
		far := -1
		if !here(j) {
			far = j
		}
		for _, h := range mx.from[j] {
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
