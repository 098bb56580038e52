package train

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/compress"
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
	return !slices.Contains(decentral.Topologies(), c.Topology) && c.Topology != decentral.ExpTopology
}

// Resolved returns c with CHOCO's default γ made explicit, its compressor
// named as the compressor names itself (none as ""), and its file
// settings (--data-dir, an edge-list --topology, --speeds) made absolute,
// so that the run does not depend on the folder it is resumed from.
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
	if c.Compress != "" {
		// The compressor's own name, so that qsgd:07 and qsgd:7, or none
		// and no compressor, are one setting.
		if comp, err := compress.Parse(c.Compress); err == nil {
			c.Compress = comp.String()
		}
		if c.Compress == "none" {
			c.Compress = ""
		}
	}
	if c.Algo == decentral.CHOCO && c.Gamma == 0 {
		// Recorded, so that a later default does not pass for this run's.
		c.Gamma = decentral.DefaultGamma
	}
	return c, nil
}

// inputFiles returns the fingerprints of every file the run of c reads: its
// data files, its edge list and its speeds file. cache, if not nil, holds fingerprints
// already computed (by path, size and modification time).
func inputFiles(c Config, cache map[string]InputFile) ([]InputFile, error) {
	paths, err := data.Files(c.Dataset, c.DataDir)
	if err != nil {
		return nil, err
	}
	if c.edgeListFile() {
		abs, err := filepath.Abs(c.Topology)
		if err != nil {
			return nil, err
		}
		paths = append(paths, abs)
	}
	if c.Speeds != "" {
		abs, err := filepath.Abs(c.Speeds)
		if err != nil {
			return nil, err
		}
		paths = append(paths, abs)
	}
	out := make([]InputFile, 0, len(paths))
	for _, p := range paths {
		f, err := fingerprint(p, cache)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// fingerprint hashes the file at path.
func fingerprint(path string, cache map[string]InputFile) (InputFile, error) {
	f, err := os.Open(path)
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
