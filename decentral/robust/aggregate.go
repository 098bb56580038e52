package robust

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gtstorm/gtstorm/decentral"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// Aggregator is a rule that takes the place of plain gossip, Σ_j W_ij v_j,
// for every slab a method mixes (Setting.Aggregate): node i combines its
// own vector with the vectors its neighbours sent, some of which may be a
// Byzantine node's lies (see [Attack]). [ParseAggregate] makes one from
// its flag form. The rules are:
//
//	mean      Σ_j W_ij v_j, plain gossip (the default)
//	clip:τ    v_i + Σ_{j≠i} W_ij CLIP(v_j − v_i, τ), self-centred clipping
//	trim:b    coordinate-wise trimmed mean of {v_j : j ∈ N̄_i} (BRIDGE-T)
//	median    coordinate-wise median of {v_j : j ∈ N̄_i} (BRIDGE-M)
//
// where N̄_i is node i and its neighbours. A rule is a value and keeps no
// state between calls, so a run with one resumes bit for bit.
type Aggregator interface {
	// String returns the rule in its flag form, such as "clip:0.5".
	String() string
	// Check returns an error naming the first node whose neighbourhood in
	// W is too small for the rule (trim:b needs 2b < |N̄_i|), or nil.
	Check(w *graph.Mixing) error
	// Aggregate sets dst to a node's aggregate of own, its own vector,
	// which W weighs with self, and vecs[n], what its n-th neighbour sent,
	// which W weighs with ws[n] (neighbours in increasing node order). It
	// must not modify own, ws or vecs, and it uses only s for scratch, so
	// that concurrent calls with distinct dst and s are safe.
	Aggregate(dst, own []float32, self float32, ws []float32, vecs [][]float32, s *Scratch)
}

// Scratch is one worker's reusable buffers for an [Aggregator]: a rule
// grows them as it needs (see [Scratch.Float32] and [Scratch.Float64]),
// so that a steady run allocates nothing.
type Scratch struct {
	f32 []float32
	f64 []float64
}

// Float32 returns n float32 values of scratch, contents undefined.
func (s *Scratch) Float32(n int) []float32 {
	if cap(s.f32) < n {
		s.f32 = make([]float32, n)
	}
	return s.f32[:n]
}

// Float64 returns n float64 values of scratch, contents undefined.
func (s *Scratch) Float64(n int) []float64 {
	if cap(s.f64) < n {
		s.f64 = make([]float64, n)
	}
	return s.f64[:n]
}

// Aggregation rules by name, as ParseAggregate takes them.
const (
	AggMean   = "mean"
	AggClip   = "clip"
	AggTrim   = "trim"
	AggMedian = "median"
)

// AggregateKinds is the forms ParseAggregate accepts, for help texts.
const AggregateKinds = "mean|clip[:τ]|trim:b|median"

// ParseAggregate returns the rule spec names: "mean" (or empty), "clip:τ"
// with τ > 0 ("clip:inf" is plain gossip, "clip" alone the adaptive τ of
// [Clip]), "trim:b" with b ≥ 0, or "median".
func ParseAggregate(spec string) (Aggregator, error) {
	name, arg, hasArg := strings.Cut(spec, ":")
	switch name {
	case "", AggMean:
		if hasArg {
			break
		}
		return Mean{}, nil
	case AggMedian:
		if hasArg {
			break
		}
		return Median{}, nil
	case AggClip:
		if !hasArg {
			return Clip{}, nil
		}
		tau, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(tau > 0) {
			return nil, fmt.Errorf("aggregate %q: want clip:τ with a radius τ > 0 (inf: none), or clip for the adaptive radius", spec)
		}
		return Clip{Tau: tau}, nil
	case AggTrim:
		b, err := strconv.Atoi(arg)
		if err != nil || b < 0 {
			return nil, fmt.Errorf("aggregate %q: want trim:b with b ≥ 0 values dropped at each end", spec)
		}
		return Trim{B: b}, nil
	}
	return nil, fmt.Errorf("aggregate %q: want %s", spec, AggregateKinds)
}

// Mean is plain gossip, Σ_j W_ij v_j: the default rule, bit for bit the
// mixing of a run without one.
type Mean struct{}

// String returns "mean".
func (Mean) String() string { return AggMean }

// Check accepts every W.
func (Mean) Check(*graph.Mixing) error { return nil }

// Aggregate sets dst = self·own + Σ_n ws[n]·vecs[n].
func (Mean) Aggregate(dst, own []float32, self float32, ws []float32, vecs [][]float32, _ *Scratch) {
	decentral.Gossip(dst, self, own, ws, len(vecs), func(n int) []float32 { return vecs[n] })
}

// isMean reports whether a is nil or plain gossip.
func isMean(a Aggregator) bool {
	if a == nil {
		return true
	}
	_, ok := a.(Mean)
	return ok
}

// mixer is the [decentral.Mixer] of a rule: node i's aggregate of shared
// vector k over what its neighbours sent, lies included.
type mixer struct {
	agg     Aggregator
	mu      sync.Mutex                    // guards the growth of workers
	workers atomic.Pointer[[]*mixBuffers] // per worker id, grown as ids come
}

// mixBuffers is one worker's buffers for a rule.
type mixBuffers struct {
	Scratch
	vecs [][]float32 // what the neighbours sent
}

// Mix sets dst to the rule's aggregate of own and the k-th vectors node
// i's neighbours in w sent.
func (m *mixer) Mix(worker int, dst []float32, w *graph.Mixing, ex decentral.Exchange, i, k int, own []float32) {
	s := m.buffers(worker)
	vecs := s.vecs[:0]
	for _, j := range w.From(i) {
		vecs = append(vecs, ex.Recv(i, j)[k])
	}
	s.vecs = vecs
	self, ws := w.Row32(i)
	m.agg.Aggregate(dst, own, self, ws, vecs, &s.Scratch)
}

// CheckMixing refuses a W the rule cannot use (see [Aggregator.Check]).
func (m *mixer) CheckMixing(w *graph.Mixing) error { return m.agg.Check(w) }

// buffers returns worker's buffers, making them on the worker's first call:
// a steady run reads them without a lock or an allocation.
func (m *mixer) buffers(worker int) *mixBuffers {
	if bs := m.workers.Load(); bs != nil && worker < len(*bs) {
		return (*bs)[worker]
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var bs []*mixBuffers
	if p := m.workers.Load(); p != nil {
		bs = *p
	}
	if worker < len(bs) {
		return bs[worker]
	}
	grown := make([]*mixBuffers, worker+1)
	copy(grown, bs)
	for w := len(bs); w <= worker; w++ {
		grown[w] = new(mixBuffers)
	}
	m.workers.Store(&grown)
	return grown[worker]
}

// vecDistance returns ‖a − b‖, summed in float64.
func vecDistance(a, b []float32) float64 {
	b = b[:len(a)]
	s := 0.0
	for k, v := range a {
		d := float64(v) - float64(b[k])
		s += float64(d * d)
	}
	return math.Sqrt(s)
}
