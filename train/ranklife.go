package train

import (
	"context"
	"fmt"
	"io"
	"time"
)

// RankControl is the control plane of one rank through its whole life (a
// transport.Control): besides gathering the states, it agrees with the
// other ranks on the round to resume from, tells them when this rank
// stops, and gives up the waits of a rank told to stop.
type RankControl interface {
	Control
	// AgreeRound returns the latest of rounds that every rank keeps.
	AgreeRound(ctx context.Context, rounds []int) (int, error)
	// Leave tells the other ranks that this rank stops, and why.
	Leave(ctx context.Context, why string) error
	// Abort ends the waits in progress and to come with err.
	Abort(err error)
}

// RankLink is one rank's connection to the others, which the caller makes
// (the command line makes a transport.Exchange): train does not depend on
// the transport.
type RankLink struct {
	Peers   Peers
	Control RankControl
	// Start connects to the other ranks.
	Start func(ctx context.Context) error
	// Stats describes the link's work (bytes, waits) in a line.
	Stats func() string
	// Close closes the connections.
	Close func() error
}

// RankJob is one rank of a run over several processes, from its start to
// its leave: its options (RankOptions.Peers and Control are the link's),
// its settings and where it starts.
type RankJob struct {
	RankOptions
	// Config is the run's settings: those of Checkpoint when resuming.
	Config Config
	// Checkpoint is the rank's checkpoint it resumes from; nil for a
	// fresh run.
	Checkpoint *RankCheckpoint
	// Agree resumes from the latest round every rank keeps, which the
	// ranks agree on once connected, instead of Checkpoint's round.
	Agree bool
	// Iters, when resuming and not 0, is the round count the run is
	// resumed to, as Resume's iters (every rank must be given the same;
	// Config.Iters is then Iters, so that the ranks' settings agree).
	Iters int
	// Connect makes the rank's link, once the placement is checked; it
	// starts nothing.
	Connect func() (*RankLink, error)
	// PeerTimeout bounds how long a leaving rank waits for its peers,
	// with leaveTimeout.
	PeerTimeout time.Duration
	// StopReason says in a few words why the rank stops, for its peers:
	// nil says "finished", or "failed: " and the error.
	StopReason func(error) string
}

// ErrWaitInterrupted ends the waits of a rank told to stop while a peer
// keeps it waiting: the round in progress is dropped, and the rank's
// checkpoint is of the last round it completed.
var ErrWaitInterrupted = fmt.Errorf("%w while waiting for peers", ErrInterrupted)

// signalGrace is how long a rank told to stop (its ctx cancelled) lets the
// round in progress finish before it gives up waiting for its peers.
const signalGrace = 2 * time.Second

// leaveTimeout bounds how long a stopping rank waits for its peers to take
// its goodbye.
const leaveTimeout = 5 * time.Second

// RunRankJob runs the rank j describes through its whole life: it checks
// the placement before it connects, connects, agrees on the round to
// resume from where j.Agree, runs its nodes (RunRank, or ResumeRank) and
// leaves, telling its peers why. A cancelled ctx stops the rank after the
// current round; where its peers keep it waiting longer than signalGrace,
// its waits end with ErrWaitInterrupted. Notes go to j.Progress. It
// returns rank 0's summary and, where the run began, the link's Stats
// ("" where it did not).
func RunRankJob(ctx context.Context, j RankJob) (sum *Summary, stats string, err error) {
	if err := j.Config.CheckPlacement(j.Owner); err != nil {
		return nil, "", err // on every rank, before it connects
	}
	if j.Checkpoint != nil {
		// Another rank count, or other node lines, would resume each node
		// beside other neighbours: refuse before connecting.
		if err := j.Checkpoint.CheckPlacement(j.Rank, j.Owner); err != nil {
			return nil, "", err
		}
	}
	link, err := j.Connect()
	if err != nil {
		return nil, "", err
	}
	if err := link.Start(ctx); err != nil {
		return nil, "", err
	}
	log := j.Progress
	if log == nil {
		log = io.Discard
	}
	running := make(chan struct{})
	defer close(running) // after the leave below
	go abortAfterSignal(ctx, running, link.Control, j.Rank, log)
	defer func() {
		// Tell the peers this rank stops, so that they stop waiting for it
		// at once, and let them take what it sent before it closes.
		lctx, cancel := context.WithTimeout(context.Background(), min(j.PeerTimeout, leaveTimeout))
		defer cancel()
		if lerr := link.Control.Leave(lctx, j.stopReason(err)); lerr != nil {
			fmt.Fprintf(log, "rank %d: note: %v\n", j.Rank, lerr)
		}
		link.Close()
	}()
	j.Peers, j.Control = link.Peers, link.Control
	resume := -1
	if j.Checkpoint != nil {
		resume = j.Checkpoint.Round
	}
	if j.Agree {
		rounds, err := RankCheckpoints(j.Out)
		if err != nil {
			return nil, "", err
		}
		if resume, err = link.Control.AgreeRound(ctx, rounds); err != nil {
			return nil, "", err
		}
		fmt.Fprintf(log, "rank %d: resuming from round %d, the latest all ranks kept\n", j.Rank, resume)
	}
	if resume >= 0 {
		sum, err = resumeRank(ctx, resume, j.Iters, j.RankOptions)
	} else {
		sum, err = RunRank(ctx, j.Config, j.RankOptions)
	}
	return sum, link.Stats(), err
}

// stopReason says why the rank stops with err, for its peers.
func (j *RankJob) stopReason(err error) string {
	switch {
	case j.StopReason != nil:
		return j.StopReason(err)
	case err == nil:
		return "finished"
	}
	return "failed: " + err.Error()
}

// abortAfterSignal waits until ctx is done (a signal) and, unless running
// is closed within signalGrace after it, aborts the rank's waits through
// its control plane c: a rank waiting on a dead peer honours a signal
// promptly instead of after the peer timeout.
func abortAfterSignal(ctx context.Context, running <-chan struct{}, c RankControl, rank int, log io.Writer) {
	select {
	case <-running:
		return
	case <-ctx.Done():
	}
	t := time.NewTimer(signalGrace)
	defer t.Stop()
	select {
	case <-running:
	case <-t.C:
		fmt.Fprintf(log, "rank %d: still waiting for peers %v after the stop; dropping the round in progress\n", rank, signalGrace)
		c.Abort(ErrWaitInterrupted)
	}
}
