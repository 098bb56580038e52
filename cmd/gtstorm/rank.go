package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/gtstorm/gtstorm/decentral/cluster"
	"github.com/gtstorm/gtstorm/decentral/cluster/certs"
	"github.com/gtstorm/gtstorm/decentral/cluster/transport"
	"github.com/gtstorm/gtstorm/train"
)

// hashOmits are the settings left out of the config hash ranks compare at
// connect: they do not change results (goroutines, the memory limit) or
// may differ between hosts (where the data lies; its content is
// fingerprinted in the run's inputs).
var hashOmits = []string{"workers", "max_memory", "data_dir"}

// runRank runs one rank of a run spread over processes: `gtstorm rank`.
func runRank(args []string, stdout, stderr io.Writer) error {
	return rankCommand("rank", args, stdout, stderr)
}

// runNodeAlias is `gtstorm node`, rank's former name.
func runNodeAlias(args []string, stdout, stderr io.Writer) error {
	return rankCommand("node", args, stdout, stderr)
}

// rankCommand runs the rank command under the name it was called by.
func rankCommand(name string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(name, rankUsage(name), stdout)
	cfg := train.Default()
	cfg.Flags(fs)
	var rf rankFlags
	rf.register(fs)
	var pf placeFlags
	pf.register(fs)
	rank := fs.Int("rank", -1, "this process's rank, from 0")
	ranksFile := fs.String("ranks", "", "the ranks FILE: one host:port per rank, in rank order")
	out := fs.String("out", "", "this rank's folder: the run folder on rank 0 (default runs/<timestamp>-<algo>-<dataset>, and -rank<R> after it on the others)")
	force := fs.Bool("force", false, "replace a previous run's outputs in --out")
	resume := fs.Int("resume-round", -1, "restart this rank from its checkpoint of round R in --out: the latest round every rank keeps (the run settings are the checkpoint's; --iters, the same on every rank, resumes to another round count)")
	agree := fs.Bool("resume", false, "restart this rank from its checkpoints in --out: the ranks agree on the latest round all of them keep")
	launched := fs.String("launched-run", "", "set by `gtstorm launch`: the run folder, which the advice after a stop names; the rank stops when launch's pipe on its stdin closes")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkResumeFlags(*agree, *resume, *pf.either); err != nil {
		return err
	}
	if cfg.SimulatesNetwork() {
		return errSimulatedOverRanks(name)
	}
	place, err := pf.place(*rank, *ranksFile)
	if err != nil {
		return err
	}
	*rank = place.rank
	rk := place.ranks
	runOut := *out // the run folder, where rank 0 writes ranks.txt
	if *out, err = place.folder(*out); err != nil {
		return err
	}
	resumes := pf.resumes(*out)
	if *pf.either && !resumes {
		if err := missingRankCheckpoints(runOut, *out, *rank); err != nil {
			return err
		}
	}
	var ck *train.RankCheckpoint
	if cfg, *agree, ck, err = rankStart(fs, cfg, *out, *resume, *agree, resumes); err != nil {
		return err
	}
	if ck == nil {
		// A fresh start: refuse a bad setting before the transport starts
		// (a NaN cannot even be hashed) and a missing --data-dir before
		// anything is written.
		if err := cfg.Validate(); err != nil {
			return runError(err)
		}
	}
	if err := checkDataDirs(cfg); err != nil {
		return err
	}
	if err := rf.check(rk.Addrs); err != nil {
		return err
	}
	*out = rankOut(*out, cfg, *rank)
	place.announce(cmp.Or(runOut, *out), stderr)
	ctx, stop := signalContext(stderr, *out)
	defer stop()
	if *launched != "" {
		var lost func()
		ctx, lost = followLaunch(ctx, *rank, stderr)
		defer lost()
	}
	opt := progressOptions(*out, stderr)
	opt.Overwrite = *force
	iters := 0
	if ck != nil && !*pf.either && isSet(fs, "iters") {
		iters = cfg.Iters // resumed to that count, as resume --iters
	}
	sum, stats, err := rf.run(ctx, cfg, *rank, rk, train.RankOptions{Options: opt, RanksFile: place.ranksFile()}, ck, *agree, iters, stderr)
	reportRankEnd(stderr, *rank, stats, err)
	if err != nil {
		return runError(withResume(err, resumeAdvice(*launched, place, *ranksFile, rf.security(), *out)))
	}
	if sum != nil {
		printSummary(stdout, *out, sum)
	}
	return nil
}

