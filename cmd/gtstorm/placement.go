package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gtstorm/gtstorm/decentral/cluster"
	"github.com/gtstorm/gtstorm/train"
)

// placeFlags are the flags of a rank that a cluster's launcher starts
// (srun, a StatefulSet) and that takes its place from the environment.
type placeFlags struct {
	basePort *int
	count    *int
	service  *string
	either   *bool
}

func (pf *placeFlags) register(fs *flag.FlagSet) {
	pf.basePort = fs.Int("base-port", 29400, "under Slurm or Kubernetes: the port a rank listens on (Slurm: plus SLURM_LOCALID, the task's index on its node)")
	pf.count = fs.Int("ranks-count", 0, "in a Kubernetes StatefulSet: the number of ranks, its replicas (0: $GTSTORM_RANKS)")
	pf.service = fs.String("service", "", "in a Kubernetes StatefulSet: its headless Service, whose DNS names the pods (default $GTSTORM_SERVICE, then the StatefulSet's name)")
	pf.either = fs.Bool("resume-or-start", false, "resume from this rank's checkpoints in --out when it has any (the ranks agree on the round), else start the run the flags describe: one command line for a job that may be resubmitted")
}

// placement is where a rank runs: its rank, the ranks, and, when they
// came from a launcher's environment, from where.
type placement struct {
	rank  int
	ranks *cluster.Ranks
	env   *cluster.Placement // nil for --rank and --ranks
}

// place returns the rank's placement: --rank and --ranks when both are
// given; otherwise what the launcher's environment gives, with either flag
// still winning over it. Without either there is nothing to go on.
func (pf *placeFlags) place(rank int, ranksFile string) (placement, error) {
	var p placement
	if rank < 0 || ranksFile == "" {
		host, _ := os.Hostname()
		env, err := cluster.FromEnv(os.Getenv, host, cluster.EnvOptions{BasePort: *pf.basePort, Service: *pf.service, Count: *pf.count})
		if err != nil {
			return p, usagef("%v", err)
		}
		if env == nil {
			return p, usagef("--ranks: want the ranks FILE (one host:port per rank) and --rank, or run under srun or in a Kubernetes StatefulSet")
		}
		p.env, p.rank, p.ranks = env, env.Rank, env.Ranks
	}
	if ranksFile != "" {
		rk, err := cluster.ReadRanksFile(ranksFile)
		if err != nil {
			return p, err
		}
		p.ranks = rk
	}
	if rank >= 0 {
		p.rank = rank
	}
	if p.rank >= len(p.ranks.Addrs) {
		return p, usagef("--rank %d: want a rank of [0, %d), the ranks %s lists", p.rank, len(p.ranks.Addrs), p.ranks.Name)
	}
	return p, nil
}

// folder returns the rank's folder for --out out: with a placement from
// the environment every task gets the same --out, the run folder, and a
// rank R > 0 keeps its part under out/ranks/rank-R, as with launch.
// Every rank refuses a missing --out, rank 0 too, so that none waits for
// the others or leaves a folder behind.
func (p placement) folder(out string) (string, error) {
	if p.env == nil {
		return out, nil
	}
	if out == "" {
		return "", usagef("--out: want the run folder: ranks placed by %s get one command line", p.ranks.Name)
	}
	return train.RankDir(out, p.rank), nil
}

// announce prints where the placement came from and where rank 0 writes
// the ranks file it derived: into the run folder out, once the run holds
// it (see ranksFile).
func (p placement) announce(out string, stderr io.Writer) {
	if p.env == nil {
		return
	}
	fmt.Fprintf(stderr, "rank %d of %d from %s; ranks file %s\n", p.rank, len(p.ranks.Addrs), p.env.Source, filepath.Join(out, train.RanksFileName))
}

// ranksFile returns the ranks file rank 0 writes into the run folder once
// it holds it: the one derived from the environment; nil on other ranks
// and where the ranks came from --ranks.
func (p placement) ranksFile() []byte {
	if p.env == nil || p.rank != 0 {
		return nil
	}
	return p.ranks.Marshal()
}

// resumes reports whether --resume-or-start finds this rank's checkpoints
// in dir, so that the rank resumes instead of starting.
func (pf *placeFlags) resumes(dir string) bool {
	if !*pf.either {
		return false
	}
	rounds, err := train.RankCheckpoints(dir)
	return err == nil && len(rounds) > 0
}

// sameSettings refuses --resume-or-start flags cfg that describe another
// run than the one of ck, this rank's latest checkpoint in dir, naming the
// settings that differ (those that cannot change results aside) or the
// input file whose content does.
func sameSettings(cfg train.Config, dir string, ck *train.RankCheckpoint) error {
	given, err := cfg.Resolved()
	if err != nil {
		return err
	}
	if d := train.ConfigDifferences(ck.Config, given, hashOmits...); len(d) > 0 {
		return usagef("--resume-or-start: %s holds a run of other settings (%s); give its flags, or another --out", dir, strings.Join(d, ", "))
	}
	if err := ck.CheckInputs(cfg); err != nil {
		return fmt.Errorf("--resume-or-start: %w", err)
	}
	return nil
}
