package train

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train/curves"
)

// Row is one line of metrics.csv: the state of the run after Round rounds.
// In a run with Byzantine nodes the measures count the honest nodes only
// (summary.json lists the Byzantine ones).
type Row struct {
	Round        int     // communication rounds done
	TestAcc      float64 // test accuracy of the averaged model x̄
	TestLoss     float64 // test loss of x̄
	LocalTestAcc float64 // mean test accuracy of the local models x_i
	TrainLoss    float64 // mean minibatch loss of the nodes' last gradient evaluations
	Consensus    float64 // (1/m) Σ ‖x_i − x̄‖²
	GradNormSq   float64 // ‖(1/m) Σ ∇f_i(x̄)‖² on the fixed training subsets
	Eta          float64 // η_t, the step size of the next round
	Beta         float64 // β_t (GT-STORM), else 0
	Samples      int64   // IFO calls so far, all nodes
	BytesPerNode int64   // bytes sent by the busiest node so far
	Seconds      float64 // wall time of training so far, evaluations included
	SimSeconds   float64 // simulated seconds of the rounds so far (--link-*); NaN without a simulated network
}

// Stationarity returns the paper's S(x): global gradient norm² plus
// consensus error.
func (r Row) Stationarity() float64 { return r.GradNormSq + r.Consensus }

// csvHeader names the columns of metrics.csv.
var csvHeader = []string{"round", "test_acc", "test_loss", "local_test_acc", "train_loss",
	"consensus_error", "grad_norm_sq", "stationarity", "eta", "beta",
	"samples", "comm_rounds", "bytes_sent_per_node", "seconds", "sim_seconds"}

// record returns r as metrics.csv fields. Floats are written in the shortest
// form that reads back to the same bits, so a resumed run can compare its
// rows exactly.
func (r Row) record() []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return []string{strconv.Itoa(r.Round), f(r.TestAcc), f(r.TestLoss), f(r.LocalTestAcc), f(r.TrainLoss),
		f(r.Consensus), f(r.GradNormSq), f(r.Stationarity()), f(r.Eta), f(r.Beta),
		strconv.FormatInt(r.Samples, 10), strconv.Itoa(r.Round), strconv.FormatInt(r.BytesPerNode, 10),
		strconv.FormatFloat(r.Seconds, 'f', 3, 64), f(r.SimSeconds)}
}

