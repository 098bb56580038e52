package train

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/internal/inputfile"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/atomicfile"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/weights"
)

// meta is what a resume checkpoint carries besides the optimizer and sampler
// state: the run's configuration, the prefix of metrics.csv that holds its
// rows so far, the wall time spent and the fingerprints of its inputs.
// Checkpoints of earlier releases hold the rows themselves in Rows.
type meta struct {
	Config  Config      `json:"config"`
	Mark    metricsMark `json:"metrics_mark"`
	Rows    string      `json:"metrics,omitempty"` // earlier releases: the rows in metrics.csv's form
	Seconds float64     `json:"seconds"`
	Inputs  []InputFile `json:"inputs,omitempty"`
	// Compute is the gradient time the simulated network uses, measured
	// when the run started unless --compute set it.
	Compute float64 `json:"compute,omitempty"`
	// Placement is set in the checkpoints of one rank of a run over
	// several processes (nil in a single process's, and in ranks'
	// checkpoints of earlier releases).
	Placement *RankPlacement `json:"placement,omitempty"`
	// Net describes the network of a --model FILE.onnx run, so that the
	// model file and checkpoints rebuild it without the file (nil for the
	// other models, and in files of earlier releases).
	Net *models.NetSpec `json:"net,omitempty"`
}

// checkpoint writes the resume state of the last completed round.
func (r *runner) checkpoint() error {
	s := r.s
	snap, err := s.opt.State()
	if err != nil {
		return err
	}
	smp, err := s.sampler.MarshalBinary()
	if err != nil {
		return err
	}
	var mark metricsMark
	if r.metrics != nil { // a rank other than 0 writes no metrics
		if mark, err = r.metrics.sync(); err != nil {
			return err
		}
	}
	md := meta{Config: s.cfg, Mark: mark, Seconds: r.seconds(), Inputs: r.inputs, Compute: s.compute, Net: netSpec(s.cfg, s.model),
		Placement: r.role.placement()}
	m, err := json.Marshal(md)
	if err != nil {
		return err
	}
	s.opt.Mean(r.xbar)
	ck := modelCheckpoint(s.model, r.xbar)
	ck.Optimizer, ck.Sampler, ck.Meta = snap, smp, m
	if err := weights.Write(filepath.Join(r.out, CheckpointFile), ck); err != nil {
		return err
	}
	r.lastCkp, r.ckMark = s.opt.Round(), mark
	return r.role.kept(r.out, s.opt.Round())
}

// writeModel writes the final averaged model alone, for `gtstorm eval`.
func (r *runner) writeModel() error {
	r.s.opt.Mean(r.xbar)
	ck := modelCheckpoint(r.s.model, r.xbar)
	// The model file holds what the run computed, not the machine it ran
	// on: runs that computed the same bits write the same bytes whatever
	// their worker count (summary.json records it, and the kernel set).
	cfg := r.s.cfg
	cfg.Workers = 0
	m, err := json.Marshal(modelMeta{meta: meta{Config: cfg, Net: netSpec(cfg, r.s.model)}, Input: InputSpecOf(r.s.cfg, r.s.train, r.s.model)})
	if err != nil {
		return err
	}
	ck.Meta = m
	return weights.Write(filepath.Join(r.out, ModelFile), ck)
}

// modelCheckpoint returns a checkpoint of params with m's layout.
func modelCheckpoint(m models.Model, params []float32) *weights.Checkpoint {
	ck := &weights.Checkpoint{Model: m.Name(), Params: params}
	for _, p := range m.Params() {
		ck.Tensors = append(ck.Tensors, weights.Tensor{Name: p.Name, Shape: p.Shape})
	}
	return ck
}

// modelMeta is the run metadata of model.gtck: a checkpoint's, plus the
// input description of image models. Files written before it was added
// lack "input".
type modelMeta struct {
	meta
	Input *InputSpec `json:"input,omitempty"`
}

// ModelMeta is what a model file says of its model: the configuration of
// the run that trained it and, for image models, the input description
// (nil in files written before model files stored it).
type ModelMeta struct {
	Config Config
	Input  *InputSpec
	// Model is the model the file holds, as its configuration builds it
	// (the file's parameters fit its layout).
	Model models.Model
}

// ReadModelFile reads a model file (model.gtck, or a checkpoint) and its
// run metadata, and checks it with CheckModelFile: eval, predict and export
// accept the same files.
func ReadModelFile(path string) (*weights.Checkpoint, ModelMeta, error) {
	ck, err := weights.Read(path)
	if errors.Is(err, weights.ErrNotCheckpoint) && strings.EqualFold(filepath.Ext(path), ".onnx") {
		return nil, ModelMeta{}, fmt.Errorf("%w; an ONNX network becomes a model file by training it: gtstorm train --model %s --dataset NAME writes model.gtck", err, path)
	}
	if err != nil {
		return nil, ModelMeta{}, err
	}
	m, err := CheckModelFile(path, ck)
	if err != nil {
		return nil, ModelMeta{}, err
	}
	return ck, m, nil
}

