package train

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TargetReached is where a run first reached its target (--target-acc or
// --target-stat), measured at its evaluation rounds: the rounds, the
// samples drawn by all nodes, the bytes the busiest node sent, the
// simulated seconds (null without a simulated network) and the wall time.
type TargetReached struct {
	Target       string `json:"target"` // e.g. "test_acc ≥ 0.85"
	Reached      bool   `json:"reached"`
	Round        int    `json:"round,omitempty"`
	Samples      int64  `json:"samples,omitempty"`
	BytesPerNode int64  `json:"bytes_sent_per_node,omitempty"`
	SimSeconds   Num    `json:"sim_seconds,omitempty"`
	Seconds      Num    `json:"seconds,omitempty"`
}

// MarshalJSON writes a reached target with all its figures, zeros included
// (a target met at round 0 says round 0), and one never reached with only
// its name and reached: false.
func (t TargetReached) MarshalJSON() ([]byte, error) {
	if !t.Reached {
		return json.Marshal(struct {
			Target  string `json:"target"`
			Reached bool   `json:"reached"`
		}{t.Target, false})
	}
	type reached struct {
		Target       string `json:"target"`
		Reached      bool   `json:"reached"`
		Round        int    `json:"round"`
		Samples      int64  `json:"samples"`
		BytesPerNode int64  `json:"bytes_sent_per_node"`
		SimSeconds   Num    `json:"sim_seconds,omitempty"`
		Seconds      Num    `json:"seconds"`
	}
	return json.Marshal(reached(t))
}

// target returns the first of rows that meets c's target, or nil when c
// sets none. A run that never met it has Reached false.
func target(c Config, rows []Row) *TargetReached {
	var met func(Row) bool
	var name string
	switch {
	case c.TargetAcc > 0:
		name = fmt.Sprintf("test_acc ≥ %g", c.TargetAcc)
		met = func(r Row) bool { return r.TestAcc >= c.TargetAcc }
	case c.TargetStat > 0:
		name = fmt.Sprintf("stationarity ≤ %g", c.TargetStat)
		met = func(r Row) bool { return r.Stationarity() <= c.TargetStat }
	default:
		return nil
	}
	for _, r := range rows {
		if met(r) {
			return &TargetReached{Target: name, Reached: true, Round: r.Round, Samples: r.Samples,
				BytesPerNode: r.BytesPerNode, SimSeconds: Num(r.SimSeconds), Seconds: Num(r.Seconds)}
		}
	}
	return &TargetReached{Target: name}
}

// NetworkCells returns every cell once per simulated network, each network
// given as LATENCY/BANDWIDTH (e.g. 1ms/1Gbit), its label ending in the
// network: how `compare --networks` runs the same algorithms on a fast and
// a slow network.
func NetworkCells(cells []Cell, networks []string) ([]Cell, error) {
	var out []Cell
	for _, n := range networks {
		lat, bw, ok := strings.Cut(n, "/")
		if !ok {
			return nil, fmt.Errorf("--networks %s: want LATENCY/BANDWIDTH such as 1ms/1Gbit or 50ms/10Mbit", n)
		}
		for _, cell := range cells {
			c := Cell{Label: cell.Label + " / " + n, Configs: slices.Clone(cell.Configs)}
			for k := range c.Configs {
				if err := c.Configs[k].Set("link-latency", lat); err != nil {
					return nil, fmt.Errorf("--networks %s: want a latency such as 1ms before the /", n)
				}
				if err := c.Configs[k].Set("link-bandwidth", bw); err != nil {
					return nil, fmt.Errorf("--networks %s: want a bandwidth such as 1Gbit after the /", n)
				}
				if !c.Configs[k].SimulatesNetwork() {
					return nil, fmt.Errorf("--networks %s: simulates no network (no latency, unlimited bandwidth); want a latency or a bandwidth such as 1ms/1Gbit", n)
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// networkLabel names c's simulated network for tables and plots
// ("1ms/1Gbit"), or returns "" when c simulates none.
func networkLabel(c Config) string {
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
