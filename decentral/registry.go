package decentral

import (
	"fmt"
	"strings"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// registration is one registered method: its name, the knobs it takes
// and the constructor that makes it from their values, which [NewMethod]
// has checked.
type registration struct {
	name  string
	knobs []Knob
	build func(Knobs) Method
}

// registry is every method a run can name, one line each, in the order the
// paper compares them.
var registry = []registration{
	{DSGD, nil, func(Knobs) Method { return DSGDMethod{} }},
	{D2, nil, func(Knobs) Method { return D2Method{} }},
	{GNSD, nil, func(Knobs) Method { return GNSDMethod{} }},
	{DGET, dgetKnobs, newDGET},
	{GTSTORM, []Knob{rhoKnob}, func(Knobs) Method { return GTSTORMMethod{} }},
	{CHOCO, chocoKnobs, newCHOCO},
	{DSGDM, dsgdmKnobs, newDSGDM},
	{QGDSGDM, momentumKnobs, newQGDSGDM},
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
// knobs from k (nil gives every knob its default). It refuses a knob of
// the method that is not of the knob's type or out of its range; the
// knobs in k that the method does not take are ignored.
func NewMethod(name string, k Knobs) (Method, error) {
	for _, r := range registry {
		if r.name == name {
			if err := checkKnobs(r.knobs, k); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return r.build(k), nil
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

// DirectedCaution returns what a run of the method named algo on the
// directed graph named graph should be told (see [DirectedCautioner]), or
// "".
func DirectedCaution(algo, graph string) string {
	m, err := NewMethod(algo, nil)
	if err != nil {
		return ""
	}
	if c, ok := m.(DirectedCautioner); ok {
		return c.DirectedCaution(graph)
	}
	return ""
}
