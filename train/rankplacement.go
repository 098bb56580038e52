package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gtstorm/gtstorm/decentral/cluster"
	"github.com/gtstorm/gtstorm/internal/atomicfile"
)

// RankPlacement is where a rank's checkpoint was written: by which rank,
// of how many, and with which rank running each node. A resumed rank must
// run under the same placement: another rank count gives every node other
// neighbours on other ranks, and a resume under it ends with wrong numbers.
type RankPlacement struct {
	Rank  int    `json:"rank"`
	Ranks int    `json:"ranks"`
	Owner string `json:"owner"` // SHA-256 of the node owners, in hex
}

// placementOf returns the placement of rank under owner, where owner[i]
// is the rank running node i and every rank runs a node.
func placementOf(rank int, owner []int) *RankPlacement {
	ranks := 0
	h := sha256.New()
	var b [8]byte
	for _, r := range owner {
		ranks = max(ranks, r+1)
		binary.LittleEndian.PutUint64(b[:], uint64(r))
		h.Write(b[:])
	}
	return &RankPlacement{Rank: rank, Ranks: ranks, Owner: hex.EncodeToString(h.Sum(nil))}
}

// PlacementError is a rank checkpoint resumed under another placement
// than the one it was written under.
type PlacementError struct {
	Path  string        // the checkpoint
	Had   RankPlacement // what it was written under
	Rank  int           // the resuming rank
	Ranks int           // and its rank count
}

func (e *PlacementError) Error() string {
	switch {
	case e.Ranks != e.Had.Ranks:
		return fmt.Sprintf("%s was written by rank %d of a run over %d ranks, not %d: resume the run with its %d ranks", e.Path, e.Had.Rank, e.Had.Ranks, e.Ranks, e.Had.Ranks)
	case e.Rank != e.Had.Rank:
		return fmt.Sprintf("%s was written by rank %d, not rank %d: give each rank its own folder", e.Path, e.Had.Rank, e.Rank)
	}
	return fmt.Sprintf("%s was written with other nodes on rank %d (the ranks file's node lines changed): resume with the ranks file the run started with", e.Path, e.Rank)
}

// check refuses a resume of the checkpoint at path, written under had
// (nil in earlier releases, which cannot be checked), by rank of a run
// whose nodes owner places.
func (had *RankPlacement) check(path string, rank int, owner []int) error {
	if had == nil {
		return nil
	}
	now := placementOf(rank, owner)
	if *now != *had {
		return &PlacementError{Path: path, Had: *had, Rank: rank, Ranks: now.Ranks}
	}
	return nil
}

// RankCheckpoint is what a rank's checkpoint of one round says of its
// run, read once before the rank connects: the settings a resumed rank
// runs with, the placement it was written under and the inputs it read.
type RankCheckpoint struct {
	Path   string
	Round  int
	Config Config
	// Placement is nil in the checkpoints of releases that did not
	// record it.
	Placement *RankPlacement
	inputs    []InputFile
}

// ReadRankCheckpoint reads a rank's checkpoint of round t in dir, or its
// latest when t < 0.
func ReadRankCheckpoint(dir string, t int) (*RankCheckpoint, error) {
	if t < 0 {
		rounds, err := RankCheckpoints(dir)
		if err != nil || len(rounds) == 0 {
			return nil, fmt.Errorf("resume %s: no checkpoint of this rank (%v)", dir, err)
		}
		t = rounds[len(rounds)-1]
	}
	path := filepath.Join(dir, RankCheckpointFile(t))
	ck, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	return &RankCheckpoint{Path: path, Round: t, Config: ck.meta.Config, Placement: ck.meta.Placement, inputs: ck.meta.Inputs}, nil
}

// CheckPlacement refuses to resume the checkpoint as rank of a run whose
// node i runs on rank owner[i], where that is another placement than the
// one it was written under. A rank checks before it connects, so that a
// resubmitted job with another task count stops at once, naming the count
// the checkpoints were written with.
func (c *RankCheckpoint) CheckPlacement(rank int, owner []int) error {
	return c.Placement.check(c.Path, rank, owner)
}

// CheckInputs refuses to resume the checkpoint with the settings given,
// whose input files (data, edge list, speeds) hold other content than
// those the run started with: --data-dir may name another path on another
// host, but not other data. Files are compared by size and SHA-256, in the
// order the run reads them, not by path.
func (c *RankCheckpoint) CheckInputs(given Config) error {
	if c.inputs == nil {
		return nil // an earlier release's checkpoint: reopenRun checks the paths it names
	}
	given, err := given.Resolved()
	if err != nil {
		return err
	}
	now, err := inputFiles(given, nil)
	if err != nil {
		return err
	}
	if d := inputsDiffer(c.inputs, now); d != "" {
		return fmt.Errorf("%s: %s; give the run's data, or another --out", c.Path, d)
	}
	return nil
}

