package decentral

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
)

// Knob is a setting that some methods take (D-GET's period, CHOCO's γ),
// declared once by the registry entry of each method that takes it: its
// flag name, its help text, its default and its check. Its values are
// typed: an int, a float64, a bool or a string, the type of Default.
// Methods that take the same knob (DSGDm's and QG-DSGDm's momentum) declare
// the same Knob.
type Knob struct {
	// Name is the knob's flag, "big-batch"; config.json spells it with
	// underscores, "big_batch" (see JSONName).
	Name  string
	Usage string
	// Default is the value that leaves the method at its default as a
	// flag shows it (D-GET's period 100, CHOCO's compressor "none"); the
	// zero value of its type means the default too. Its type is the
	// knob's.
	Default any
	// Schedule marks a knob whose value is the step-size schedule's
	// (GT-STORM's ρ, in [StepSizes]), not the method's: the registry
	// declares that the method takes it, and [Knobs] never holds it.
	Schedule bool
	// Variant marks the knob that a method's name sets after a colon in a
	// comparison, as choco:topk:0.01 is CHOCO with compress topk:0.01.
	Variant bool

	// want returns what the knob accepts when v, of Default's type, is
	// out of range, else "".
	want func(v any) string
	// strictParse makes Parse refuse what want refuses (local-steps).
	strictParse bool
	// resolve returns the value a run records for v, the zero value when
	// the knob is not given (CHOCO's default γ, its compressor's own
	// name); nil records v.
	resolve func(v any) any
}

// IntKnob declares an integer knob; want returns what it accepts when a
// value is out of range, else "".
func IntKnob(name, usage string, def int, want func(int) string) Knob {
	return Knob{Name: name, Usage: usage, Default: def, want: func(v any) string { return want(v.(int)) }}
}

// FloatKnob declares a number knob; want returns what it accepts when a
// value is out of range, else "".
func FloatKnob(name, usage string, def float64, want func(float64) string) Knob {
	return Knob{Name: name, Usage: usage, Default: def, want: func(v any) string { return want(v.(float64)) }}
}

// BoolKnob declares a boolean knob, which takes both values.
func BoolKnob(name, usage string) Knob {
	return Knob{Name: name, Usage: usage, Default: false, want: func(any) string { return "" }}
}

// StringKnob declares a string knob; want returns what it accepts when a
// value is not allowed, else "".
func StringKnob(name, usage, def string, want func(string) string) Knob {
	return Knob{Name: name, Usage: usage, Default: def, want: func(v any) string { return want(v.(string)) }}
}

// JSONName returns the knob's key in config.json: its name with
// underscores.
func (k Knob) JSONName() string { return jsonName(k.Name) }

// jsonName returns the config.json key of the knob named name.
func jsonName(name string) string { return strings.ReplaceAll(name, "-", "_") }

// Zero returns the zero value of the knob's type.
func (k Knob) Zero() any { return reflect.Zero(reflect.TypeOf(k.Default)).Interface() }

// IsDefault reports whether v leaves the method at its default: v is the
// knob's Default or the zero value of its type.
func (k Knob) IsDefault(v any) bool { return v == k.Default || v == k.Zero() }

// typeWant returns what the knob's type accepts when v is not of it, else "".
func (k Knob) typeWant(v any) string {
	if reflect.TypeOf(v) == reflect.TypeOf(k.Default) {
		return ""
	}
	switch k.Default.(type) {
	case int:
		return "an integer"
	case float64:
		return "a number"
	case bool:
		return "true or false"
	}
	return "a string"
}

// Want returns what the knob accepts when v is not of its type or out of
// its range, else "": the one check of the knob, which [NewMethod], the
// methods' Validate and train's settings all use.
func (k Knob) Want(v any) string {
	if w := k.typeWant(v); w != "" {
		return w
	}
	if k.want == nil || k.IsDefault(v) {
		return ""
	}
	return k.want(v)
}

// Parse returns the value of the flag form s. Its errors say what the
// knob accepts.
func (k Knob) Parse(s string) (any, error) {
	var (
		v   any
		err error
	)
	switch k.Default.(type) {
	case int:
		v, err = strconv.Atoi(s)
	case float64:
		v, err = strconv.ParseFloat(s, 64)
	case bool:
		v, err = strconv.ParseBool(s)
	default:
		v = s
	}
	if err != nil {
		return nil, errors.New(k.typeWant(nil))
	}
	if k.strictParse {
		if w := k.want(v); w != "" {
			return nil, errors.New(w)
		}
	}
	return v, nil
}

// Format returns the flag form of v; nil, a knob not given, is the
// knob's Default.
func (k Knob) Format(v any) string {
	if v == nil {
		v = k.Default
	}
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// Resolve returns the value a run records for the knob given v (nil when
// it is not given): CHOCO records its default γ, so that a later default
// does not pass for the run's, and its compressor by the compressor's own
// name. The second result is false when the value leaves the method at
// its default and needs no recording.
func (k Knob) Resolve(v any) (any, bool) {
	if v == nil {
		v = k.Zero()
	}
	if k.resolve != nil {
		v = k.resolve(v)
	}
	return v, !k.IsDefault(v)
}

// decode returns the knob's value in its JSON form raw.
func (k Knob) decode(raw json.RawMessage) (any, error) {
	p := reflect.New(reflect.TypeOf(k.Default))
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return nil, fmt.Errorf("%s %s: want %s", k.JSONName(), raw, k.typeWant(nil))
	}
	return p.Elem().Interface(), nil
}

