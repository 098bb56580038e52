package decentral

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/gtstorm/gtstorm/decentral/compress"
)

// Optimizer runs one decentralized algorithm, a [Method], over m nodes with
// p parameters each: it is the driver that schedules the nodes' work on its
// workers, runs the exchange, asks the [Topology] for each round's W_t,
// counts and measures, and never switches on the algorithm. All nodes'
// vectors live in flat m × p slabs, node i at [i·p, (i+1)·p). An Optimizer
// is not safe for concurrent use; Close releases its worker goroutines.
type Optimizer struct {
	cfg     Config
	meth    Method
	sched   Schedule
	topo    Topology
	mix     *Mixing // W_t of the round in progress, or of the last one
	ex      Exchange
	sampler BatchSource
	oracle  Oracle
	m, p    int
	local   []int // the nodes this optimizer runs: Config.Local, or all
	procs   int   // goroutines and worker ids used: min(Config.Workers, len(local))
	x0      []float32

	// The method's state slabs, m × p each, x first: cur[k] is slab k's
	// current value, nxt[k] its next one, scratch between rounds.
	cur, nxt [][]float32
	x        []float32 // cur[0], the models
	dir      int       // the Tracker's slab, or -1

	round       int
	initialized bool
	failed      error

	// Per-node counters, committed at the end of a round.
	samples, evals, bytes []int64
	rSamples, rEvals      []int64 // this round's, per node
	rBytes                []int64
	loss, rLoss           []float64

	// Per-round η_t, η_{t+1} and β_{t+1}, read-only while nodes work.
	eta32, etaNext32, beta32 float32

	// Compressed messages (a Compressing method's): node i's encoded
	// message of the round, what it decodes to, and its length in bytes.
	comp     compress.Compressor
	enc      [][]byte
	dec      [][]float32
	msgBytes []int64

	// The simulated clock (Config.Network): T_i, when node i finished the
	// last round, in seconds.
	simT, simReady []float64

	send    [][][]float32 // send[i]: node i's vectors this round
	scratch [][]float32   // two p-float gradient buffers per worker
	acc     []float64     // p floats for reductions
	mean32  []float32     // x̄ as float32
	evalB   []Batch
	evalL   []float64

	// Pipelined rounds (a PipelinedExchange and SetFinalRound): round t+1
	// begins after round t's Wait, and each node sends its round-(t+1)
	// vectors, its Next rows, as soon as its round-t Step is done.
	final     int           // the run's rounds (SetFinalRound)
	shareSlab []int         // the slab of each vector Share returns; nil: no pipelining
	begunNext int           // t+1 when round t began during round t−1, else 0
	pipe      bool          // this round's Step phase sends the next round's vectors
	nextErr   error         // BeginNextRound's error, for the next round
	mixNext   *Mixing       // W_{t+1}, for the next round's sends
	sendNext  [][][]float32 // sendNext[i]: node i's vectors of the next round
	bytesNext []int64       // the bytes those took, per node
	errNext   []error       // their Send's error, per node

	// Parallel node work.
	phase int
	jobs  int
	next  atomic.Int64
	errs  []error
	team  *team
}

