package decentral

import "github.com/gtstorm/gtstorm/decentral/graph"

// pipeline is the state of pipelined rounds (a PipelinedExchange and
// SetFinalRound): round t+1 begins after round t's Wait, and each node sends
// its round-(t+1) vectors, its Next rows, as soon as its round-t Step is
// done.
type pipeline struct {
	final   int           // the run's rounds (SetFinalRound)
	shared  []int         // the shared slabs when pipelined (Description.Shared); nil: no pipelining
	begun   int           // t+1 when round t began during round t−1, else 0
	sending bool          // this round's Step phase sends the next round's vectors
	err     error         // BeginNextRound's error, for the next round
	mix     *graph.Mixing // W_{t+1}, for the next round's sends
	send    [][][]float32 // send[i]: node i's vectors of the next round
	bytes   []int64       // the bytes those took, per node
	errs    []error       // their Send's error, per node
}

// restart forgets a round begun early: the next round begins afresh.
func (p *pipeline) restart() { p.begun, p.err = 0, nil }

// SetFinalRound tells the optimizer that the run ends after round T (T
// rounds done), so that over a [PipelinedExchange] each round but the last
// begins the next one early and sends each node's vectors of the next round
// as soon as the node's update is done, overlapping the transfer with the
// other nodes' work. The results are the same bit for bit; T ≤ 0, the
// default, turns the pipelining off. A method whose messages are not rows
// of its state slabs (a Preparer's, a compressor's) is never pipelined.
// Each node's vectors of the next round are then its Next rows of the
// slabs its Description shares.
func (o *Optimizer) SetFinalRound(T int) {
	o.pipe.final, o.pipe.shared = T, nil
	if _, ok := o.ex.(PipelinedExchange); !ok || T <= 0 || o.comp != nil {
		return
	}
	if _, ok := o.meth.(Preparer); ok {
		return
	}
	if len(o.desc.Shared) == 0 {
		return
	}
	o.pipe.shared = o.desc.Shared
	if o.pipe.send == nil {
		o.pipe.send = make([][][]float32, o.m)
		for i := range o.pipe.send {
			o.pipe.send[i] = make([][]float32, 0, o.desc.Shares())
		}
		o.pipe.bytes, o.pipe.errs = make([]int64, o.m), make([]error, o.m)
	}
}

// beginNext begins round t+1 during round t, once round t's Wait returned,
// when the run is pipelined and round t is not the last: it sets
// o.pipe.sending, and the Step phase then sends each node's Next rows.
func (o *Optimizer) beginNext(t int) {
	if o.pipe.shared == nil || t+1 >= o.pipe.final {
		return
	}
	mx := o.topo.Mixing(t + 1)
	if mx != o.mix && o.checkMixing(mx) != nil {
		return // the next round reports it, as it would without pipelining
	}
	o.pipe.mix, o.pipe.err = mx, nil
	for _, i := range o.local {
		o.pipe.bytes[i], o.pipe.errs[i] = 0, nil
	}
	o.pipe.begun = t + 2
	if err := o.ex.(PipelinedExchange).BeginNextRound(t+1, mx, o.desc.Shares()); err != nil {
		o.pipe.err = err // the next round's error, as BeginRound's would be
		return
	}
	o.pipe.sending = true
}

// share appends node i's vectors of this round to send: its compressed
// message, or its current rows of the slabs its Description shares.
func (o *Optimizer) share(i int, send [][]float32) [][]float32 {
	if o.comp != nil {
		return append(send, o.dec[i])
	}
	for _, k := range o.desc.Shared {
		send = append(send, o.row(o.cur[k], i))
	}
	return send
}

// sendNextRound sends node i's vectors of the next round, its Next rows,
// once its Step of this round is done; the error waits for the next round.
func (o *Optimizer) sendNextRound(i int) {
	vecs := o.pipe.send[i][:0]
	for _, k := range o.pipe.shared {
		vecs = append(vecs, o.row(o.nxt[k], i))
	}
	o.pipe.send[i] = vecs
	o.pipe.bytes[i], o.pipe.errs[i] = o.ex.Send(i, o.pipe.mix.To(i), vecs)
}
