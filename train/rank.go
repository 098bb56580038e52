package train

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/cluster"
	"github.com/gtstorm/gtstorm/internal/kernels"
)

// Peers is the data plane of one rank of a run spread over processes: the
// exchange that carries its nodes' vectors to their neighbours on other
// ranks (a transport.Exchange).
type Peers interface {
	decentral.RoundExchange
}

// Control is the control plane of one rank of a run spread over
// processes, over the same connections as its Peers (a
// transport.Control): the gathering of every node's state on rank 0 for
// the metrics.
type Control interface {
	// Gather delivers the states of this rank's nodes after round t to
	// rank 0. On rank 0 it returns the states of every other rank's nodes
	// (in any order); on other ranks, nil once the states are sent.
	Gather(ctx context.Context, round int, states []decentral.NodeState) ([]decentral.NodeState, error)
}

// inputAgreer is a Control that compares every rank's input files with rank 0's
// before the run starts, and refuse a rank whose copy of a file differs:
// the run's settings leave out where the data lie, not what they hold.
type inputAgreer interface {
	AgreeInputs(ctx context.Context, files []cluster.Fingerprint) error
}

// kernelAgreer is an inputAgreer that also tells rank 0 the kernel set
// each rank computes with; rank 0's summary then names every rank's (see
// kernelLister).
type kernelAgreer interface {
	AgreeInputsKernels(ctx context.Context, files []cluster.Fingerprint, kernels string) error
}

// agreeInputs compares, through a control plane that can, this rank's
// input files with the other ranks', telling rank 0 this rank's kernel set
// where the control plane carries it.
func agreeInputs(ctx context.Context, control Control, inputs []InputFile) error {
	files := make([]cluster.Fingerprint, len(inputs))
	for k, f := range inputs {
		files[k] = cluster.Fingerprint{Path: f.Path, Size: f.Size, SHA256: f.SHA256}
	}
	if a, ok := control.(kernelAgreer); ok {
		return a.AgreeInputsKernels(ctx, files, kernels.Name())
	}
	if a, ok := control.(inputAgreer); ok {
		return a.AgreeInputs(ctx, files)
	}
	return nil
}

// waitClock is Peers that time how long their rank waited for its
// neighbours; rank 0's summary then reports the wait per round.
type waitClock interface {
	WaitTime() time.Duration
}

// RankOptions describe one rank of a run spread over processes: which
// rank it is, which rank runs each node, and its two planes: Peers carry
// the round's vectors, Control the gathering and the agreement on the
// inputs. Options.Out is the
// run folder on rank 0 (metrics, summary, curve, model and rank 0's
// checkpoints, as Train writes them) and the rank's own folder for its
// checkpoints elsewhere.
type RankOptions struct {
	Options
	Rank    int
	Owner   []int // Owner[i] is the rank running node i
	Peers   Peers
	Control Control
	// RanksFile, on rank 0 of ranks a cluster placed, is the ranks file
	// it derived, which it writes into Out as RanksFileName once the run holds
	// the folder (nil: none to write).
	RanksFile []byte
}

// rankRole is the role of one rank of a run over several processes.
type rankRole struct {
	id      int
	owner   []int
	peers   Peers
	control Control
	local   []int                 // this rank's nodes
	states  []decentral.NodeState // this rank's nodes' states, reused
}

// newRankRole returns the role of rank opt.Rank, which runs the nodes local.
func newRankRole(local []int, opt RankOptions) *rankRole {
	return &rankRole{id: opt.Rank, owner: opt.Owner, peers: opt.Peers, control: opt.Control,
		local: local, states: make([]decentral.NodeState, len(local))}
}

func (k *rankRole) part() *rankPart {
	return &rankPart{local: k.local, ex: k.peers, measures: k.measures()}
}

// measures reports whether this rank evaluates and writes the run's
// metrics: rank 0.
func (k *rankRole) measures() bool { return k.id == 0 }

// initContext is never cancelled: a rank initialises with its peers
// whatever happens, and stops at the first round.
func (k *rankRole) initContext(ctx context.Context) context.Context {
	return context.WithoutCancel(ctx)
}

func (k *rankRole) announce(io.Writer, *setup) {}

// collect gathers every node's state on rank 0, which evaluates it; a
// rank other than 0 logs its own nodes instead.
func (k *rankRole) collect(ctx context.Context, opt *decentral.Optimizer, progress io.Writer) (bool, error) {
	if err := k.gather(ctx, opt); err != nil {
		return false, err
	}
	if !k.measures() {
		k.logNodes(progress, opt.Round())
		return false, nil
	}
	return true, nil
}

func (k *rankRole) placement() *RankPlacement { return placementOf(k.id, k.owner) }

// kept keeps the checkpoint of round t by its round's name too.
func (k *rankRole) kept(dir string, t int) error { return keepRankCheckpoint(dir, t) }

// lost handles a rank that lost a peer (or failed to measure): the state
// is still that of the last completed round, which a resume starts from,
// unless that round's evaluation did not complete: a resume from it would
// never evaluate it, so the rank keeps its earlier one.
func (k *rankRole) lost(r *runner, err error) error {
	if t := r.s.opt.Round(); r.lastCkp != t && (!r.evaluates(t) || r.measured == t) {
		r.checkpoint()
	}
	if r.lastCkp >= 0 {
		return fmt.Errorf("%w (this rank's checkpoint of round %d is %s)", err, r.lastCkp, filepath.Join(r.out, RankCheckpointFile(r.lastCkp)))
	}
	return nil
}

