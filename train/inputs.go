package train

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/internal/inputfile"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/models"
)

// InputFile identifies one file a run read: its absolute path, size and
// SHA-256. A run records its inputs when it starts; resuming it, or reusing
// its results in a grid, requires the same files with the same content.
type InputFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// edgeListFile reports whether c's topology names an edge-list file rather
// than a generator or the one-peer exponential graph.
func (c Config) edgeListFile() bool {
	return !slices.Contains(graph.Generators(), c.Topology) && c.Topology != graph.ExpTopology
}

// Resolved returns c with its method's knobs as the method records them
// (CHOCO's default γ made explicit, its compressor named as the compressor
// names itself, none as no value), and its file
// settings (--data-dir, a file:PATH --partition, an edge-list --topology,
// --speeds) made absolute, so that the run does not depend on the folder
// it is resumed from.
func (c Config) Resolved() (Config, error) {
	if c.DataDir != "" {
		abs, err := filepath.Abs(c.DataDir)
		if err != nil {
			return c, &ConfigError{"data-dir", c.DataDir, fmt.Sprintf("a path that can be made absolute (%v)", err)}
		}
		c.DataDir = abs
	}
	if c.edgeListFile() {
		abs, err := filepath.Abs(c.Topology)
		if err != nil {
			return c, &ConfigError{"topology", c.Topology, fmt.Sprintf("a path that can be made absolute (%v)", err)}
		}
		c.Topology = abs
	}
	if c.Speeds != "" {
		abs, err := filepath.Abs(c.Speeds)
		if err != nil {
			return c, &ConfigError{"speeds", c.Speeds, fmt.Sprintf("a path that can be made absolute (%v)", err)}
		}
		c.Speeds = abs
	}
	if p, ok := c.partitionFile(); ok {
		abs, err := filepath.Abs(p)
		if err != nil {
			return c, &ConfigError{"partition", c.Partition, fmt.Sprintf("a path that can be made absolute (%v)", err)}
		}
		c.Partition = "file:" + abs
	}
	// Each knob of the method as the method records it (decentral.Knob
	// Resolve): CHOCO's compressor by its own name, so that qsgd:07 and
	// qsgd:7, or none and no compressor, are one setting, and its default
	// γ, so that a later default does not pass for this run's.
	for _, k := range decentral.KnobsOf(c.Algo) {
		if k.Schedule {
			continue
		}
		if v, record := k.Resolve(c.Knobs[k.Name]); record {
			c.Knobs = c.Knobs.With(k.Name, v)
		} else {
			c.Knobs = c.Knobs.Without(k.Name)
		}
	}
	return c.resolveModel()
}

// partitionFile returns the partition file of c's --partition file:PATH.
func (c Config) partitionFile() (string, bool) {
	spec, err := data.ParsePartition(c.Partition)
	return spec.Path, err == nil && spec.Kind == "file"
}