// resumeState is a parsed resume checkpoint.
type resumeState struct {
	ck   *weights.Checkpoint
	snap *decentral.Snapshot
	meta meta
}

// readCheckpoint reads a checkpoint written by runner.checkpoint.
func readCheckpoint(path string) (*resumeState, error) {
	ck, err := weights.Read(path)
	if err != nil {
		return nil, err
	}
	if ck.Optimizer == nil {
		return nil, fmt.Errorf("%s: a model-only checkpoint, without the optimizer state a resume needs", path)
	}
	st := &resumeState{ck: ck, snap: ck.Optimizer}
	if err := json.Unmarshal(ck.Meta, &st.meta); err != nil {
		return nil, fmt.Errorf("%s: run metadata: %w", path, err)
	}
	return st, nil
}

// restore puts the runner in the checkpointed state.
func (r *runner) restore(st *resumeState) error {
	s := r.s
	if st.ck.Model != s.model.Name() || len(st.ck.Params) != s.model.NumParams() {
		return fmt.Errorf("checkpoint of %s with %d parameters, the configuration builds %s with %d",
			st.ck.Model, len(st.ck.Params), s.model.Name(), s.model.NumParams())
	}
	if err := s.opt.Restore(st.snap); err != nil {
		return err
	}
	if err := s.sampler.UnmarshalBinary(st.ck.Sampler); err != nil {
		return err
	}
	r.prior = st.meta.Seconds
	r.lastCkp = st.snap.Round
	if !r.role.measures() {
		return nil // only rank 0 of a run over several processes writes metrics
	}
	rows, err := st.rows(filepath.Join(r.out, MetricsFile))
	if err != nil {
		return err
	}
	r.rows = keepRows(rows, r.s.cfg, st.snap.Round)
	if last := r.lastRow(); last != nil {
		r.measured = last.Round
	}
	if r.metrics, err = createMetrics(filepath.Join(r.out, MetricsFile), r.rows); err != nil {
		return err
	}
	// Rows are dropped only when the round count changed, and then Resume
	// writes a checkpoint at once.
	r.ckMark = r.metrics.mark
	return nil
}

// rows returns the metrics rows the checkpoint covers: from the prefix of
// metricsPath it recorded or, for an earlier release's checkpoint, from
// the checkpoint itself.
func (st *resumeState) rows(metricsPath string) ([]Row, error) {
	if st.meta.Rows != "" {
		return ReadCSV(strings.NewReader(st.meta.Rows))
	}
	return readMetricsPrefix(metricsPath, st.meta.Mark)
}

// keepRows returns the rows a fresh run of cfg would have written by round
// done: a finished shorter run's last row, evaluated because it ended
// there, goes when it lies off the --eval-every grid of cfg.
func keepRows(rows []Row, cfg Config, done int) []Row {
	out := rows[:0:0]
	for _, row := range rows {
		if row.Round <= done && (row.Round%cfg.EvalEvery == 0 || row.Round == cfg.Iters) {
			out = append(out, row)
		}
	}
	return out
}

// checkConfigFile refuses to resume when out's config.json was edited by
// hand to differ from the checkpoint's settings (resume would silently
// overwrite it). A differing round count is only reported: it is what an
// interrupted resume --iters leaves.
func checkConfigFile(out string, ck Config, iters int, progress io.Writer) error {
	path := filepath.Join(out, ConfigFile)
	b, err := inputfile.Read(path, maxConfigFile, "a run's settings")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var file map[string]any
	if err := json.Unmarshal(b, &file); err != nil {
		return fmt.Errorf("%s: %v; it was edited? resume continues the checkpoint's settings: restore the file or delete it", path, err)
	}
	file = flatSettings(file)
	// A setting newer than the file's release is no edit.
	want := settingsMap(ck)
	if k, ok := firstDifference(file, want, "iters"); ok {
		return fmt.Errorf("%s says %s = %v but the checkpoint's run has %v: resume continues the checkpoint's settings and would overwrite the edit; restore the file or delete it (to change settings, start a new run)", path, k, jsonText(file[k]), jsonText(want[k]))
	}
	if n, ok := file["iters"].(float64); ok && int(n) != ck.Iters && iters == 0 && progress != nil {
		fmt.Fprintf(progress, "note: %s asks for %d rounds, the checkpoint's run for %d; continuing to %d (give the round count to resume to change it)\n", path, int(n), ck.Iters, ck.Iters)
	}
	return nil
}

