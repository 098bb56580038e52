package train

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestValidate(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default() is invalid: %v", err)
	}
	cases := []struct {
		flag string
		edit func(*Config)
	}{
		{"dataset", func(c *Config) { c.Dataset = "imagenet" }},
		{"data-dir", func(c *Config) { c.Dataset, c.DataDir = "libsvm", "" }},
		{"features", func(c *Config) { c.Features = -1 }},
		{"algo", func(c *Config) { c.Algo = "adam" }},
		{"nodes", func(c *Config) { c.Nodes = 0 }},
		{"pc", func(c *Config) { c.PC = 0 }},
		{"pc", func(c *Config) { c.PC = 1.5 }},
		{"pc", func(c *Config) { c.PC = math.NaN() }},
		{"mixing", func(c *Config) { c.Mixing = "uniform" }},
		{"topology", func(c *Config) { c.Topology = "/no/such/edges.txt" }},
		{"partition", func(c *Config) { c.Partition = "dirichlet:0" }},
		{"partition", func(c *Config) { c.Partition = "dirichlet:-1" }},
		{"partition", func(c *Config) { c.Partition = "shards:0" }},
		{"partition", func(c *Config) { c.Partition = "bylabel" }},
		{"iters", func(c *Config) { c.Iters = 0 }},
		{"batch", func(c *Config) { c.Batch = 0 }},
		{"eta0", func(c *Config) { c.Eta0 = 0 }},
		{"eta0", func(c *Config) { c.Eta0 = math.Inf(1) }},
		{"eta0", func(c *Config) { c.Eta0 = math.NaN() }},
		{"rho", func(c *Config) { c.Rho = -1 }},
		{"rho", func(c *Config) { c.Rho = math.NaN() }},
		{"alpha", func(c *Config) { c.Alpha = -0.1 }},
		{"eval-every", func(c *Config) { c.EvalEvery = 0 }},
		{"local-eval", func(c *Config) { c.LocalEvalSamples = -5 }},
		{"grad-samples", func(c *Config) { c.GradSamples = -1 }},
		{"checkpoint-every", func(c *Config) { c.CheckpointEvery = -1 }},
		{"workers", func(c *Config) { c.Workers = -2 }},
	}
	for _, tc := range cases {
		c := Default()
		tc.edit(&c)
		err := c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Flag != tc.flag {
			t.Errorf("%+v: err = %v, want a ConfigError for --%s", c, err, tc.flag)
		}
	}
}

// TestConfigDifferences checks the list of differing settings, including a
// setting one side leaves out of config.json (omitempty) and skipped keys.
func TestConfigDifferences(t *testing.T) {
	base := Default()
	more := base
	more.Iters, more.Nodes = base.Iters*2, base.Nodes+2
	choco := base
	choco = choco.WithKnob("compress", "topk:0.1")
	cases := []struct {
		name        string
		there, here Config
		skip        []string
		want        []string
	}{
		{"same", base, base, nil, nil},
		{"two settings, sorted", base, more, nil, []string{
			fmt.Sprintf("iters %d there, %d here", base.Iters, more.Iters),
			fmt.Sprintf("nodes %d there, %d here", base.Nodes, more.Nodes)}},
		{"skipped", base, more, []string{"iters"}, []string{
			fmt.Sprintf("nodes %d there, %d here", base.Nodes, more.Nodes)}},
		{"left out on one side", base, choco, nil, []string{`compress nothing there, "topk:0.1" here`}},
		{"left out on the other", choco, base, nil, []string{`compress "topk:0.1" there, nothing here`}},
	}
	for _, c := range cases {
		got := ConfigDifferences(c.there, c.here, c.skip...)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := ConfigDifference(base, choco); got != `compress nothing there, "topk:0.1" here` {
		t.Errorf("ConfigDifference: %q", got)
	}
	if got := ConfigDifference(base, base); got != "none" {
		t.Errorf("ConfigDifference of equal configs: %q", got)
	}
}