// rankUsage is the usage line and description of the rank command called
// name.
func rankUsage(name string) string {
	return name + " [--rank R --ranks FILE] (--certs DIR | --insecure) [run flags]\n\n" +
		"Runs rank R's nodes of the run the flags describe, talking to the other ranks over\n" +
		"gRPC with mutual TLS. Every rank takes the same run flags; the ranks FILE lists one\n" +
		"host:port per rank (and optionally `node I R` lines placing node I on rank R).\n" +
		"Under srun or in a Kubernetes StatefulSet, without --rank and --ranks, the rank and\n" +
		"the ranks come from the environment (see deploy/README.md), and a rank R > 0 keeps\n" +
		"its part under --out/ranks/rank-R. Rank 0 writes the run folder as `gtstorm train` does."
}

// checkResumeFlags refuses more than one of --resume (agree),
// --resume-round (resume ≥ 0) and --resume-or-start (either).
func checkResumeFlags(agree bool, resume int, either bool) error {
	if (agree || resume >= 0) && either {
		return usagef("--resume-or-start: give it alone, without --resume or --resume-round")
	}
	if agree && resume >= 0 {
		return usagef("--resume-round: give either --resume or --resume-round R")
	}
	return nil
}

// rankOut returns the rank's folder: out, or by default cfg's run folder,
// with -rank<R> after it on a rank R > 0.
func rankOut(out string, cfg train.Config, rank int) string {
	if out != "" {
		return out
	}
	out = cfg.DefaultOut(time.Now())
	if rank > 0 {
		out += fmt.Sprintf("-rank%d", rank)
	}
	return out
}

// reportRankEnd writes to stderr the transport's figures stats of a rank
// whose run ended with err and, where err blames another rank, a line
// naming it.
func reportRankEnd(stderr io.Writer, rank int, stats string, err error) {
	if stats != "" { // empty where the transport never started
		fmt.Fprintf(stderr, "rank %d: %s\n", rank, stats)
	}
	if b, ok := transport.Blame(err); ok && b != rank {
		// Read by launch, which names the rank most others waited for.
		fmt.Fprintf(stderr, "%s\n", blameLine(rank, b))
	}
}

// followLaunch returns ctx, cancelled when launch dies (its end of the
// pipe on stdin closes), so that the rank stops as a signal stops it.
func followLaunch(ctx context.Context, rank int, stderr io.Writer) (context.Context, func()) {
	return followLauncher(ctx, os.Stdin, func() {
		fmt.Fprintf(stderr, "rank %d: launch is gone; stopping after the current round\n", rank)
	})
}

// resumeAdvice returns the command that continues a stopped rank: launch's
// resume for a launched run, the job's command again for a rank a cluster
// started, else the rank's own command with --resume.
func resumeAdvice(launched string, place placement, ranksFile, security, out string) string {
	switch {
	case launched != "":
		return "gtstorm launch --resume --out " + launched
	case place.env != nil:
		return "the same command on every rank with --resume-or-start (submit the job again), or --resume"
	}
	return fmt.Sprintf("gtstorm rank --rank %d --ranks %s %s --resume --out %s, and --resume on every other rank", place.rank, ranksFile, security, out)
}