// CheckUnchanged refuses to resume the checkpoint where a file it read
// (data, edge list, speeds), at the path it read it from, changed since
// the run started: launch --resume checks this once, before it starts the
// ranks, each of which would refuse on its own.
func (c *RankCheckpoint) CheckUnchanged() error {
	if c.inputs == nil {
		return nil // an earlier release's checkpoint: each rank checks the paths it names
	}
	now, err := inputFiles(c.Config, nil)
	if err != nil {
		return err
	}
	if d := inputsChanged(c.inputs, now); d != "" {
		return fmt.Errorf("%w: %s; the run must continue on the files it started with", ErrInputsChanged, d)
	}
	return nil
}

// RunPlacement returns the placement under which the latest rank
// checkpoint in dir was written: nil, with no error, where dir holds no
// rank checkpoint or one of a release that did not record it.
func RunPlacement(dir string) (*RankPlacement, error) {
	rounds, err := RankCheckpoints(dir)
	if err != nil || len(rounds) == 0 {
		return nil, nil
	}
	ck, err := ReadRankCheckpoint(dir, rounds[len(rounds)-1])
	if err != nil {
		return nil, err
	}
	return ck.Placement, nil
}

// RankRunError is `resume` in the folder of a run over several processes:
// its checkpoint holds only one rank's nodes, which every rank must resume
// together.
type RankRunError struct {
	Dir   string
	Ranks int // 0 where the checkpoints predate recording it
}

func (e *RankRunError) Error() string {
	if e.Ranks > 0 {
		return fmt.Sprintf("%s holds rank 0's part of a run over %d ranks, which the ranks resume together", e.Dir, e.Ranks)
	}
	return fmt.Sprintf("%s holds rank 0's part of a run over several ranks, which the ranks resume together", e.Dir)
}

// refuseRankRun refuses a single-process resume of the folder out, whose
// checkpoint ck was written by rank 0 of a run over several processes
// (older releases did not record it; their rank checkpoints show it).
func refuseRankRun(out string, ck *resumeState) error {
	if p := ck.meta.Placement; p != nil {
		return &RankRunError{Dir: out, Ranks: p.Ranks}
	}
	if rounds, _ := RankCheckpoints(out); len(rounds) > 0 {
		return &RankRunError{Dir: out}
	}
	return nil
}

// The names a run over several processes adds to its run folder, beside
// rank 0's outputs: these, and nowhere else, spell them.
const (
	// RanksFileName is the ranks file rank 0 of ranks a cluster placed
	// (or launch) writes into the run folder, which launch's resume reads.
	RanksFileName = "ranks.txt"
	// RanksDir is the folder of the run folder that holds the folders of
	// the ranks but 0 (see RankDir).
	RanksDir = "ranks"
	// CertsDir is the folder of the run folder where launch writes the
	// run's certificates.
	CertsDir = "certs"
)

// RankDir returns rank r's folder in the run folder out: out itself for
// rank 0, out/ranks/rank-R for the others.
func RankDir(out string, r int) string {
	if r == 0 {
		return out
	}
	return filepath.Join(out, RanksDir, fmt.Sprintf("rank-%d", r))
}

// writeRanksFile writes opt.RanksFile into opt.Out, which the run holds,
// as RanksFileName. Unless replace, it refuses a ranks file there that
// lists another number of ranks: another run's (a resubmitted job's may
// list other hosts, and is replaced).
func writeRanksFile(opt RankOptions, replace bool) error {
	if opt.RanksFile == nil {
		return nil
	}
	path := filepath.Join(opt.Out, RanksFileName)
	if !replace {
		old, err := cluster.ReadRanksFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Errorf("%s: not a ranks file, and a rank replaces no other file (%w)", path, err)
		default:
			now, err := cluster.ParseRanks(bytes.NewReader(opt.RanksFile), path)
			if err != nil {
				return err
			}
			if old.Len() != now.Len() {
				return fmt.Errorf("%s lists %d ranks, this run %d: it belongs to another run; choose another folder, or pass --force", path, old.Len(), now.Len())
			}
		}
	}
	return atomicfile.WriteBytes(path, opt.RanksFile)
}
