package cluster

import (
	"encoding/json"
	"math"
	"testing"
)

// settings stands for a run's Config.
type settings struct {
	Dataset string  `json:"dataset"`
	Nodes   int     `json:"nodes"`
	Eta0    float64 `json:"eta0"`
	Seed    uint64  `json:"seed"`
	Workers int     `json:"workers"`
	Inner   struct {
		A int `json:"a"`
		B int `json:"b"`
	} `json:"inner"`
}

func TestConfigHash(t *testing.T) {
	base := settings{Dataset: "mnist", Nodes: 10, Eta0: 0.01, Seed: 1, Workers: 4}
	hash := func(v any, omit ...string) string {
		t.Helper()
		h, err := ConfigHash(v, omit...)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := hash(base, "workers", "inner.b")
	if len(h) != 32 {
		t.Errorf("hash %q: want 32 hex digits", h)
	}
	if hash(base, "workers", "inner.b") != h {
		t.Error("not stable across calls")
	}

	// Key order, number spelling and omitted keys do not matter.
	same := map[string]any{
		"raw, other order": json.RawMessage(`{"workers":1,"seed":1,"inner":{"b":7,"a":0},"eta0":1e-2,"nodes":10.0,"dataset":"mnist"}`),
		"map":              map[string]any{"inner": map[string]int{"a": 0, "b": 3}, "seed": 1, "nodes": 10, "eta0": 0.01, "dataset": "mnist", "workers": 16},
		"no workers":       json.RawMessage(`{"seed":1,"inner":{"a":0},"eta0":0.010,"nodes":1e1,"dataset":"mnist"}`),
		"other workers":    func() settings { s := base; s.Workers = 64; s.Inner.B = 9; return s }(),
		"omit not present": json.RawMessage(`{"seed":1,"inner":{"a":0},"eta0":0.01,"nodes":10,"dataset":"mnist"}`),
	}
	for name, v := range same {
		if got := hash(v, "workers", "inner.b", "max_memory"); got != h {
			t.Errorf("%s: hash %s, want %s", name, got, h)
		}
	}

	// Any result-changing value changes it.
	for name, change := range map[string]func(*settings){
		"dataset": func(s *settings) { s.Dataset = "cifar10" },
		"nodes":   func(s *settings) { s.Nodes = 11 },
		"eta0":    func(s *settings) { s.Eta0 = math.Nextafter(0.01, 1) },
		"seed":    func(s *settings) { s.Seed = 2 },
		"big seed": func(s *settings) {
			s.Seed = 1<<63 + 1 // differs from 1<<63 only beyond float64's precision
		},
		"inner.a": func(s *settings) { s.Inner.A = 1 },
	} {
		s := base
		change(&s)
		if hash(s, "workers", "inner.b") == h {
			t.Errorf("changing %s leaves the hash alone", name)
		}
	}
	big1, big2 := base, base
	big1.Seed, big2.Seed = 1<<63, 1<<63+1
	if hash(big1) == hash(big2) {
		t.Error("seeds 2^63 and 2^63+1 hash alike")
	}
	if hash(base) == h {
		t.Error("omitting workers changes nothing")
	}

	if _, err := ConfigHash(math.NaN()); err == nil {
		t.Error("NaN hashed")
	}
	if _, err := ConfigHash(json.RawMessage(`{"a":`)); err == nil {
		t.Error("broken JSON hashed")
	}
}