// inputFiles returns the fingerprints of every file the run of c reads: its
// data files (or the folder it reads them from), its partition file, its
// edge list, its speeds file and its ONNX network. cache, if not nil, holds fingerprints
// already computed (by path, size and modification time).
func inputFiles(c Config, cache map[string]InputFile) ([]InputFile, error) {
	paths, err := c.registry().Files(c.Dataset, c.DataDir, c.loadOptions())
	if err != nil {
		return nil, err
	}
	flags := make([]string, len(paths)) // the flag naming each path given by a flag of its own
	add := func(flag, p string) error {
		abs, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		paths, flags = append(paths, abs), append(flags, flag)
		return nil
	}
	if p, ok := c.partitionFile(); ok {
		if err := add("--partition "+c.Partition, p); err != nil {
			return nil, err
		}
	}
	if c.edgeListFile() {
		if err := add("--topology "+c.Topology, c.Topology); err != nil {
			return nil, err
		}
	}
	if c.Speeds != "" {
		if err := add("--speeds "+c.Speeds, c.Speeds); err != nil {
			return nil, err
		}
	}
	if models.IsONNXName(c.Model) { // the network a run of --model FILE.onnx imports
		if err := add("--model "+c.Model, c.Model); err != nil {
			return nil, err
		}
	}
	out := make([]InputFile, 0, len(paths)+1)
	for i, p := range paths {
		f, err := fingerprint(p, cache)
		if err != nil && flags[i] != "" {
			err = fmt.Errorf("%s: %w", flags[i], err)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	folder, err := c.registry().Folder(c.Dataset, c.DataDir, c.loadOptions())
	if err != nil {
		return nil, err
	}
	if folder != nil {
		f, err := folderFingerprint(folder, cache)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// folderFingerprint is the input of a folder the data is read from (an
// image folder): its path with a trailing separator, the bytes of the
// files read and their digest. cache, if not nil, keeps digests by the
// folder's listing (names, sizes and modification times).
func folderFingerprint(folder *data.InputFolder, cache map[string]InputFile) (InputFile, error) {
	key := "folder\x00" + folder.Path + "\x00" + folder.Listing
	if fp, ok := cache[key]; ok {
		return fp, nil
	}
	size, sum, err := folder.Digest()
	if err != nil {
		return InputFile{}, err
	}
	fp := InputFile{Path: folder.Path + string(filepath.Separator), Size: size, SHA256: sum}
	if cache != nil {
		cache[key] = fp
	}
	return fp, nil
}

// fingerprint hashes the file at path.
func fingerprint(path string, cache map[string]InputFile) (InputFile, error) {
	f, _, err := inputfile.Open(path) // a FIFO or /dev/zero would never end
	if err != nil {
		return InputFile{}, fmt.Errorf("fingerprint input: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return InputFile{}, fmt.Errorf("fingerprint input %s: %w", path, err)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", path, st.Size(), st.ModTime().UnixNano())
	if fp, ok := cache[key]; ok {
		return fp, nil
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return InputFile{}, fmt.Errorf("fingerprint input %s: %w", path, err)
	}
	fp := InputFile{Path: path, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	if cache != nil {
		cache[key] = fp
	}
	return fp, nil
}

// inputsChanged compares a run's recorded inputs with the current ones and
// describes the first difference, or returns "".
func inputsChanged(recorded, now []InputFile) string {
	cur := make(map[string]InputFile, len(now))
	for _, f := range now {
		cur[f.Path] = f
	}
	for _, r := range recorded {
		n, ok := cur[r.Path]
		switch {
		case !ok:
			return fmt.Sprintf("input %s is gone", r.Path)
		case n.Size != r.Size:
			return fmt.Sprintf("input %s changed: %d bytes when the run started, %d now", r.Path, r.Size, n.Size)
		case n.SHA256 != r.SHA256:
			return fmt.Sprintf("input %s changed: same size, other content (SHA-256 %.12s… then, %.12s… now)", r.Path, r.SHA256, n.SHA256)
		}
		delete(cur, r.Path)
	}
	for _, f := range now {
		if _, extra := cur[f.Path]; extra {
			return fmt.Sprintf("input %s appeared since the run started", f.Path)
		}
	}
	return ""
}

// RunOrReuse returns the finished run of cfg in o.Out (its summary and
// metrics rows), resuming or starting it as needed: a grid's way to
// continue where it stopped. A run is reused only when its summary and its
// last metrics row are for cfg's round count (or it diverged) and its
// inputs are those of today; a run of other settings or inputs is
// replaced. A run that diverges is no error: its summary says so.
func RunOrReuse(ctx context.Context, cfg Config, o Options) (*Summary, []Row, error) {
	if prev, err := readConfig(filepath.Join(o.Out, ConfigFile)); err == nil && sameResults(prev, cfg) {
		inputs, err := inputFiles(cfg, o.fingerprints)
		if err != nil {
			return nil, nil, err
		}
		if sum, rows, err := readRun(o.Out); err == nil && finished(sum, rows, cfg) && inputsChanged(sum.Inputs, inputs) == "" {
			return sum, rows, nil
		}
		if _, err := os.Stat(filepath.Join(o.Out, CheckpointFile)); err == nil {
			_, err := Resume(ctx, o.Out, cfg.Iters, o)
			if err == nil || errors.Is(err, decentral.ErrDiverged) {
				return readRun(o.Out)
			}
			if !errors.Is(err, ErrInputsChanged) {
				return nil, nil, err
			}
		}
	}
	o.Overwrite = true // a run of other settings or inputs, or a broken one: the grid's own folder
	if _, err := Train(ctx, cfg, o); err != nil && !errors.Is(err, decentral.ErrDiverged) {
		return nil, nil, err
	}
	return readRun(o.Out)
}

// finished reports whether a run's summary and rows are those of a run of
// cfg that ended: all its rounds done, or diverged, with inputs recorded.
func finished(sum *Summary, rows []Row, cfg Config) bool {
	if sum.Inputs == nil || len(rows) == 0 {
		return false
	}
	if sum.Diverged != "" {
		return true
	}
	return sum.CommRounds == cfg.Iters && sum.Iters == cfg.Iters && rows[len(rows)-1].Round == cfg.Iters
}

// maxConfigFile bounds the config.json a run reads back: a run's own is
// a few kilobytes.
const maxConfigFile = 1 << 20

// readConfig reads the run settings in the config.json at path.
func readConfig(path string) (Config, error) {
	var c Config
	b, err := inputfile.Read(path, maxConfigFile, "a run's settings")
	if err != nil {
		return c, err
	}
	err = json.Unmarshal(b, &c)
	return c, err
}

// readRun reads the summary and metrics of a finished run.
func readRun(dir string) (*Summary, []Row, error) {
	f, err := os.Open(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sum, err := ReadSummary(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	m, err := os.Open(filepath.Join(dir, MetricsFile))
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	rows, err := ReadCSV(m)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", m.Name(), err)
	}
	return sum, rows, nil
}

// ResultKey identifies the results of a run of c: its settings, less those
// that cannot change them (workers, memory, targets). Runs of the same key
// give the same results.
func ResultKey(c Config) string {
	c.Workers, c.MaxMemory, c.TargetAcc, c.TargetStat = 0, 0, 0, 0
	b, _ := json.Marshal(c)
	return string(b)
}

// sameResults reports whether runs of a and b give the same results.
func sameResults(a, b Config) bool { return ResultKey(a) == ResultKey(b) }

// inputsDiffer compares, by content, the input files a run started with
// (had) and those that settings name now, in the order the run reads
// them, and describes the first difference, or returns "".
func inputsDiffer(had, now []InputFile) string {
	for k := range max(len(had), len(now)) {
		switch {
		case k >= len(had):
			return fmt.Sprintf("the run read %d input files, the flags name %d (%s)", len(had), len(now), now[k].Path)
		case k >= len(now):
			return fmt.Sprintf("the run read %d input files, the flags name %d (not %s)", len(had), len(now), had[k].Path)
		case had[k].Size != now[k].Size || had[k].SHA256 != now[k].SHA256:
			return fmt.Sprintf("the run read %s (%d bytes, SHA-256 %.12s…), the flags name %s (%d bytes, SHA-256 %.12s…)",
				had[k].Path, had[k].Size, had[k].SHA256, now[k].Path, now[k].Size, now[k].SHA256)
		}
	}
	return ""
}
