package decentral

import (
	"fmt"
	"math"
)

// Network is a simulated network and compute: what turns a run's rounds
// into the seconds they would take on a synchronous network (SPEC §9, the
// network model). Node i finishes round t once it has its own gradients and
// every in-neighbour's message of the round:
//
//	T_i(t+1) = max over j in N_t(i) ∪ {i} of T_j(t) + compute_j(t) + link_{j→i}(t),
//
// where compute_j(t) = Compute · Slowdown_j · samples_j(t)/Batch (a round's
// gradient evaluations, so GT-STORM's two minibatch gradients cost twice
// DSGD's one and D-GET's large batches their size), link_{j→i} = Latency +
// bytes_j/Bandwidth with bytes_j what j sends each neighbour that round, and
// link_{i→i} = 0. Initialisation's gradients give T_i(0).
//
// The model leaves out: compute overlapping communication (a node sends
// only once its round's work is done), contention between a node's
// messages (each link has the full bandwidth, as on a switched network
// with one port per neighbour), message loss and retransmission, and any
// time to mix.
type Network struct {
	Latency   float64   // seconds a message takes on top of its bytes
	Bandwidth float64   // bytes per second a link carries, per direction; 0 is unlimited
	Compute   float64   // seconds one gradient evaluation on Batch samples takes
	Batch     int       // the minibatch size Compute is for
	Slowdown  []float64 // node i computes Slowdown[i] times slower; nil means 1 for all
}

// validate checks the network for m nodes.
func (n *Network) validate(m int) error {
	switch {
	case !(n.Latency >= 0) || math.IsInf(n.Latency, 0):
		return fmt.Errorf("network: latency %v s, want a finite time ≥ 0", n.Latency)
	case !(n.Bandwidth >= 0):
		return fmt.Errorf("network: bandwidth %v bytes/s, want > 0 (0 for unlimited)", n.Bandwidth)
	case !(n.Compute >= 0) || math.IsInf(n.Compute, 0):
		return fmt.Errorf("network: compute %v s per gradient, want a finite time ≥ 0", n.Compute)
	case n.Batch < 1:
		return fmt.Errorf("network: batch %d, want ≥ 1", n.Batch)
	case n.Slowdown != nil && len(n.Slowdown) != m:
		return fmt.Errorf("network: %d node speeds for %d nodes", len(n.Slowdown), m)
	}
	for i, s := range n.Slowdown {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("network: node %d is %v times slower, want a finite factor > 0", i, s)
		}
	}
	return nil
}

// computeTime returns the seconds node i takes to draw samples samples'
// gradients.
func (n *Network) computeTime(i int, samples int64) float64 {
	t := n.Compute * float64(samples) / float64(n.Batch)
	if n.Slowdown != nil {
		t *= n.Slowdown[i]
	}
	return t
}

// linkTime returns the seconds a message of the given bytes takes.
func (n *Network) linkTime(bytes int64) float64 {
	t := n.Latency
	if n.Bandwidth > 0 {
		t += float64(bytes) / n.Bandwidth
	}
	return t
}

// startClock sets T_i(0): the time of node i's initialisation gradients.
func (o *Optimizer) startClock() {
	if o.simT == nil {
		return
	}
	for i := range o.simT {
		o.simT[i] = o.cfg.Network.computeTime(i, o.rSamples[i])
	}
}

// advanceClock moves the simulated clock over the round just done, whose
// mixing matrix is o.mix and whose per-node samples and bytes are
// rSamples and rBytes.
func (o *Optimizer) advanceClock() {
	if o.simT == nil {
		return
	}
	n := o.cfg.Network
	ready := o.simReady
	for j := range ready {
		ready[j] = o.simT[j] + n.computeTime(j, o.rSamples[j])
	}
	for i := range o.simT {
		t := ready[i]
		for _, j := range o.mix.From(i) {
			var perMessage int64
			if k := len(o.mix.To(j)); k > 0 {
				perMessage = o.rBytes[j] / int64(k)
			}
			t = max(t, ready[j]+n.linkTime(perMessage))
		}
		o.simT[i] = t
	}
}

// SimSeconds returns the simulated seconds of the rounds done so far: when
// the slowest node finished the last one (max_i T_i). It is NaN without a
// Config.Network.
func (o *Optimizer) SimSeconds() float64 {
	if o.simT == nil {
		return math.NaN()
	}
	t := 0.0
	for _, v := range o.simT {
		t = max(t, v)
	}
	return t
}