// rankStart resolves where a rank in folder dir starts: from scratch (no
// checkpoint), from its checkpoint of round resume, or, with agree, from
// the latest round every rank keeps, which the ranks agree on once
// connected. either (--resume-or-start finding checkpoints in dir) resumes as agree
// does, once the flags are checked to describe the checkpoints' run. A
// resumed rank runs with its checkpoint's settings, which it returns with
// the checkpoint (nil from scratch), read once.
func rankStart(fs *flag.FlagSet, cfg train.Config, dir string, resume int, agree, either bool) (train.Config, bool, *train.RankCheckpoint, error) {
	if either {
		ck, err := train.ReadRankCheckpoint(dir, -1)
		if err != nil {
			return cfg, false, nil, err
		}
		if err := sameSettings(cfg, dir, ck); err != nil {
			return cfg, false, nil, err
		}
		return ck.Config, true, ck, nil
	}
	if agree && dir == "" {
		return cfg, false, nil, usagef("--resume: want --out, the rank's folder")
	}
	if !agree && resume < 0 {
		return cfg, false, nil, nil
	}
	if dir == "" {
		return cfg, false, nil, usagef("--resume-round: want --out, the rank's folder")
	}
	var ck *train.RankCheckpoint
	if agree {
		// The latest, for the settings; the round is agreed once connected.
		var err error
		if ck, err = train.ReadRankCheckpoint(dir, -1); err != nil {
			return cfg, false, nil, err
		}
	}
	if name, ok := givenSetting(fs, "iters"); ok {
		return cfg, false, nil, usagef("--%s: a resumed rank runs with its checkpoint's settings; give none but --iters", name)
	}
	if ck == nil {
		var err error
		if ck, err = train.ReadRankCheckpoint(dir, resume); err != nil {
			return cfg, false, nil, err
		}
	}
	resumed := ck.Config
	if isSet(fs, "iters") {
		if cfg.Iters < 1 {
			return cfg, false, nil, usagef("--iters %d: want the round count to resume to (at least the rounds done)", cfg.Iters)
		}
		// Resumed to another round count, as resume --iters: the rank
		// checks it against the round it resumes from.
		resumed.Iters = cfg.Iters
	}
	return resumed, agree, ck, nil
}

// missingRankCheckpoints refuses --resume-or-start on a rank with no
// checkpoint in its folder dir where the run folder runOut holds rank 0's:
// the job was resubmitted with more tasks than the run has ranks, or this
// rank's checkpoints are gone, and starting afresh beside resumed ranks
// would only time out.
func missingRankCheckpoints(runOut, dir string, rank int) error {
	if runOut == "" || runOut == dir {
		return nil
	}
	p, err := train.RunPlacement(runOut)
	if err != nil {
		return err
	}
	switch {
	case p != nil && rank >= p.Ranks:
		return fmt.Errorf("--resume-or-start: %s holds checkpoints of a run over %d ranks, which has no rank %d: submit the job again with %d tasks", runOut, p.Ranks, rank, p.Ranks)
	case p != nil:
		return fmt.Errorf("--resume-or-start: %s holds checkpoints of a run over %d ranks, but rank %d has none in %s: restore them, or start the run again in another folder", runOut, p.Ranks, rank, dir)
	}
	return nil
}

// givenSetting returns the first run setting given on fs's command line.
func givenSetting(fs *flag.FlagSet, except ...string) (string, bool) {
	for _, s := range train.Settings() {
		if isSet(fs, s.Name) && !slices.Contains(except, s.Name) {
			return s.Name, true
		}
	}
	return "", false
}

// rankFlags are the flags of a rank's network side.
type rankFlags struct {
	certDir     *string
	insecure    *bool
	peerTimeout *time.Duration
}

func (rf *rankFlags) register(fs *flag.FlagSet) {
	rf.certDir = fs.String("certs", "", "folder of ca.pem and this rank's rank-R.pem and rank-R-key.pem (see `gtstorm certs`)")
	rf.insecure = fs.Bool("insecure", false, "talk in plaintext without certificates: only when every rank is on a loopback address")
	rf.peerTimeout = fs.Duration("peer-timeout", 60*time.Second, "how long a silent neighbour is retried before the run stops naming it")
}

// security returns the security flag a rank runs with, for advice.
func (rf *rankFlags) security() string {
	if *rf.insecure {
		return "--insecure"
	}
	return "--certs " + *rf.certDir
}