// waitPerRound is how long the rank waited for its neighbours per round,
// where its Peers time it.
func (k *rankRole) waitPerRound(rounds int) Num {
	if w, ok := k.peers.(waitClock); ok && rounds > 0 {
		return Num(w.WaitTime().Seconds() / float64(rounds))
	}
	return 0
}

// kernelLister is a Control that knows, on rank 0, every rank's kernel set
// (by rank; "" for a rank that did not say), which agreeInputs told it.
type kernelLister interface {
	KernelSets() []string
}

// kernels names this rank's kernel set or, on rank 0 of a run whose
// control plane lists them, every rank's (see kernelSetsName).
func (k *rankRole) kernels() string {
	own := kernels.Name()
	l, ok := k.control.(kernelLister)
	if !ok {
		return own
	}
	sets := l.KernelSets()
	if len(sets) == 0 {
		return own
	}
	sets = slices.Clone(sets)
	sets[0] = own
	return kernelSetsName(sets)
}

// gather sends this rank's node states to rank 0, which imports the others'
// into its optimizer so that every measure covers the whole run.
func (k *rankRole) gather(ctx context.Context, opt *decentral.Optimizer) error {
	for n, i := range opt.Local() {
		k.states[n] = opt.ExportNode(i, k.states[n])
	}
	got, err := k.control.Gather(ctx, opt.Round(), k.states)
	if err != nil {
		return fmt.Errorf("gather round %d: %w", opt.Round(), err)
	}
	if !k.measures() {
		return nil
	}
	seen := 0
	for _, s := range got {
		if s.Node < 0 || s.Node >= len(k.owner) || k.owner[s.Node] == k.id {
			return fmt.Errorf("gather round %d: a state for node %d, which no other rank runs", opt.Round(), s.Node)
		}
		if err := opt.ImportNode(s); err != nil {
			return fmt.Errorf("gather round %d from rank %d: %w", opt.Round(), k.owner[s.Node], err)
		}
		seen++
	}
	if want := len(k.owner) - len(opt.Local()); seen != want {
		return fmt.Errorf("gather round %d: %d node states, want %d", opt.Round(), seen, want)
	}
	return nil
}

// logNodes writes a line on the rank's own nodes after round t: their mean
// minibatch loss and the samples they drew, the progress a rank other than
// 0 can see (rank 0 measures the whole run).
func (k *rankRole) logNodes(w io.Writer, t int) {
	if w == nil || len(k.states) == 0 {
		return
	}
	var loss float64
	var samples int64
	for _, s := range k.states {
		loss += s.Loss
		samples += s.Samples
	}
	fmt.Fprintf(w, "rank %d, round %d: its %d nodes' mean minibatch loss %.4f, %d samples drawn\n",
		k.id, t, len(k.states), loss/float64(len(k.states)), samples)
}

// newRankRunner builds the runner of rank opt.Rank, which runs the nodes
// local of cfg and reads inputs.
func newRankRunner(cfg Config, local []int, inputs []InputFile, opt RankOptions) (*runner, error) {
	if err := cfg.CheckPlacement(opt.Owner); err != nil {
		return nil, err
	}
	r, err := newRunner(cfg, opt.Options, newRankRole(local, opt))
	if err != nil {
		return nil, err
	}
	r.inputs = inputs
	return r, nil
}

// localOf returns the nodes owner assigns to rank, in increasing order.
func localOf(owner []int, rank int) []int {
	var local []int
	for i, r := range owner {
		if r == rank {
			local = append(local, i)
		}
	}
	return local
}

// RunRank runs rank opt.Rank's nodes of cfg from the start, exchanging
// with the other ranks through opt.Peers and opt.Control. Every rank takes the same cfg, so
// each derives the same graph, partition, seeds and initial parameters; the
// run's numbers do not depend on how the nodes are spread (see
// decentral.Config.Local). Rank 0 returns the run's summary and writes its
// folder as Train does; the other ranks return nil and write their own
// checkpoints into their folder.
func RunRank(ctx context.Context, cfg Config, opt RankOptions) (*Summary, error) {
	var local []int
	cfg, inputs, unlock, err := startRun(cfg, opt.Options, func(cfg Config) error {
		if err := opt.check(cfg); err != nil {
			return err
		}
		if local = localOf(opt.Owner, opt.Rank); len(local) == 0 {
			return fmt.Errorf("rank %d runs no node", opt.Rank)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := writeRanksFile(opt, opt.Overwrite); err != nil {
		return nil, err
	}
	p := &plan{cfg: cfg, inputs: inputs, measured: -1}
	return executeRank(ctx, p, local, opt)
}

// check refuses options that do not place every node of cfg, or lack
// the planes to reach the other ranks.
func (opt RankOptions) check(cfg Config) error {
	switch {
	case len(opt.Owner) != cfg.Nodes:
		return fmt.Errorf("rank %d: %d node owners for %d nodes", opt.Rank, len(opt.Owner), cfg.Nodes)
	case opt.Peers == nil || opt.Control == nil:
		return fmt.Errorf("rank %d: no peers", opt.Rank)
	}
	return nil
}

// executeRank executes the plan p as rank opt.Rank, which runs the nodes
// local, once its inputs agree with the other ranks'.
func executeRank(ctx context.Context, p *plan, local []int, opt RankOptions) (*Summary, error) {
	if err := agreeInputs(ctx, opt.Control, p.inputs); err != nil {
		return nil, err
	}
	if err := p.cfg.CheckPlacement(opt.Owner); err != nil {
		return nil, err
	}
	return execute(ctx, p, opt.Options, newRankRole(local, opt))
}