// New returns an optimizer for the nodes of mix, which start at x0 (copied)
// once [Optimizer.Init] is called. The batch source and the oracle give each
// node's minibatches and gradients.
func New(cfg Config, mix *Mixing, s BatchSource, o Oracle, x0 []float32) (*Optimizer, error) {
	meth, err := newMethod(cfg.Algorithm)
	if err != nil {
		return nil, err
	}
	sched, err := cfg.Schedule()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Algorithm, err)
	}
	switch {
	case mix == nil:
		return nil, fmt.Errorf("%s: no mixing matrix", cfg.Algorithm)
	case s == nil || o == nil:
		return nil, fmt.Errorf("%s: batch source and oracle are required", cfg.Algorithm)
	case len(x0) == 0:
		return nil, fmt.Errorf("%s: initial parameters are empty", cfg.Algorithm)
	case cfg.Workers < 0:
		return nil, fmt.Errorf("%s: %d workers, want ≥ 0", cfg.Algorithm, cfg.Workers)
	case !finite(x0):
		return nil, fmt.Errorf("%s: initial parameters are not finite", cfg.Algorithm)
	}
	m, p := mix.Nodes(), len(x0)
	local, err := localNodes(cfg.Local, m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Algorithm, err)
	}
	procs := cfg.WorkerCount(len(local))
	if cfg.Period < 0 || cfg.BigBatch < 0 {
		return nil, fmt.Errorf("%s: period %d and big batch %d, want ≥ 0", cfg.Algorithm, cfg.Period, cfg.BigBatch)
	}
	topo := cfg.Topology
	if topo == nil {
		topo = Static{mix}
	}
	if _, ok := meth.(StaticOnly); ok {
		if _, static := topo.(Static); !static {
			return nil, fmt.Errorf("%s needs a static graph (it keeps Σ_j W_ij x̂_j), not one that changes every round", cfg.Algorithm)
		}
	}
	comp, err := newCompressor(cfg, meth)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Algorithm, err)
	}
	if cfg.Network != nil {
		if err := cfg.Network.validate(mix.Nodes()); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.Algorithm, err)
		}
		if len(cfg.Local) != 0 {
			return nil, fmt.Errorf("%s: the simulated network needs every node in one process", cfg.Algorithm)
		}
	}
	opt := &Optimizer{
		cfg: cfg, meth: meth, sched: sched, topo: topo, mix: mix, ex: cfg.Exchange,
		sampler: s, oracle: o, m: m, p: p, local: local, procs: procs, comp: comp,
		x0:       append([]float32(nil), x0...),
		dir:      -1,
		samples:  make([]int64, m),
		evals:    make([]int64, m),
		bytes:    make([]int64, m),
		rSamples: make([]int64, m),
		rEvals:   make([]int64, m),
		rBytes:   make([]int64, m),
		loss:     make([]float64, m),
		rLoss:    make([]float64, m),
		send:     make([][][]float32, m),
		scratch:  make([][]float32, 2*procs),
		acc:      make([]float64, p),
		mean32:   make([]float32, p),
		evalL:    make([]float64, m),
		errs:     make([]error, m),
	}
	if opt.ex == nil {
		opt.ex = NewMemExchange(mix.Graph())
	}
	if comp != nil {
		opt.allocMessages()
		if ee, ok := opt.ex.(EncodedExchange); ok {
			ee.SetDecoder(opt.decodeMessage)
		}
	}
	if cfg.Network != nil {
		opt.simT, opt.simReady = make([]float64, m), make([]float64, m)
	}
	if err := opt.checkMixing(mix); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Algorithm, err)
	}
	for range meth.Slabs() {
		opt.cur = append(opt.cur, make([]float32, m*p))
		opt.nxt = append(opt.nxt, make([]float32, m*p))
	}
	opt.x = opt.cur[0]
	if t, ok := meth.(Tracker); ok {
		opt.dir = t.Direction()
	}
	for i := range opt.send {
		opt.send[i] = make([][]float32, 0, meth.Shares())
	}
	for w := range opt.scratch {
		opt.scratch[w] = make([]float32, p)
	}
	for i := range opt.loss {
		opt.loss[i] = math.NaN()
	}
	return opt, nil
}

// Init puts every node at x0 and runs the algorithm's initialisation (GNSD's
// y_0 and GT-STORM's v_0 are local stochastic gradients at x0; DSGD has
// none). It resets the round and the counters.
func (o *Optimizer) Init(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o.initialized, o.failed, o.round = false, nil, 0
	o.begunNext, o.nextErr = 0, nil
	for i := 0; i < o.m; i++ {
		copy(o.row(o.x, i), o.x0)
		o.samples[i], o.evals[i], o.bytes[i], o.loss[i] = 0, 0, 0, math.NaN()
		o.rLoss[i] = math.NaN()
	}
	clear(o.simT)
	o.setRates(0)
	if err := o.parallel(phaseInit, len(o.local)); err != nil {
		return fmt.Errorf("%s init: %w", o.meth.Name(), err)
	}
	o.startClock()
	o.commitCounters()
	o.initialized = true
	return nil
}

