package train

import (
	"cmp"
	"flag"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/decentral"
)

// Method knobs as settings: each method declares its knobs
// (decentral.Knob), and they become flags over Config.Knobs here.

// knobSettings returns a setting for every method knob the registry
// declares (decentral.AllKnobs), with the knob's usage and check: bound to
// Config.Knobs, or to its step-size field for a knob of the schedule (ρ).
func knobSettings() []Setting {
	var ss []Setting
	for _, k := range decentral.AllKnobs() {
		s := Setting{Name: k.Name, Usage: k.Usage, Sweepable: true,
			field: func(c *Config) flag.Value { return newKnobValue(k, c) },
			want: func(c Config) string {
				if v, ok := c.Knobs[k.Name]; ok {
					return k.Want(v)
				}
				return ""
			}}
		if k.Schedule {
			s.field = func(c *Config) flag.Value { return (*floatValue)(c.scheduleKnob(k.Name)) }
			s.want = func(c Config) string { return k.Want(*c.scheduleKnob(k.Name)) }
		}
		ss = append(ss, s)
	}
	return ss
}

// knobWant returns what setting s accepts when it is a method knob that c
// gives a value although c's method does not take it, else "".
func knobWant(s Setting, c Config) string {
	if !slices.Contains(decentral.MethodKnobs(), s.Name) || decentral.TakesKnob(c.Algo, s.Name) || !knobGiven(s, c) {
		return ""
	}
	return fmt.Sprintf("%s with --algo %s: --%s applies to --algo %s", knobOff(s), c.Algo, s.Name,
		strings.Join(decentral.KnobMethods(s.Name), ", "))
}

// knobGiven reports whether c gives the method knob s a value of its own:
// one other than its zero (which means the method's default), Default()'s
// (D-GET's period is written out there) and, for a string, none.
func knobGiven(s Setting, c Config) bool {
	var zero Config
	def := Default()
	v := s.field(&c).String()
	return v != s.field(&zero).String() && v != s.field(&def).String() && v != "none"
}

// knobOff returns the flag form of the value that leaves knob s unset: its
// zero where its flag takes it (else its default, as --local-steps 1),
// written none for a string.
func knobOff(s Setting) string {
	k, _ := decentral.LookupKnob(s.Name)
	off := k.Zero()
	if _, err := k.Parse(k.Format(off)); err != nil {
		off = k.Default
	}
	return cmp.Or(k.Format(off), "none")
}

// WithoutForeignKnobs returns c with every method knob that c's method does
// not take set back to Default()'s value, but those named in keep: a grid
// cell's settings where a knob given for the whole grid (compare --gamma)
// applies to the cells whose method takes it. A kept knob is left as it is,
// for Validate to refuse where it does not apply (a varied one).
func (c Config) WithoutForeignKnobs(keep ...string) Config {
	def := Default()
	for _, s := range settings() {
		if slices.Contains(decentral.MethodKnobs(), s.Name) && !decentral.TakesKnob(c.Algo, s.Name) && !slices.Contains(keep, s.Name) {
			s.field(&c).Set(s.field(&def).String()) // Default()'s own value: it parses
		}
	}
	return c
}

// WithKnob returns c with the method knob named name (decentral.AllKnobs)
// set to v, a value of the knob's type; a value that leaves the method at
// its default removes it from c.Knobs, as its flag does. It panics for a
// name no method declares and for a value of another type.
func (c Config) WithKnob(name string, v any) Config {
	k, ok := decentral.LookupKnob(name)
	if !ok || reflect.TypeOf(v) != reflect.TypeOf(k.Default) {
		panic(fmt.Sprintf("train: no method knob %s of type %T", name, v))
	}
	switch {
	case k.Schedule:
		*c.scheduleKnob(name) = v.(float64)
	case k.IsDefault(v):
		c.Knobs = c.Knobs.Without(name)
	default:
		c.Knobs = c.Knobs.With(name, v)
	}
	return c
}

// KnobApplies reports whether the setting named name applies to c's
// method: true for every setting but a method knob that c's method does not
// take.
func KnobApplies(c Config, name string) bool {
	return !slices.Contains(decentral.MethodKnobs(), name) || decentral.TakesKnob(c.Algo, name)
}

// knobValue is the flag of method knob k over c.Knobs. A value that leaves
// the method at its default (D-GET's --period 100, --compress none) is
// stored as no value, so that config.json and the run are those of a run
// without the flag.
type knobValue struct {
	k decentral.Knob
	c *Config
}

func (v knobValue) Set(s string) error {
	if v.c == nil {
		return fmt.Errorf("no settings to set --%s in", v.k.Name)
	}
	x, err := v.k.Parse(s)
	if err != nil {
		return err
	}
	if v.k.IsDefault(x) {
		v.c.Knobs = v.c.Knobs.Without(v.k.Name)
	} else {
		v.c.Knobs = v.c.Knobs.With(v.k.Name, x)
	}
	return nil
}

func (v knobValue) String() string {
	if v.c == nil { // a string knob's flag's zero value
		return ""
	}
	return v.k.Format(v.c.Knobs[v.k.Name])
}

// newKnobValue returns the flag of knob k over c.Knobs, of a type whose
// zero value (which package flag asks for its String, to leave a zero
// default out of the help) formats as the zero of the knob's type.
func newKnobValue(k decentral.Knob, c *Config) flag.Value {
	v := knobValue{k, c}
	switch k.Default.(type) {
	case int, float64:
		return numberKnobValue{v}
	case bool:
		return boolKnobValue{v}
	}
	return v
}

type (
	numberKnobValue struct{ knobValue }
	boolKnobValue   struct{ knobValue }
)

func (v numberKnobValue) String() string {
	if v.c == nil {
		return "0"
	}
	return v.knobValue.String()
}

func (v boolKnobValue) String() string {
	if v.c == nil {
		return "false"
	}
	return v.knobValue.String()
}

// IsBoolFlag makes a boolean knob's flag take no value, as --nesterov.
func (boolKnobValue) IsBoolFlag() bool { return true }
