package decentral

// SetFinalRound tells the optimizer that the run ends after round T (T
// rounds done), so that over a [PipelinedExchange] each round but the last
// begins the next one early and sends each node's vectors of the next round
// as soon as the node's update is done, overlapping the transfer with the
// other nodes' work. The results are the same bit for bit; T ≤ 0, the
// default, turns the pipelining off. A method whose messages are not rows
// of its state slabs (a Preparer's, a compressor's) is never pipelined.
// Each node's vectors of the next round are then its Next rows of the
// slabs its Description shares. A run under an omniscient attack, whose
// lies read the other nodes' vectors of the round, is not pipelined.
func (o *Optimizer) SetFinalRound(T int) {
	o.final, o.shareSlab = T, nil
	if _, ok := o.ex.(PipelinedExchange); !ok || T <= 0 || o.comp != nil {
		return
	}
	if _, ok := o.meth.(Preparer); ok {
		return
	}
	if len(o.desc.Shared) == 0 || o.attack.Omniscient() {
		return // an omniscient lie reads the other nodes' vectors of the round
	}
	o.shareSlab = o.desc.Shared
	if o.sendNext == nil {
		o.sendNext = make([][][]float32, o.m)
		for i := range o.sendNext {
			o.sendNext[i] = make([][]float32, 0, o.desc.shares())
		}
		o.bytesNext, o.errNext = make([]int64, o.m), make([]error, o.m)
	}
}

// beginNext begins round t+1 during round t, once round t's Wait returned,
// when the run is pipelined and round t is not the last: it sets o.pipe,
// and the Step phase then sends each node's Next rows.
func (o *Optimizer) beginNext(t int) {
	if o.shareSlab == nil || t+1 >= o.final {
		return
	}
	mx := o.topo.Mixing(t + 1)
	if mx != o.mix && o.checkMixing(mx) != nil {
		return // the next round reports it, as it would without pipelining
	}
	o.mixNext, o.nextErr = mx, nil
	for _, i := range o.local {
		o.bytesNext[i], o.errNext[i] = 0, nil
	}
	o.begunNext = t + 2
	if err := o.ex.(PipelinedExchange).BeginNextRound(t+1, mx, o.desc.shares()); err != nil {
		o.nextErr = err // the next round's error, as BeginRound's would be
		return
	}
	o.pipe = true
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
func (o *Optimizer) sendNextRound(w, i int) {
	vecs := o.sendNext[i][:0]
	for _, k := range o.shareSlab {
		vecs = append(vecs, o.row(o.nxt[k], i))
	}
	o.sendNext[i] = vecs
	o.bytesNext[i], o.errNext[i] = o.sendNode(w, i, o.round+1, o.mixNext, o.mixNext.to[i], vecs)
}
