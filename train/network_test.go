package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

func TestNetworkFlagValues(t *testing.T) {
	for _, c := range []struct {
		in   string
		bits float64
	}{
		{"1Gbit", 1e9}, {"10Mbit", 1e7}, {"100Mbit/s", 1e8}, {"64kbit", 64e3}, {"1MB", 8e6}, {"2.5GB/s", 2e10}, {"1000", 1000}, {"0", 0},
	} {
		var v bandwidthValue
		if err := v.Set(c.in); err != nil || float64(v) != c.bits {
			t.Errorf("bandwidth %q = %v bits/s (%v), want %v", c.in, float64(v), err, c.bits)
		}
	}
	for _, bad := range []string{"", "fast", "-1Mbit", "1Tbit", "NaN", "Inf"} {
		var v bandwidthValue
		if err := v.Set(bad); err == nil {
			t.Errorf("bandwidth %q accepted as %v", bad, float64(v))
		}
	}
	for _, c := range []struct {
		in string
		s  float64
	}{{"1ms", 0.001}, {"50ms", 0.05}, {"2s", 2}, {"0.25", 0.25}, {"0", 0}} {
		var v secondsValue
		if err := v.Set(c.in); err != nil || float64(v) != c.s {
			t.Errorf("time %q = %v s (%v), want %v", c.in, float64(v), err, c.s)
		}
	}
	for _, bad := range []string{"", "soon", "-1ms", "-2", "Inf"} {
		var v secondsValue
		if err := v.Set(bad); err == nil {
			t.Errorf("time %q accepted as %v", bad, float64(v))
		}
	}
}

// TestNetworkSettings: the network flags build the decentral.Network the
// optimizer simulates, and bad values are refused naming the flag.
func TestNetworkSettings(t *testing.T) {
	cfg := Default()
	if cfg.SimulatesNetwork() {
		t.Fatal("the default run simulates a network")
	}
	cfg.LinkLatency, cfg.LinkBandwidth, cfg.Stragglers = 0.05, 1e7, "2:5"
	n, err := cfg.network(0.01)
	if err != nil {
		t.Fatal(err)
	}
	if n.Latency != 0.05 || n.Bandwidth != 1.25e6 || n.Compute != 0.01 || n.Batch != cfg.Batch {
		t.Errorf("network %+v, want 50 ms, 1.25 MB/s, 10 ms per batch of %d", n, cfg.Batch)
	}
	if n.Slowdown[0] != 5 || n.Slowdown[1] != 5 || n.Slowdown[2] != 1 || len(n.Slowdown) != cfg.Nodes {
		t.Errorf("slowdowns %v, want nodes 0 and 1 five times slower", n.Slowdown)
	}

	speeds := filepath.Join(t.TempDir(), "speeds.txt")
	os.WriteFile(speeds, []byte("# node speeds\n1\n2\n\n1\n1\n1\n1\n1\n1\n1\n3\n"), 0o644)
	cfg.Stragglers, cfg.Speeds = "", speeds
	if n, err = cfg.network(0.01); err != nil || n.Slowdown[1] != 2 || n.Slowdown[9] != 3 {
		t.Errorf("speeds file: %v, %v", n, err)
	}
	os.WriteFile(speeds, []byte("1\n2\n"), 0o644)
	if _, err := cfg.network(0.01); err == nil || !strings.Contains(err.Error(), "2 slowdown factors, want one per node (10)") {
		t.Errorf("short speeds file: %v", err)
	}
	os.WriteFile(speeds, []byte("1\n0\n1\n1\n1\n1\n1\n1\n1\n1\n"), 0o644)
	if _, err := cfg.network(0.01); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("zero speed: %v", err)
	}

	for _, c := range []struct {
		set  func(*Config)
		flag string
	}{
		{func(c *Config) { c.Stragglers = "11:5" }, "--stragglers"},
		{func(c *Config) { c.Stragglers = "1:0" }, "--stragglers"},
		{func(c *Config) { c.Stragglers = "x" }, "--stragglers"},
		{func(c *Config) { c.Speeds = "/no/such/file" }, "--speeds"},
		{func(c *Config) { *c = c.WithKnob("compress", "topk:0"); c.Algo = decentral.CHOCO }, "--compress"},
		{func(c *Config) { *c = c.WithKnob("compress", "topk:0.1") }, "--compress"}, // GT-STORM sends uncompressed
		{func(c *Config) { *c = c.WithKnob("gamma", 2.0) }, "--gamma"},
		{func(c *Config) { c.TargetAcc = 1.5 }, "--target-acc"},
	} {
		cfg := Default()
		c.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.flag+" ") {
			t.Errorf("%s: error %v", c.flag, err)
		}
	}
}
