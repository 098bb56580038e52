package decentral

// Counters are the paper's complexity measures (SPEC §6), counted as the
// work happens.
type Counters struct {
	// Samples counts one per sample per gradient evaluation, all nodes,
	// including initialisation (IFO calls).
	Samples int64
	// GradEvals counts gradient evaluations, all nodes.
	GradEvals int64
	// Rounds counts communication rounds.
	Rounds int
	// BytesSent[i] counts the bytes node i sent: floats × 4 × neighbours,
	// as reported by the Exchange.
	BytesSent []int64
	// StateFloats is the method's state per node beyond the model, in
	// floats: its Description.StateFloats times p (0 for DSGD, 2p for
	// GT-STORM's v and x_{t−1}).
	StateFloats int
}

// MaxBytesSent returns the bytes sent by the busiest node, the figure to
// report as "bytes sent per node".
func (c Counters) MaxBytesSent() int64 {
	var b int64
	for _, v := range c.BytesSent {
		b = max(b, v)
	}
	return b
}

// Counters returns the complexity counters so far.
func (o *Optimizer) Counters() Counters {
	c := Counters{
		Rounds:      o.round,
		BytesSent:   append([]int64(nil), o.bytes...),
		StateFloats: o.desc.StateFloats * o.p,
	}
	for i := 0; i < o.m; i++ {
		c.Samples += o.samples[i]
		c.GradEvals += o.evals[i]
	}
	return c
}
