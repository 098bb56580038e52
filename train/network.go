package train

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/models"
)

// SimulatesNetwork reports whether c asks for the simulated network and
// compute (any of --link-latency, --link-bandwidth, --compute,
// --stragglers, --speeds): its runs then report sim_seconds.
func (c Config) SimulatesNetwork() bool {
	return c.LinkLatency > 0 || c.LinkBandwidth > 0 || c.Compute > 0 || c.Stragglers != "" || c.Speeds != ""
}

// network returns the decentral.Network of c for a run whose gradient
// evaluation takes compute seconds, or nil when c simulates none.
func (c Config) network(compute float64) (*decentral.Network, error) {
	if !c.SimulatesNetwork() {
		return nil, nil
	}
	slow, err := c.slowdowns()
	if err != nil {
		return nil, err
	}
	return &decentral.Network{
		Latency: c.LinkLatency, Bandwidth: c.LinkBandwidth / 8, Compute: compute, Batch: c.Batch, Slowdown: slow,
	}, nil
}

// slowdowns returns each node's compute slowdown: --stragglers K:F makes
// nodes 0..K−1 F times slower, --speeds FILE lists one factor per node;
// nil when neither is set.
func (c Config) slowdowns() ([]float64, error) {
	switch {
	case c.Stragglers != "":
		k, f, err := parseStragglers(c.Stragglers)
		if err != nil {
			return nil, err
		}
		if k > c.Nodes {
			return nil, &ConfigError{"stragglers", c.Stragglers, fmt.Sprintf("at most %d stragglers, the node count", c.Nodes)}
		}
		slow := make([]float64, c.Nodes)
		for i := range slow {
			slow[i] = 1
			if i < k {
				slow[i] = f
			}
		}
		return slow, nil
	case c.Speeds != "":
		return readSpeeds(c.Speeds, c.Nodes)
	}
	return nil, nil
}

// parseStragglers parses K:F, K ≥ 1 nodes F > 0 times slower.
func parseStragglers(s string) (int, float64, error) {
	ks, fs, ok := strings.Cut(s, ":")
	k, err1 := strconv.Atoi(ks)
	f, err2 := strconv.ParseFloat(fs, 64)
	if !ok || err1 != nil || err2 != nil || k < 1 || !(f > 0) || f > maxSlowdown {
		return 0, 0, &ConfigError{"stragglers", s, "K:F, K ≥ 1 nodes F > 0 (at most 1e6) times slower (e.g. 1:5)"}
	}
	return k, f, nil
}

// maxSlowdown bounds a node's slowdown factor, so that simulated times
// stay finite.
const maxSlowdown = 1e6

// speedsMaxBytes bounds a --speeds file for m nodes: a comment header and
// 64 bytes a line.
func speedsMaxBytes(m int) int64 { return 1<<16 + 64*int64(m) }

// readSpeeds reads a per-node slowdown file: one factor > 0 per line for
// each of the m nodes, in node order; blank lines and lines starting with
// # are skipped.
func readSpeeds(path string, m int) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--speeds: %w", err)
	}
	defer f.Close()
	// Validate checked that it is a regular file of at most limit bytes;
	// the bound holds if it has changed since.
	limit := speedsMaxBytes(m)
	var slow []float64
	lr := &io.LimitedReader{R: f, N: limit + 1}
	sc := bufio.NewScanner(lr)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		x, err := strconv.ParseFloat(text, 64)
		if err != nil || !(x > 0) || x > maxSlowdown {
			return nil, fmt.Errorf("--speeds %s line %d: %q, want a slowdown factor > 0 and at most 1e6", path, line, text)
		}
		slow = append(slow, x)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--speeds %s: %w", path, err)
	}
	if lr.N == 0 {
		return nil, fmt.Errorf("--speeds %s: longer than %d bytes, want one slowdown factor per node (%d)", path, limit, m)
	}
	if len(slow) != m {
		return nil, fmt.Errorf("--speeds %s: %d slowdown factors, want one per node (%d)", path, len(slow), m)
	}
	return slow, nil
}

// measureCompute returns the median seconds of one minibatch gradient of
// model on the first batch samples of d, over a few evaluations after a
// warm-up: the default of --compute. It touches no run state.
func measureCompute(pool *models.Pool, d *data.Dataset, batch int, x []float32) (float64, error) {
	// A fixed draw key: the masks of a network with dropout cost the same
	// whatever the draw.
	b := data.Batch{Data: d, Index: make([]int, min(batch, d.Len())), Draw: 1}
	for k := range b.Index {
		b.Index[k] = k
	}
	g := make([]float32, len(x))
	const evals = 7
	times := make([]float64, 0, evals)
	for k := 0; k <= evals; k++ {
		start := time.Now()
		if _, err := pool.Grad(0, x, b, g); err != nil {
			return 0, fmt.Errorf("measure the gradient's time: %w", err)
		}
		if k > 0 { // the first warms the caches up
			times = append(times, time.Since(start).Seconds())
		}
	}
	sort.Float64s(times)
	return times[len(times)/2], nil
}

// Bandwidth units of --link-bandwidth, in bits per second.
var bandwidthUnits = []struct {
	suffix string
	bits   float64
}{
	{"Gbit", 1e9}, {"Mbit", 1e6}, {"kbit", 1e3}, {"bit", 1},
	{"GB", 8e9}, {"MB", 8e6}, {"kB", 8e3}, {"B", 8},
}

// bandwidthValue is --link-bandwidth: bits per second, read as 1Gbit,
// 100Mbit, 10MB (bytes) or a plain number of bits, with an optional "/s".
type bandwidthValue float64

func (v *bandwidthValue) Set(s string) error {
	t := strings.TrimSuffix(s, "/s") // no spaces around it, as the other number flags
	mult := 1.0
	for _, u := range bandwidthUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.bits
			break
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || !(x >= 0) || math.IsInf(x, 0) {
		return fmt.Errorf("a bandwidth such as 1Gbit, 10Mbit, 100MB or bits per second (0: unlimited)")
	}
	*v = bandwidthValue(x * mult)
	return nil
}

func (v *bandwidthValue) String() string {
	x := float64(*v)
	for _, u := range bandwidthUnits[:4] {
		if x >= u.bits && math.Mod(x, u.bits) == 0 {
			return strconv.FormatFloat(x/u.bits, 'g', -1, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// secondsValue is a time in seconds, read as a Go duration (1ms, 50ms, 2s)
// or a plain number of seconds.
type secondsValue float64

func (v *secondsValue) Set(s string) error {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		*v = secondsValue(d.Seconds())
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || !(x >= 0) || math.IsInf(x, 0) {
		return fmt.Errorf("a time ≥ 0 such as 1ms, 50ms or seconds")
	}
	*v = secondsValue(x)
	return nil
}

func (v *secondsValue) String() string {
	return strconv.FormatFloat(float64(*v), 'g', -1, 64)
}

// NetworkLabel names c's simulated network for tables and plots
// ("1ms/1Gbit", ", stragglers K:F" added where it has them), or returns ""
// when c simulates none.
func (c Config) NetworkLabel() string {
	if !c.SimulatesNetwork() {
		return ""
	}
	lat := secondsValue(c.LinkLatency)
	bw := bandwidthValue(c.LinkBandwidth)
	label := time.Duration(float64(lat)*float64(time.Second)).String() + "/" + bw.String()
	if c.Stragglers != "" {
		label += ", stragglers " + c.Stragglers
	}
	return label
}