// settingsMap returns c's settings by their config.json keys, as JSON
// decodes them.
func settingsMap(c Config) map[string]any {
	b, _ := json.Marshal(c)
	var m map[string]any
	json.Unmarshal(b, &m)
	return flatSettings(m)
}

// firstDifference returns the first key of want, in sorted order, whose
// value in have differs, leaving out the keys have lacks and those in skip.
func firstDifference(have, want map[string]any, skip ...string) (string, bool) {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v, ok := have[k]
		if ok && !slices.Contains(skip, k) && !reflect.DeepEqual(v, want[k]) {
			return k, true
		}
	}
	return "", false
}

// jsonText returns v as JSON, or "nothing" for a missing value.
func jsonText(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// ConfigDifference names the first setting in which a and b differ, with
// its two values ("nodes 10 there, 20 here"), or returns "none".
func ConfigDifference(a, b Config) string {
	if d := ConfigDifferences(a, b); len(d) > 0 {
		return d[0]
	}
	return "none"
}

// ConfigDifferences lists, in sorted order of their config.json keys, the
// settings in which there and here differ, with both values ("iters 12
// there, 24 here"), leaving out the keys in skip.
func ConfigDifferences(there, here Config, skip ...string) []string {
	mt, mh := settingsMap(there), settingsMap(here)
	keys := slices.Collect(maps.Keys(mt))
	for k := range mh {
		if _, ok := mt[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var diff []string
	for _, k := range keys {
		if !slices.Contains(skip, k) && !reflect.DeepEqual(mt[k], mh[k]) {
			diff = append(diff, fmt.Sprintf("%s %s there, %s here", k, jsonText(mt[k]), jsonText(mh[k])))
		}
	}
	return diff
}

// metricsLog is metrics.csv open for appending: each evaluation appends one
// row, so that writing the metrics costs the same at every round however
// long the history. A checkpoint records the log's length and CRC-32C
// (metricsMark) instead of the rows; resuming cuts the file back to that
// mark, which drops the rows of rounds after the checkpoint and a torn last
// line alike.
type metricsLog struct {
	path string
	f    *os.File
	mark metricsMark
}

// metricsMark is a prefix of metrics.csv: its rows, byte length and CRC-32C.
type metricsMark struct {
	Rows  int    `json:"rows"`
	Bytes int64  `json:"bytes"`
	CRC   uint32 `json:"crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// createMetrics writes path with the header and rows (atomically) and opens
// it for appending.
func createMetrics(path string, rows []Row) (*metricsLog, error) {
	b := csvBytes(rows)
	if err := atomicfile.WriteBytes(path, b); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &metricsLog{path: path, f: f, mark: metricsMark{Rows: len(rows), Bytes: int64(len(b)), CRC: crc32.Checksum(b, castagnoli)}}, nil
}

// readMetricsPrefix reads the rows of path up to mark, checking that the
// file still holds exactly what the mark recorded.
func readMetricsPrefix(path string, mark metricsMark) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics of the checkpoint: %w", err)
	}
	defer f.Close()
	b := make([]byte, mark.Bytes)
	if n, err := f.ReadAt(b, 0); int64(n) != mark.Bytes {
		return nil, fmt.Errorf("%s: %d bytes, the checkpoint recorded %d (%v); the metrics of the run are lost", path, n, mark.Bytes, err)
	}
	if c := crc32.Checksum(b, castagnoli); c != mark.CRC {
		return nil, fmt.Errorf("%s: its first %d bytes changed since the checkpoint (CRC-32C %08x, recorded %08x)", path, mark.Bytes, c, mark.CRC)
	}
	rows, err := ReadCSV(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) != mark.Rows {
		return nil, fmt.Errorf("%s: %d rows, the checkpoint recorded %d", path, len(rows), mark.Rows)
	}
	return rows, nil
}

// append writes one row at the end of the log.
func (l *metricsLog) append(r Row) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(r.record())
	w.Flush()
	if _, err := l.f.Write(b.Bytes()); err != nil {
		l.f.Truncate(l.mark.Bytes) // leave no torn row behind (a full disk)
		return fmt.Errorf("write %s: %w", l.path, err)
	}
	l.mark.Rows++
	l.mark.Bytes += int64(b.Len())
	l.mark.CRC = crc32.Update(l.mark.CRC, castagnoli, b.Bytes())
	return nil
}

// sync makes the rows written so far durable and returns their mark.
func (l *metricsLog) sync() (metricsMark, error) {
	if err := l.f.Sync(); err != nil {
		return metricsMark{}, fmt.Errorf("sync %s: %w", l.path, err)
	}
	return l.mark, nil
}

func (l *metricsLog) close() error { return l.f.Close() }