// check refuses a missing choice of security, plaintext off loopback and
// a timeout that is not positive.
func (rf *rankFlags) check(addrs []string) error {
	switch {
	case *rf.peerTimeout <= 0:
		return usagef("--peer-timeout %v: want a positive duration", *rf.peerTimeout)
	case *rf.insecure && *rf.certDir != "":
		return usagef("--insecure: give either --certs or --insecure")
	case !*rf.insecure && *rf.certDir == "":
		return usagef("--certs: want the certificates folder (gtstorm certs), or --insecure for plaintext on loopback")
	}
	if *rf.insecure {
		for r, a := range addrs {
			if !transport.Loopback(a) {
				return usagef("--insecure: rank %d's address %s is not a loopback address; plaintext is allowed on loopback only", r, a)
			}
		}
	}
	return nil
}

// errSimulatedOverRanks refuses a simulated network to a command that runs
// ranks: the network model needs every node in one process.
func errSimulatedOverRanks(cmd string) error {
	return usagef("%s: a simulated network (--link-latency, --link-bandwidth, --compute, --stragglers, --speeds) needs every node in one process; use gtstorm train", cmd)
}

// run runs the rank's nodes over a transport it makes, from the start or,
// with ck, from the rank's checkpoint ck (with agree, from the latest round
// all ranks keep, which they agree on through rank 0); it returns rank 0's
// summary and the transport's figures. The rank's life, from the placement
// checks to its leave, is train.RunRankJob's.
// iters, where not 0, is the round count a resumed rank goes to (--iters
// with --resume).
func (rf *rankFlags) run(ctx context.Context, cfg train.Config, rank int, rk *cluster.Ranks, ro train.RankOptions, ck *train.RankCheckpoint, agree bool, iters int, stderr io.Writer) (*train.Summary, string, error) {
	owner, err := rk.Assign(cfg.Nodes)
	if err != nil {
		return nil, "", err
	}
	ro.Rank, ro.Owner = rank, owner
	return train.RunRankJob(ctx, train.RankJob{
		RankOptions: ro, Config: cfg, Checkpoint: ck, Agree: agree, Iters: iters,
		Connect:     func() (*train.RankLink, error) { return rf.connect(cfg, rank, rk, owner, stderr) },
		PeerTimeout: *rf.peerTimeout, StopReason: stopReason,
	})
}

// connect makes the transport of rank, whose node i runs on rank
// owner[i], without starting it.
func (rf *rankFlags) connect(cfg train.Config, rank int, rk *cluster.Ranks, owner []int, stderr io.Writer) (*train.RankLink, error) {
	hash, err := cluster.ConfigHash(cfg, hashOmits...)
	if err != nil {
		return nil, err
	}
	tc := transport.Config{
		Rank: rank, Addrs: rk.Addrs, Owner: func(i int) int { return owner[i] }, Nodes: cfg.Nodes,
		Insecure: *rf.insecure, PeerTimeout: *rf.peerTimeout, ConfigHash: hash,
		Logf: lockedLogf(stderr),
	}
	if !*rf.insecure {
		m, err := certs.Load(*rf.certDir, rank)
		if err != nil {
			return nil, err
		}
		tc.TLS = transport.TLSOf(m)
	}
	x, err := transport.New(tc)
	if err != nil {
		return nil, err
	}
	return &train.RankLink{
		Peers: x, Control: x.Control(), Start: x.Start, Close: x.Close,
		Stats: func() string { return statsLine(x.Stats(), cfg.Iters) },
	}, nil
}

// statsLine describes the transport's work: bytes and the time spent
// waiting for neighbours.
func statsLine(s transport.Stats, rounds int) string {
	per := time.Duration(0)
	if s.Waits > 0 {
		per = s.Wait / time.Duration(s.Waits)
	}
	return fmt.Sprintf("network: sent %.1f MB, received %.1f MB; waited %.2f s on neighbours over %d rounds (%v per round)",
		float64(s.BytesSent)/1e6, float64(s.BytesRecv)/1e6, s.Wait.Seconds(), s.Waits, per.Round(time.Microsecond))
}

// lockedLogf returns a Logf writing whole lines to w from any goroutine.
func lockedLogf(w io.Writer) func(string, ...any) {
	l := &lineWriter{w: w}
	return func(format string, args ...any) { l.line(fmt.Sprintf(format, args...)) }
}