// WriteCSV writes the header and rows in metrics.csv's format.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	for _, r := range rows {
		cw.Write(r.record())
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV parses metrics.csv as WriteCSV writes it.
func ReadCSV(r io.Reader) ([]Row, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	// Files of earlier releases lack the last column, sim_seconds.
	if len(recs) == 0 || len(recs[0]) < len(csvHeader)-1 || len(recs[0]) > len(csvHeader) || recs[0][0] != csvHeader[0] {
		return nil, fmt.Errorf("not a metrics file: want the header %v", csvHeader)
	}
	rows := make([]Row, 0, len(recs)-1)
	for n, rec := range recs[1:] {
		row, err := parseRecord(rec)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", n+1, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func parseRecord(rec []string) (Row, error) {
	var err error
	fl := func(s string) float64 {
		x, e := strconv.ParseFloat(s, 64)
		if e != nil && err == nil {
			err = e
		}
		return x
	}
	in := func(s string) int64 {
		x, e := strconv.ParseInt(s, 10, 64)
		if e != nil && err == nil {
			err = e
		}
		return x
	}
	r := Row{
		Round: int(in(rec[0])), TestAcc: fl(rec[1]), TestLoss: fl(rec[2]), LocalTestAcc: fl(rec[3]),
		TrainLoss: fl(rec[4]), Consensus: fl(rec[5]), GradNormSq: fl(rec[6]), Eta: fl(rec[8]),
		Beta: fl(rec[9]), Samples: in(rec[10]), BytesPerNode: in(rec[12]), Seconds: fl(rec[13]),
		SimSeconds: math.NaN(),
	}
	if len(rec) > 14 {
		r.SimSeconds = fl(rec[14])
	}
	return r, err
}

// csvBytes returns rows in metrics.csv's format.
func csvBytes(rows []Row) []byte {
	var b bytes.Buffer
	WriteCSV(&b, rows) // a bytes.Buffer does not fail
	return b.Bytes()
}

// CurveOf averages the rows of runs that share their rounds (seeds of one
// setting) into a curve: test accuracy and S(x) against rounds, with their standard
// deviations.
func CurveOf(label string, runs [][]Row) curves.Curve {
	c := curves.Curve{Label: label}
	if len(runs) == 0 {
		return c
	}
	n := len(runs[0])
	for _, r := range runs[1:] {
		n = min(n, len(r))
	}
	for k := range n {
		acc := make([]float64, len(runs))
		s := make([]float64, len(runs))
		for i, r := range runs {
			acc[i], s[i] = r[k].TestAcc, r[k].Stationarity()
		}
		ma, sa := curves.MeanStd(acc)
		ms, ss := curves.MeanStd(s)
		c.Rounds = append(c.Rounds, float64(runs[0][k].Round))
		c.Acc, c.AccStd = append(c.Acc, ma), append(c.AccStd, sa)
		c.S, c.SStd = append(c.S, ms), append(c.SStd, ss)
	}
	return c
}

// Num is a float64 whose JSON form is null when it is not finite (JSON has
// no NaN or Inf), and NaN when read back from null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (x Num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON implements json.Unmarshaler.
func (x *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = Num(math.NaN())
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*x = Num(f)
	return err
}

// Summary is summary.json: the final state of a finished run and the
// settings that identify it.
type Summary struct {
	Algo               string `json:"algo"`
	Dataset            string `json:"dataset"`
	Data               string `json:"data"` // the data's name: the dataset, or a LibSVM file's name
	Model              string `json:"model"`
	Params             int    `json:"params"`
	Partition          string `json:"partition"`
	Topology           string `json:"topology"`
	PC                 Num    `json:"pc,omitempty"` // the Erdős–Rényi graph's p_c; absent for another topology
	Mixing             string `json:"mixing"`
	Nodes              int    `json:"nodes"`
	Edges              int    `json:"edges"`
	Iters              int    `json:"iters"`
	Batch              int    `json:"batch"`
	Eta0               Num    `json:"eta0"`
	Rho                Num    `json:"rho,omitempty"` // GT-STORM's ρ, 1/η_0² made explicit; absent for another method
	Seed               uint64 `json:"seed"`
	Lambda             Num    `json:"lambda"`
	LambdaMeaning      string `json:"lambda_meaning,omitempty"` // what λ summarises on a time-varying graph
	EvalSet            string `json:"eval_set"`
	FinalTestAcc       Num    `json:"final_test_acc"`
	FinalTestLoss      Num    `json:"final_test_loss"`
	LocalTestAcc       Num    `json:"local_test_acc"`
	TrainLoss          Num    `json:"train_loss"`
	ConsensusError     Num    `json:"consensus_error"`
	GradNormSq         Num    `json:"grad_norm_sq"`
	Stationarity       Num    `json:"stationarity"`
	Samples            int64  `json:"samples"`
	CommRounds         int    `json:"comm_rounds"`
	BytesSentPerNode   int64  `json:"bytes_sent_per_node"`
	StateFloatsPerNode int    `json:"state_floats_per_node"`
	Seconds            Num    `json:"seconds"`
	// Kernels is the compute kernel set that ran the models (avx512, avx2,
	// neon or go; every set gives the same bits; for a run over ranks whose
	// sets differ, "mixed: " and each set with its ranks) and Workers the
	// goroutines that ran the nodes (which does not change the results
	// either).
	Kernels string `json:"kernels,omitempty"`
	Workers int    `json:"workers,omitempty"`
	// NetworkWaitPerRound is, for a run over several processes, the wall
	// time rank 0 spent per round waiting for its neighbours' vectors.
	NetworkWaitPerRound Num `json:"network_wait_per_round_seconds,omitempty"`
	// BytesPerRound is the busiest node's bytes sent per round, and
	// CompressionRatio how many times fewer bytes its messages take than
	// uncompressed float32 vectors (1 without compression).
	BytesPerRound    Num `json:"bytes_per_round"`
	CompressionRatio Num `json:"compression_ratio"`
	// SimSeconds is the simulated time of the run's rounds (SPEC §9's
	// network model), absent without a simulated network; ComputeSeconds
	// the time of one minibatch gradient it assumed.
	SimSeconds     Num `json:"sim_seconds,omitempty"`
	ComputeSeconds Num `json:"compute_seconds,omitempty"`
	// Target is when the run first reached --target-acc or --target-stat.
	Target *TargetReached `json:"target,omitempty"`
	// Inputs fingerprints the files the run read (data, edge list).
	Inputs []InputFile `json:"inputs,omitempty"`
	// Diverged, when not empty, says that the run stopped because its state
	// became NaN or Inf; the figures are then the last good evaluation's.
	Diverged string `json:"diverged,omitempty"`
	// Byzantine lists the nodes that lied (--byzantine, drawn from the seed
	// or listed), Attack what they did and Aggregate the rule every node
	// mixed with; Measured then says that every figure above counts the
	// honest nodes only (x̄ is their mean). All absent without them.
	Byzantine []int  `json:"byzantine,omitempty"`
	Attack    string `json:"attack,omitempty"`
	Aggregate string `json:"aggregate,omitempty"`
	Measured  string `json:"measured,omitempty"`
	// Refused, when not empty, says why a grid did not start the run: its
	// algorithm cannot use one of the graphs its rounds mix with (see
	// Config.CheckGraphs). Such a summary holds the settings only.
	Refused string `json:"refused,omitempty"`
}

// DivergedStatus returns how a diverged run ended, as a grid's results
// and progress lines say it: "diverged after round 5: what went wrong",
// with the word "diverged" once (summaries written before it was left out
// of Diverged repeat it after the round: read back, it is dropped there).
// It returns "" for a run that did not diverge.
func (s *Summary) DivergedStatus() string {
	if s.Diverged == "" {
		return ""
	}
	return "diverged " + withoutDivergedMark(s.Diverged)
}

// divergedMark is the text that an error wrapping decentral.ErrDiverged
// holds before what went wrong.
var divergedMark = decentral.ErrDiverged.Error() + ": "

// withoutDivergedMark returns text without its first divergedMark, so that
// "after round 5: diverged: x has a NaN" reads "after round 5: x has a NaN".
func withoutDivergedMark(text string) string {
	return strings.Replace(text, divergedMark, "", 1)
}

// divergence is Summary.Diverged of a run that stopped after round with
// err, an error wrapping decentral.ErrDiverged: the round and what went
// wrong, without the word "diverged" (Diverged itself says it).
func divergence(round int, err error) string {
	return fmt.Sprintf("after round %d: %s", round, withoutDivergedMark(err.Error()))
}

// Failure returns "diverged" or "refused" for a run that did not finish,
// else "".
func (s *Summary) Failure() string {
	switch {
	case s.Refused != "":
		return "refused"
	case s.Diverged != "":
		return "diverged"
	}
	return ""
}

// ReadSummary parses summary.json.
func ReadSummary(r io.Reader) (*Summary, error) {
	var s Summary
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// TargetReached is where a run first reached its target (--target-acc or
// --target-stat), measured at its evaluation rounds: the rounds, the
// samples drawn by all nodes, the bytes the busiest node sent, the
// simulated seconds (null without a simulated network) and the wall time.
type TargetReached struct {
	Target       string `json:"target"` // e.g. "test_acc ≥ 0.85"
	Reached      bool   `json:"reached"`
	Round        int    `json:"round,omitempty"`
	Samples      int64  `json:"samples,omitempty"`
	BytesPerNode int64  `json:"bytes_sent_per_node,omitempty"`
	SimSeconds   Num    `json:"sim_seconds,omitempty"`
	Seconds      Num    `json:"seconds,omitempty"`
}

// MarshalJSON writes a reached target with all its figures, zeros included
// (a target met at round 0 says round 0), and one never reached with only
// its name and reached: false.
func (t TargetReached) MarshalJSON() ([]byte, error) {
	if !t.Reached {
		return json.Marshal(struct {
			Target  string `json:"target"`
			Reached bool   `json:"reached"`
		}{t.Target, false})
	}
	type reached struct {
		Target       string `json:"target"`
		Reached      bool   `json:"reached"`
		Round        int    `json:"round"`
		Samples      int64  `json:"samples"`
		BytesPerNode int64  `json:"bytes_sent_per_node"`
		SimSeconds   Num    `json:"sim_seconds,omitempty"`
		Seconds      Num    `json:"seconds"`
	}
	return json.Marshal(reached(t))
}

// Target returns the first of rows that meets c's target (--target-acc or
// --target-stat), or nil when c sets none. A run that never met it has
// Reached false.
func Target(c Config, rows []Row) *TargetReached {
	var met func(Row) bool
	var name string
	switch {
	case c.TargetAcc > 0:
		name = fmt.Sprintf("test_acc ≥ %g", c.TargetAcc)
		met = func(r Row) bool { return r.TestAcc >= c.TargetAcc }
	case c.TargetStat > 0:
		name = fmt.Sprintf("stationarity ≤ %g", c.TargetStat)
		met = func(r Row) bool { return r.Stationarity() <= c.TargetStat }
	default:
		return nil
	}
	for _, r := range rows {
		if met(r) {
			return &TargetReached{Target: name, Reached: true, Round: r.Round, Samples: r.Samples,
				BytesPerNode: r.BytesPerNode, SimSeconds: Num(r.SimSeconds), Seconds: Num(r.Seconds)}
		}
	}
	return &TargetReached{Target: name}
}
