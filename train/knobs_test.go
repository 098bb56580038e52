package train

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// knobValues gives each method knob a value of its own (not the value that
// leaves it at the method's default).
var knobValues = map[string]func(*Config){
	"period":      func(c *Config) { *c = c.WithKnob("period", 50) },
	"big-batch":   func(c *Config) { *c = c.WithKnob("big-batch", 40) },
	"rho":         func(c *Config) { c.Rho = 10 },
	"compress":    func(c *Config) { *c = c.WithKnob("compress", "topk:0.1") },
	"gamma":       func(c *Config) { *c = c.WithKnob("gamma", 0.1) },
	"momentum":    func(c *Config) { *c = c.WithKnob("momentum", 0.9) },
	"nesterov":    func(c *Config) { *c = c.WithKnob("nesterov", true) },
	"local-steps": func(c *Config) { *c = c.WithKnob("local-steps", 4) },
}

// TestMethodKnobsOneRule: every method knob (--period and --big-batch of
// D-GET, --rho of GT-STORM, --compress and --gamma of CHOCO) is accepted
// with its method and refused with every other, by one rule that names the
// knob and the methods it applies to; the values that leave it unset pass
// everywhere.
func TestMethodKnobsOneRule(t *testing.T) {
	if got := len(decentral.MethodKnobs()); got != len(knobValues) {
		t.Fatalf("%d method knobs %q, the test knows %d", got, decentral.MethodKnobs(), len(knobValues))
	}
	for _, knob := range decentral.MethodKnobs() {
		set, ok := knobValues[knob]
		if !ok {
			t.Fatalf("no test value for the method knob %s", knob)
		}
		for _, algo := range decentral.Algorithms() {
			cfg := Default()
			cfg.Algo = algo
			set(&cfg)
			err := cfg.Validate()
			takes := decentral.TakesKnob(algo, knob)
			var ce *ConfigError
			switch {
			case takes && err != nil:
				t.Errorf("--algo %s --%s: %v", algo, knob, err)
			case !takes && err == nil:
				t.Errorf("--algo %s --%s: accepted, but %s does not take it", algo, knob, algo)
			case !takes && (!errors.As(err, &ce) || ce.Flag != knob || !strings.Contains(ce.Want, "with --algo "+algo) ||
				!strings.Contains(ce.Want, "applies to --algo "+strings.Join(decentral.KnobMethods(knob), ", "))):
				t.Errorf("--algo %s --%s: %v, want a --%s error naming the methods it applies to", algo, knob, err, knob)
			}
		}
	}
	for _, unset := range []func(*Config){
		func(c *Config) { *c = c.WithKnob("period", 0) },
		func(c *Config) { *c = c.WithKnob("period", decentral.DefaultPeriod) },
		func(c *Config) { *c = c.WithKnob("compress", "none") },
		func(c *Config) {
			*c = c.WithKnob("gamma", 0.0).WithKnob("rho", 0.0).WithKnob("big-batch", 0).WithKnob("compress", "")
		},
	} {
		for _, algo := range decentral.Algorithms() {
			cfg := Default()
			cfg.Algo = algo
			unset(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Errorf("--algo %s with its knobs unset: %v", algo, err)
			}
		}
	}
}

// TestWithoutForeignKnobs: a grid cell keeps the knobs its method takes
// and drops the others, but those it is told to keep.
func TestWithoutForeignKnobs(t *testing.T) {
	base := Default()
	for _, set := range knobValues {
		set(&base)
	}
	for _, tc := range []struct {
		algo string
		keep []string
		want func(c Config) bool
	}{
		{decentral.DSGD, nil, func(c Config) bool { return len(c.Knobs) == 0 && c.Rho == 0 }},
		{decentral.DGET, nil, func(c Config) bool {
			return c.Knobs.Int("period") == 50 && c.Knobs.Int("big-batch") == 40 && len(c.Knobs) == 2 && c.Rho == 0
		}},
		{decentral.GTSTORM, nil, func(c Config) bool { return c.Rho == 10 && len(c.Knobs) == 0 }},
		{decentral.CHOCO, nil, func(c Config) bool {
			return c.Knobs.String("compress") == "topk:0.1" && c.Knobs.Float("gamma") == 0.1 && len(c.Knobs) == 2 && c.Rho == 0
		}},
		{decentral.DSGD, []string{"gamma"}, func(c Config) bool { return c.Knobs.Float("gamma") == 0.1 && len(c.Knobs) == 1 && c.Rho == 0 }},
	} {
		c := base
		c.Algo = tc.algo
		got := c.WithoutForeignKnobs(tc.keep...)
		if !tc.want(got) {
			t.Errorf("%s keeping %q: knobs %v, rho %v", tc.algo, tc.keep, got.Knobs, got.Rho)
		}
		if tc.keep == nil {
			if err := got.Validate(); err != nil {
				t.Errorf("%s: its cell is refused: %v", tc.algo, err)
			}
		}
	}
}

// TestAttackNone: --attack none is no attack, as `--vary attack=none` is:
// the setting is the one of a run without --attack, and like one it takes
// no Byzantine nodes.
func TestAttackNone(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string // the refused flag; "" for none
	}{
		{[]string{"--attack", "none"}, ""},
		{[]string{"--attack", "none", "--aggregate", "clip"}, ""},
		{[]string{"--attack", "none", "--byzantine", "2"}, "byzantine"},
		{[]string{"--attack", "nothing"}, "attack"},
		{[]string{"--attack", "signflip"}, "attack"},
	} {
		cfg := Default()
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		cfg.Flags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		err := cfg.Validate()
		var ce *ConfigError
		switch {
		case tc.flag == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.flag == "" && cfg.Attack != "":
			t.Errorf("%q: attack %q, want none (\"\")", tc.args, cfg.Attack)
		case tc.flag != "" && (!errors.As(err, &ce) || ce.Flag != tc.flag):
			t.Errorf("%q: %v, want a --%s error", tc.args, err, tc.flag)
		}
	}
	plain, none := Default(), Default()
	if err := none.Set("attack", AttackNone); err != nil || ResultKey(plain) != ResultKey(none) {
		t.Errorf("attack none (%v) is not the run without an attack", err)
	}
}
