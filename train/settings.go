package train

import (
	"flag"
	"slices"
	"strings"
)

// Setting is one run setting of Config: its command-line flag, help text,
// whether a sweep may vary it, where it lives in a Config and what values it
// accepts. Adding a setting is one entry in settings plus its Config field
// and its use; the flag, its validation and `sweep --vary` follow. A
// method's knob is declared by its method (decentral.Knob), and
// knobSettings makes its setting.
type Setting struct {
	Name      string // the flag, without dashes
	Usage     string
	Sweepable bool // can `sweep --vary` it (it changes results)

	field func(c *Config) flag.Value // c's field, as a flag value
	// want returns what the setting accepts when c's value is not allowed,
	// else "". It may look at other settings (--data-dir at --dataset).
	want func(c Config) string
}

// atLeast returns a want function for an int setting of at least min.
func atLeast(get func(Config) int, min int, want string) func(Config) string {
	return func(c Config) string {
		if get(c) < min {
			return want
		}
		return ""
	}
}

// finiteWhere returns a want function for a float setting that must be
// finite and satisfy ok.
func finiteWhere(get func(Config) float64, ok func(float64) bool, want string) func(Config) string {
	return func(c Config) string {
		if x := get(c); !finite(x) || !ok(x) {
			return want
		}
		return ""
	}
}

// imagesOnly returns a want function for a setting of --dataset images:
// set (given) with another dataset it is refused, else want decides.
func imagesOnly(set func(Config) bool, want func(Config) string) func(Config) string {
	return func(c Config) string {
		if !set(c) {
			return ""
		}
		if c.Dataset != "images" {
			return "it only with --dataset images"
		}
		return want(c)
	}
}

func positive(x float64) bool    { return x > 0 }
func simSeconds(x float64) bool  { return x >= 0 && x <= 86400 }
func nonNegative(x float64) bool { return x >= 0 }

// settings returns the table of every run setting, in the order Validate
// checks them.
func settings() []Setting {
	return slices.Concat(dataSettings(), knobSettings(), runSettings(), initSettings(), byzantineSettings(), augmentSettings())
}

// Settings returns the run settings, as `gtstorm train` registers them.
func Settings() []Setting { return settings() }

// Flags registers a flag for every run setting on fs, bound to c's fields,
// with c's values as the defaults.
func (c *Config) Flags(fs *flag.FlagSet) {
	for _, s := range settings() {
		fs.Var(s.field(c), s.Name, s.Usage)
	}
}

// Validate checks every setting without touching any file but an edge-list
// topology's; it returns a *ConfigError for the first bad one. A method
// knob (see decentral.MethodKnobs: --period, --gamma, …) given to a
// method that does not take it is refused, all by one rule (see
// knobWant).
func (c Config) Validate() error {
	for _, s := range settings() {
		w := ""
		if s.want != nil {
			w = s.want(c)
		}
		if w == "" {
			w = knobWant(s, c)
		}
		if w != "" {
			return &ConfigError{s.Name, s.field(&c).String(), w}
		}
	}
	return nil
}

// Sweepable returns the names of the settings `sweep --vary` accepts.
func Sweepable() []string {
	var names []string
	for _, s := range settings() {
		if s.Sweepable {
			names = append(names, s.Name)
		}
	}
	return names
}

// Set sets the setting named name from its flag form, as `sweep --vary`
// does; only sweepable settings can be set.
func (c *Config) Set(name, value string) error {
	for _, s := range settings() {
		if s.Name != name || !s.Sweepable {
			continue
		}
		if err := s.field(c).Set(value); err != nil {
			return &ConfigError{"vary", name + "=" + value, err.Error()}
		}
		return nil
	}
	return &ConfigError{"vary", name, "one of " + strings.Join(Sweepable(), ", ")}
}