// Step runs one communication round: every node sends its vectors to its
// neighbours, mixes what it receives, draws a minibatch and updates. It
// returns ctx's error without doing anything once ctx is done. If a node's
// work fails or diverges the error names the round and node, the state stays
// that of the last completed round, and later Steps return the same error.
func (o *Optimizer) Step(ctx context.Context) error {
	switch {
	case !o.initialized:
		return fmt.Errorf("%s: Step before Init or Restore", o.meth.Name())
	case o.failed != nil:
		return o.failed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t := o.round
	pipelined := o.begunNext == t+1 // round t began during round t−1, and its vectors went out
	o.begunNext = 0
	if pipelined {
		if err := o.nextErr; err != nil {
			o.nextErr = nil
			return fmt.Errorf("%s round %d: %w", o.meth.Name(), t+1, err)
		}
		o.mix = o.mixNext
		o.send, o.sendNext = o.sendNext, o.send
	} else if mx := o.topo.Mixing(t); mx != o.mix {
		if err := o.checkMixing(mx); err != nil {
			return fmt.Errorf("%s round %d: %w", o.meth.Name(), t+1, err)
		}
		o.mix = mx
	}
	o.setRates(t)
	if rx, ok := o.ex.(RoundExchange); ok && !pipelined {
		if err := rx.BeginRound(t, o.mix, o.meth.Shares()); err != nil {
			return fmt.Errorf("%s round %d: %w", o.meth.Name(), t+1, err)
		}
	}
	if _, ok := o.meth.(Preparer); ok {
		if err := o.parallel(phasePrepare, len(o.local)); err != nil {
			o.failed = fmt.Errorf("%s round %d: %w", o.meth.Name(), t+1, err)
			return o.failed
		}
	}
	to := o.mix.to
	ee, encoded := o.ex.(EncodedExchange)
	encoded = encoded && o.comp != nil
	for _, i := range o.local {
		if pipelined {
			if err := o.errNext[i]; err != nil {
				return fmt.Errorf("%s round %d: node %d: %w", o.meth.Name(), t+1, i, err)
			}
			o.rBytes[i] = o.bytesNext[i]
			continue
		}
		o.send[i] = o.meth.Share(RoundContext{o, 0, i}, o.send[i][:0])
		var n int64
		var err error
		if encoded {
			n, err = ee.SendEncoded(i, to[i], o.enc[i], o.dec[i])
		} else {
			n, err = o.ex.Send(i, to[i], o.send[i])
		}
		if err != nil {
			return fmt.Errorf("%s round %d: node %d: %w", o.meth.Name(), t+1, i, err)
		}
		if o.comp != nil {
			// The encoded message to every neighbour, whatever carried it.
			want := o.msgBytes[i] * int64(len(to[i]))
			if encoded && n != want {
				return fmt.Errorf("%s round %d: node %d: the exchange sent %d bytes of encoded messages, want %d", o.meth.Name(), t+1, i, n, want)
			}
			n = want
		}
		o.rBytes[i] = n
	}
	if err := o.ex.Wait(ctx); err != nil {
		return fmt.Errorf("%s round %d: %w", o.meth.Name(), t+1, err)
	}
	o.beginNext(t)
	err := o.parallel(phaseStep, len(o.local)) // with o.pipe, each node then sends its next vectors
	o.pipe = false
	if err != nil {
		o.failed = fmt.Errorf("%s round %d: %w", o.meth.Name(), t+1, err)
		return o.failed
	}
	o.cur, o.nxt = o.nxt, o.cur
	o.x = o.cur[0]
	o.advanceClock()
	o.commitCounters()
	for i, b := range o.rBytes {
		o.bytes[i] += b
	}
	o.round++
	return nil
}

// SetFinalRound tells the optimizer that the run ends after round T (T
// rounds done), so that over a [PipelinedExchange] each round but the last
// begins the next one early and sends each node's vectors of the next round
// as soon as the node's update is done, overlapping the transfer with the
// other nodes' work. The results are the same bit for bit; T ≤ 0, the
// default, turns the pipelining off. A method whose messages are not rows
// of its state slabs (a Preparer's, a compressor's) is never pipelined.
func (o *Optimizer) SetFinalRound(T int) {
	o.final, o.shareSlab = T, nil
	if _, ok := o.ex.(PipelinedExchange); !ok || T <= 0 || o.comp != nil {
		return
	}
	if _, ok := o.meth.(Preparer); ok {
		return
	}
	o.shareSlab = o.findShareSlabs()
	if o.shareSlab != nil && o.sendNext == nil {
		o.sendNext = make([][][]float32, o.m)
		for i := range o.sendNext {
			o.sendNext[i] = make([][]float32, 0, o.meth.Shares())
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
	if err := o.ex.(PipelinedExchange).BeginNextRound(t+1, mx, o.meth.Shares()); err != nil {
		o.nextErr = err // the next round's error, as BeginRound's would be
		return
	}
	o.pipe = true
}

// findShareSlabs returns, for each vector Share returns, the state slab
// whose Cur row it is, or nil unless every one is such a row: then a node's
// vectors of the next round are its Next rows of those slabs.
func (o *Optimizer) findShareSlabs() []int {
	if len(o.local) == 0 {
		return nil
	}
	i := o.local[0]
	vecs := o.meth.Share(RoundContext{o, 0, i}, nil)
	slabs := make([]int, len(vecs))
	for n, v := range vecs {
		slabs[n] = slices.IndexFunc(o.cur, func(slab []float32) bool {
			row := o.row(slab, i)
			return len(v) == len(row) && len(v) > 0 && &v[0] == &row[0]
		})
		if slabs[n] < 0 {
			return nil
		}
	}
	return slabs
}

// sendNextRound sends node i's vectors of the next round, its Next rows,
// once its Step of this round is done; the error waits for the next round.
func (o *Optimizer) sendNextRound(i int) {
	vecs := o.sendNext[i][:0]
	for _, k := range o.shareSlab {
		vecs = append(vecs, o.row(o.nxt[k], i))
	}
	o.sendNext[i] = vecs
	o.bytesNext[i], o.errNext[i] = o.ex.Send(i, o.mixNext.to[i], vecs)
}

// setRates sets η_t, η_{t+1} and β_{t+1} for round t.
func (o *Optimizer) setRates(t int) {
	o.eta32, o.etaNext32 = float32(o.sched.Eta(t)), float32(o.sched.Eta(t+1))
	o.beta32 = float32(o.sched.Beta(t + 1))
}

// checkMixing refuses a mixing matrix that is not over the optimizer's m
// nodes or that the method cannot use (see MixingChecker).
func (o *Optimizer) checkMixing(mx *Mixing) error {
	if mx == nil || mx.Nodes() != o.m {
		return fmt.Errorf("the topology gave no mixing matrix over %d nodes", o.m)
	}
	if c, ok := o.meth.(MixingChecker); ok {
		return c.CheckMixing(mx)
	}
	return nil
}

func (o *Optimizer) commitCounters() {
	for _, i := range o.local {
		o.samples[i] += o.rSamples[i]
		o.evals[i] += o.rEvals[i]
		o.loss[i] = o.rLoss[i]
	}
}

// localNodes checks Config.Local against m nodes and returns the nodes an
// optimizer runs: those listed, or all m when the list is empty.
func localNodes(list []int, m int) ([]int, error) {
	if len(list) == 0 {
		all := make([]int, m)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	for k, i := range list {
		switch {
		case i < 0 || i >= m:
			return nil, fmt.Errorf("local node %d: want a node of [0, %d)", i, m)
		case k > 0 && i <= list[k-1]:
			return nil, fmt.Errorf("local nodes %v: want distinct nodes in increasing order", list)
		}
	}
	return append([]int(nil), list...), nil
}

// Local returns the nodes this optimizer runs, in increasing order: all m,
// or Config.Local. The slice belongs to the optimizer.
func (o *Optimizer) Local() []int { return o.local }

// row returns node i's p-float row of slab.
func (o *Optimizer) row(slab []float32, i int) []float32 {
	return slab[i*o.p : (i+1)*o.p : (i+1)*o.p]
}

// grad evaluates node i's stochastic gradient at x on b into dst and counts
// the samples and the evaluation.
func (o *Optimizer) grad(w, i int, x []float32, b Batch, dst []float32) (float32, error) {
	if b == nil {
		return 0, errNoBatch
	}
	n := b.Len()
	loss, err := o.oracle.Grad(w, x, b, dst)
	if err != nil {
		return 0, err
	}
	o.rSamples[i] += int64(n)
	o.rEvals[i]++
	return loss, nil
}

// gradPair evaluates node i's gradients at xNew and xOld on the same batch,
// through PairGrader when the oracle has it, and counts both evaluations.
func (o *Optimizer) gradPair(w, i int, xNew, xOld []float32, b Batch, gNew, gOld []float32) (float32, error) {
	po, ok := o.oracle.(PairGrader)
	if !ok {
		loss, err := o.grad(w, i, xNew, b, gNew)
		if err != nil {
			return 0, err
		}
		_, err = o.grad(w, i, xOld, b, gOld)
		return loss, err
	}
	if b == nil {
		return 0, errNoBatch
	}
	n := b.Len()
	loss, err := po.GradPair(w, xNew, xOld, b, gNew, gOld)
	if err != nil {
		return 0, err
	}
	o.rSamples[i] += 2 * int64(n)
	o.rEvals[i] += 2
	return loss, nil
}

// fullGrad evaluates node i's gradient at x over its large batch into dst:
// the mean of the pieces' gradients weighted by their sizes.
func (o *Optimizer) fullGrad(w, i int, x, dst []float32) (float32, error) {
	fb, ok := o.sampler.(FullBatcher)
	if !ok {
		return 0, fmt.Errorf("%s needs large batches and the batch source (%T) gives none", o.meth.Name(), o.sampler)
	}
	pieces := fb.FullBatch(i, o.cfg.BigBatch)
	total := 0
	for _, b := range pieces {
		if b == nil {
			return 0, errNoBatch
		}
		total += b.Len()
	}
	if total == 0 {
		return 0, errors.New("the batch source gave an empty large batch")
	}
	g := o.scratch[2*w]
	var loss float64
	for k, b := range pieces {
		out := dst
		if len(pieces) > 1 {
			out = g
		}
		l, err := o.oracle.Grad(w, x, b, out)
		if err != nil {
			return 0, err
		}
		share := float64(b.Len()) / float64(total)
		loss += share * float64(l)
		if len(pieces) > 1 {
			if k == 0 {
				setScaled(dst, float32(share), g)
			} else {
				addScaled(dst, float32(share), g)
			}
		}
	}
	o.rSamples[i] += int64(total)
	o.rEvals[i]++
	return float32(loss), nil
}

// errNoBatch is the error of a gradient evaluation on a nil Batch.
var errNoBatch = errors.New("the batch source gave no batch (nil Batch)")

// mixRow sets dst = Σ_j W_ij vec_j for node i, where vec_j is the k-th vector
// neighbour j sent this round and own is node i's.
func (o *Optimizer) mixRow(dst []float32, i, k int, own []float32) {
	self := o.mix.self32[i]
	nb, ws := o.mix.from[i], o.mix.w32[i]
	recv := func(n int) []float32 { return o.ex.Recv(i, nb[n])[k] }
	n := 0
	switch len(nb) {
	case 0:
		setScaled(dst, self, own)
		return
	case 1:
		setScaled2(dst, self, own, ws[0], recv(0))
		return
	case 2:
		setScaled3(dst, self, own, ws[0], recv(0), ws[1], recv(1))
		return
	default:
		setScaled4(dst, self, own, ws[0], recv(0), ws[1], recv(1), ws[2], recv(2))
		n = 3
	}
	for ; n+4 <= len(nb); n += 4 {
		addScaled4(dst, ws[n], recv(n), ws[n+1], recv(n+1), ws[n+2], recv(n+2), ws[n+3], recv(n+3))
	}
	switch len(nb) - n {
	case 1:
		addScaled(dst, ws[n], recv(n))
	case 2:
		addScaled2(dst, ws[n], recv(n), ws[n+1], recv(n+1))
	case 3:
		addScaled3(dst, ws[n], recv(n), ws[n+1], recv(n+1), ws[n+2], recv(n+2))
	}
}

// checkFinite returns an ErrDiverged error if vec, named what, is not finite.
func checkFinite(what string, vec []float32) error {
	if finite(vec) {
		return nil
	}
	return fmt.Errorf("%w: %s has a NaN or Inf value", ErrDiverged, what)
}

// Round returns t, the number of communication rounds done.
func (o *Optimizer) Round() int { return o.round }

// Algorithm returns the algorithm's name.
func (o *Optimizer) Algorithm() string { return o.meth.Name() }

// Nodes returns m.
func (o *Optimizer) Nodes() int { return o.m }

// Dim returns p, the number of parameters per node.
func (o *Optimizer) Dim() int { return o.p }

// Workers returns the number of goroutines doing node work, min(Config.Workers
// or GOMAXPROCS, m): the Oracle is called with worker ids 0..Workers()-1.
func (o *Optimizer) Workers() int { return o.procs }

// Mixing returns the mixing matrix of the round in progress or, between
// rounds, of the last one (New's before the first).
func (o *Optimizer) Mixing() *Mixing { return o.mix }

// Schedule returns the step-size and β schedule.
func (o *Optimizer) Schedule() Schedule { return o.sched }

// Eta returns η_t for t = Round(): the step size of the next round.
func (o *Optimizer) Eta() float64 { return o.sched.Eta(o.round) }

// Beta returns β_t for t = Round(): the weight a [Momentum] method such as
// GT-STORM gave the mixed v in forming the current v_t (0 at t = 0, where
// v_0 is a plain gradient). Methods without momentum (DSGD, GNSD, D²,
// D-GET, CHOCO) have no β and report 0.
func (o *Optimizer) Beta() float64 {
	if _, ok := o.meth.(Momentum); !ok {
		return 0
	}
	return o.sched.Beta(o.round)
}

// Node returns node i's current parameters x_i. The slice aliases the
// optimizer's state: do not modify it, and do not keep it past the next Step,
// Init or Restore.
func (o *Optimizer) Node(i int) []float32 { return o.row(o.x, i) }

// Direction returns node i's tracked direction — GT-STORM's v_i or GNSD's
// y_i — or nil for DSGD. Like Node, it aliases the state.
func (o *Optimizer) Direction(i int) []float32 {
	if o.dir < 0 {
		return nil
	}
	return o.row(o.cur[o.dir], i)
}

// Loss returns the mean over nodes of the minibatch loss of each node's last
// gradient evaluation at its own parameters (GT-STORM: at x_t; GNSD: at x_t;
// DSGD: at x_{t−1}, before its last move); NaN before any.
func (o *Optimizer) Loss() float64 {
	s := 0.0
	for _, l := range o.loss {
		s += l
	}
	return s / float64(o.m)
}

// Close stops the worker goroutines. The optimizer stays usable; a later
// Step starts them again.
func (o *Optimizer) Close() error {
	if o.team != nil {
		o.team.stop()
		o.team = nil
	}
	return nil
}