// check returns an error naming the knob and value when v is not one the
// knob accepts.
func (k Knob) check(v any) error {
	if w := k.Want(v); w != "" {
		return fmt.Errorf("%s %s: want %s", k.Name, k.Format(v), w)
	}
	return nil
}

// Knobs are the method knobs a run gives values of their own, by flag
// name, each of its knob's type ({"period": 10}): what a registered
// method's constructor is made from (see [NewMethod]). A knob that is
// absent takes the method's default. A Knobs is shared by the copies of
// the value that holds it: change it with With and Without, which copy it.
type Knobs map[string]any

// Int returns knob name as an integer, 0 when it is absent.
func (k Knobs) Int(name string) int { n, _ := k[name].(int); return n }

// Float returns knob name as a number, 0 when it is absent.
func (k Knobs) Float(name string) float64 { x, _ := k[name].(float64); return x }

// Bool returns knob name as a boolean, false when it is absent.
func (k Knobs) Bool(name string) bool { b, _ := k[name].(bool); return b }

// String returns knob name as a string, "" when it is absent.
func (k Knobs) String(name string) string { s, _ := k[name].(string); return s }

// With returns a copy of k with knob name set to v.
func (k Knobs) With(name string, v any) Knobs {
	c := maps.Clone(k)
	if c == nil {
		c = Knobs{}
	}
	c[name] = v
	return c
}

// Without returns a copy of k without knob name; nil when none is left.
func (k Knobs) Without(name string) Knobs {
	if _, ok := k[name]; !ok {
		return k
	}
	c := maps.Clone(k)
	delete(c, name)
	if len(c) == 0 {
		return nil
	}
	return c
}

// checkKnobs checks the values in k of the knobs ks: the Validate of a
// method built from its fields.
func checkKnobs(ks []Knob, k Knobs) error {
	for _, kb := range ks {
		if v, ok := k[kb.Name]; ok {
			if err := kb.check(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// AllKnobs returns every knob a registered method declares, each once, in
// registry order, those of the schedule (ρ) included.
func AllKnobs() []Knob {
	var ks []Knob
	seen := map[string]bool{}
	for _, r := range registry {
		for _, k := range r.knobs {
			if !seen[k.Name] {
				seen[k.Name] = true
				ks = append(ks, k)
			}
		}
	}
	return ks
}

// LookupKnob returns the knob named name that some method declares.
func LookupKnob(name string) (Knob, bool) {
	for _, k := range AllKnobs() {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

// MethodKnobs returns the names of the settings that apply to some methods
// only (D-GET's period, CHOCO's gamma, GT-STORM's rho, …), each once, in
// registry order.
func MethodKnobs() []string {
	ks := AllKnobs()
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Name
	}
	return names
}

// KnobsOf returns the knobs the method named algo takes; none for an
// unknown name.
func KnobsOf(algo string) []Knob {
	for _, r := range registry {
		if r.name == algo {
			return r.knobs
		}
	}
	return nil
}

// TakesKnob reports whether the method named algo takes the method knob
// named knob; false for an unknown method.
func TakesKnob(algo, knob string) bool {
	for _, k := range KnobsOf(algo) {
		if k.Name == knob {
			return true
		}
	}
	return false
}

// KnobMethods returns the names of the methods that take the knob named
// knob, in registry order.
func KnobMethods(knob string) []string {
	var names []string
	for _, r := range registry {
		if TakesKnob(r.name, knob) {
			names = append(names, r.name)
		}
	}
	return names
}

// VariantKnob returns the knob that a method's name sets after a colon in
// a comparison (choco:topk:0.01 sets compress), and whether there is one.
func VariantKnob() (Knob, bool) {
	for _, k := range AllKnobs() {
		if k.Variant {
			return k, true
		}
	}
	return Knob{}, false
}

// DecodeKnobs returns the knobs in their JSON form, by config.json key
// (see Knob.JSONName), each decoded as the knob of that name some method
// declares; the values that leave their knob at its default are left out.
// An unknown key is an error.
func DecodeKnobs(raw map[string]json.RawMessage) (Knobs, error) {
	var k Knobs
	for key, r := range raw {
		kb, ok := knobByJSONName(key)
		if !ok || kb.Schedule {
			return nil, fmt.Errorf("method knob %q: want one of %s", key, strings.Join(MethodKnobs(), ", "))
		}
		v, err := kb.decode(r)
		if err != nil {
			return nil, err
		}
		if !kb.IsDefault(v) {
			k = k.With(kb.Name, v)
		}
	}
	return k, nil
}

// EncodeKnobs returns k by config.json key, for DecodeKnobs to read back.
func EncodeKnobs(k Knobs) map[string]any {
	if len(k) == 0 {
		return nil
	}
	m := make(map[string]any, len(k))
	for name, v := range k {
		m[jsonName(name)] = v
	}
	return m
}

// knobByJSONName returns the declared knob whose config.json key is key.
func knobByJSONName(key string) (Knob, bool) {
	for _, k := range AllKnobs() {
		if k.JSONName() == key {
			return k, true
		}
	}
	return Knob{}, false
}
