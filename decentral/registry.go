package decentral

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// Knobs are a run's settings in their flag form, by flag name, such as
// {"period": "100", "gamma": "0.05"}: what a registered method's
// constructor reads its knobs from (see [NewMethod]). A knob that is absent
// or empty takes the method's default; a method ignores the settings that
// are not its knobs.
type Knobs map[string]string

// Int returns knob name as an integer, 0 when it is absent or empty.
func (k Knobs) Int(name string) (int, error) {
	s := k[name]
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("knob %s = %q: want an integer", name, s)
	}
	return n, nil
}

// Float returns knob name as a number, 0 when it is absent or empty.
func (k Knobs) Float(name string) (float64, error) {
	s := k[name]
	if s == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("knob %s = %q: want a number", name, s)
	}
	return x, nil
}

// Bool returns knob name as a boolean, false when it is absent or empty.
func (k Knobs) Bool(name string) (bool, error) {
	s := k[name]
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("knob %s = %q: want true or false", name, s)
	}
	return b, nil
}

// registration is one registered method: its name and the constructor that
// makes it from a run's knobs.
type registration struct {
	name  string
	build func(Knobs) (Method, error)
}

// registry is every method a run can name, one line each, in the order the
// paper compares them.
var registry = []registration{
	{DSGD, func(Knobs) (Method, error) { return DSGDMethod{}, nil }},
	{D2, func(Knobs) (Method, error) { return D2Method{}, nil }},
	{GNSD, func(Knobs) (Method, error) { return GNSDMethod{}, nil }},
	{DGET, newDGET},
	{GTSTORM, func(Knobs) (Method, error) { return GTSTORMMethod{}, nil }},
	{CHOCO, newCHOCO},
	{DSGDM, newDSGDM},
	{QGDSGDM, newQGDSGDM},
}

// MethodKnobs returns the names of the settings that apply to some methods
// only (Description.Knobs: D-GET's period, CHOCO's gamma, …), each once,
// in registry order.
func MethodKnobs() []string {
	var names []string
	for _, r := range registry {
		d, _ := describe(r.name)
		for _, k := range d.Knobs {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	return names
}

// TakesKnob reports whether the method named algo takes the method knob
// named knob (its Description.Knobs lists it); false for an unknown method.
func TakesKnob(algo, knob string) bool {
	d, err := describe(algo)
	return err == nil && slices.Contains(d.Knobs, knob)
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

// Algorithms returns the registered methods' names in the order the paper
// compares them.
func Algorithms() []string {
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	return names
}

// NewMethod returns the registered method named name, configured with its
// knobs from k (nil gives every knob its default).
func NewMethod(name string, k Knobs) (Method, error) {
	for _, r := range registry {
		if r.name == name {
			m, err := r.build(k)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return m, nil
		}
	}
	return nil, fmt.Errorf("algorithm %q: want one of %s", name, strings.Join(Algorithms(), ", "))
}

// describe returns the description of the method named algo with its
// default knobs: what does not depend on them (its slabs, its needs).
func describe(algo string) (Description, error) {
	m, err := NewMethod(algo, nil)
	if err != nil {
		return Description{}, err
	}
	return m.Describe(), nil
}

// NeedsStaticGraph reports whether the algorithm named algo needs the same
// W every round (Description.StaticGraph, as CHOCO's); false for an unknown
// name.
func NeedsStaticGraph(algo string) bool {
	d, err := describe(algo)
	return err == nil && d.StaticGraph
}

// CompressesMessages reports whether the algorithm named algo sends
// compressed messages (Description.Compress, as CHOCO's) rather than its
// shared slabs: such a method takes no attack on messages and no robust
// aggregation rule. False for an unknown name.
func CompressesMessages(algo string) bool {
	d, err := describe(algo)
	return err == nil && d.Compress != ""
}

// StateSlabs returns the names of the state slabs a [Snapshot] of algo
// holds, x first.
func StateSlabs(algo string) ([]string, error) {
	d, err := describe(algo)
	if err != nil {
		return nil, err
	}
	return d.Slabs, nil
}

// SamplesAfter returns the samples a node of m draws in Init and rounds
// 1..rounds at cost c.
func SamplesAfter(m Method, rounds int, c Cost) int64 {
	var n int64
	for t := 0; t <= rounds; t++ {
		n += m.Samples(t, c)
	}
	return n
}

// RoundsWithin returns the most rounds of m whose samples per node, Init's
// included, stay within budget at cost c: how a comparison at an equal
// budget of samples gives each algorithm its rounds. It is 0 when Init alone
// spends more than the budget.
func RoundsWithin(m Method, budget int64, c Cost) (int, error) {
	spent := m.Samples(0, c)
	rounds := 0
	for {
		n := m.Samples(rounds+1, c)
		if n <= 0 {
			return 0, fmt.Errorf("%s: round %d draws %d samples at %+v, want > 0", m.Describe().Name, rounds+1, n, c)
		}
		if spent+n > budget {
			return rounds, nil
		}
		spent += n
		rounds++
	}
}

// CheckTopology returns an error naming the first round whose W_t algo
// cannot use (see [MixingChecker]: D² on a graph whose links fail), or nil.
// W_t depends only on the topology and t, so a run of rounds rounds can be
// refused before its first round instead of stopping at round t.
func CheckTopology(algo string, topo graph.Topology, rounds int) error {
	m, err := NewMethod(algo, nil)
	if err != nil {
		return err
	}
	c, ok := m.(MixingChecker)
	if !ok {
		return nil
	}
	var last *graph.Mixing
	for t := range rounds {
		mx := topo.Mixing(t)
		if mx == nil {
			return fmt.Errorf("round %d: the topology gave no mixing matrix", t+1)
		}
		if mx == last {
			continue
		}
		if err := c.CheckMixing(mx); err != nil {
			return fmt.Errorf("round %d: %w", t+1, err)
		}
		last = mx
	}
	return nil
}
