package decentral

import (
	"math"
	"math/rand/v2"
)

// gaussStream separates the gauss attack's noise from the seed's other
// streams.
const gaussStream = 0x6761757373 // "gauss"

// lie replaces, in s.vecs, what node j's Byzantine neighbours sent on slab
// k with their messages of the run's attack (see [Attack]); own is j's
// vector. Omniscient attacks read the honest vectors j received, which
// s.vecs holds before the replacement.
func (o *Optimizer) lie(s *robustScratch, j, k int, own []float32) {
	nb := o.mix.from[j]
	liars := 0
	for _, b := range nb {
		if o.byz[b] {
			liars++
		}
	}
	if liars == 0 {
		return
	}
	a := o.attack
	if a.Omniscient() {
		m := s.msg(0, o.p)
		o.omniscient(s, m, j, own, liars)
		for n, b := range nb {
			if o.byz[b] {
				s.vecs[n] = m
			}
		}
		return
	}
	c := 0
	for n, b := range nb {
		if !o.byz[b] {
			continue
		}
		m := s.msg(c, o.p)
		c++
		v := s.vecs[n]
		switch a.Name {
		case AttackSignFlip:
			setScaled(m, float32(-a.param(1)), v)
		case AttackGauss:
			o.gauss(s, m, v, a.param(1), b, j, k)
		}
		s.vecs[n] = m
	}
}

// gauss sets m = v + σξ, ξ ~ N(0, I) from the stream of (seed, round, b, j,
// slab k): node b's noise to node j.
func (o *Optimizer) gauss(s *robustScratch, m, v []float32, sigma float64, b, j, k int) {
	if s.pcg == nil {
		s.pcg = rand.NewPCG(0, 0)
		s.rng = rand.New(s.pcg)
	}
	h := splitmix(o.cfg.Seed ^ gaussStream)
	h = splitmix(h ^ uint64(o.round))
	h = splitmix(h ^ uint64(b)<<20 ^ uint64(j))
	s.pcg.Seed(h, uint64(k))
	for q, x := range v {
		m[q] = float32(float64(x) + sigma*s.rng.NormFloat64())
	}
}

// omniscient sets m to the message every Byzantine neighbour of node j
// sends j on this slab under an omniscient attack: from μ_j and σ_j, the
// mean and standard deviation of the honest vectors j received (its own,
// own, when none), or, for dissensus, from j's honest gossip step. liars
// is the number of j's Byzantine neighbours.
func (o *Optimizer) omniscient(s *robustScratch, m []float32, j int, own []float32, liars int) {
	nb := o.mix.from[j]
	if len(s.mean) < o.p {
		s.mean, s.sq = make([]float64, o.p), make([]float64, o.p)
	}
	mean, sq := s.mean[:o.p], s.sq[:o.p]
	clear(mean)
	clear(sq)
	a := o.attack
	if a.Name == AttackDissensus {
		// mean = Σ_{k honest} W_jk (v_k − v_j), the honest gossip step;
		// the liars' weights share −ε times it.
		ws, byzW := o.mix.w[j], 0.0
		for n, b := range nb {
			if o.byz[b] {
				byzW += ws[n]
				continue
			}
			for q, x := range s.vecs[n] {
				mean[q] += ws[n] * (float64(x) - float64(own[q]))
			}
		}
		f := a.param(1) / byzW
		for q, x := range own {
			m[q] = float32(float64(x) - f*mean[q])
		}
		return
	}
	count := 0
	for n, b := range nb {
		if o.byz[b] {
			continue
		}
		count++
		for q, x := range s.vecs[n] {
			mean[q] += float64(x)
			sq[q] += float64(x) * float64(x)
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
			mu := mean[q] * inv
			sd := math.Sqrt(max(sq[q]*inv-mu*mu, 0))
			m[q] = float32(mu - z*sd)
		}
	}
}
