package train

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestConfigJSONMethod: config.json holds the method's name and the knobs
// it is given under "method", and reads back as the same settings, for
// every method with every knob it takes; the step sizes stay among the
// other settings, under their old keys.
func TestConfigJSONMethod(t *testing.T) {
	for _, algo := range decentral.Algorithms() {
		c := Default()
		c.Algo = algo
		for _, k := range decentral.KnobsOf(algo) {
			knobValues[k.Name](&c)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		method, _ := m["method"].(map[string]any)
		if method["name"] != algo || m["algo"] != nil || m["eta0"] != c.Eta0 {
			t.Errorf("%s: %s", algo, b)
		}
		for _, k := range decentral.KnobsOf(algo) {
			if _, ok := method[k.JSONName()]; ok == k.Schedule {
				t.Errorf("%s: knob %s under the method: %v", algo, k.Name, ok)
			}
		}
		var back Config
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		if !reflect.DeepEqual(back, c) {
			t.Errorf("%s: read back as %+v, want %+v", algo, back, c)
		}
	}
	var bad Config
	if err := json.Unmarshal([]byte(`{"method": {"name": "d-get", "period": "ten"}}`), &bad); err == nil ||
		!strings.Contains(err.Error(), "period") {
		t.Errorf("a period that is no integer: %v", err)
	}
}

// TestConfigJSONEarlierBuilds: a config.json of an earlier build, with
// "algo" and the method knobs among the other settings (D-GET's period
// written for every method), reads as the same run: the knobs that apply
// and are not at their default go to Knobs.
func TestConfigJSONEarlierBuilds(t *testing.T) {
	for _, tc := range []struct {
		json string
		algo string
		want decentral.Knobs
	}{
		{`{"algo": "gt-storm", "rho": 2, "period": 100, "big_batch": 0}`, decentral.GTSTORM, nil},
		{`{"algo": "d-get", "period": 10, "big_batch": 0}`, decentral.DGET, decentral.Knobs{"period": 10}},
		{`{"algo": "choco", "period": 100, "compress": "qsgd:7", "gamma": 0.05}`, decentral.CHOCO,
			decentral.Knobs{"compress": "qsgd:7", "gamma": 0.05}},
		{`{"algo": "dsgdm", "period": 100, "momentum": 0.9, "local_steps": 4}`, decentral.DSGDM,
			decentral.Knobs{"momentum": 0.9, "local-steps": 4}},
	} {
		var c Config
		if err := json.Unmarshal([]byte(tc.json), &c); err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if c.Algo != tc.algo || !reflect.DeepEqual(c.Knobs, tc.want) {
			t.Errorf("%s: algo %q, knobs %v, want %s and %v", tc.json, c.Algo, c.Knobs, tc.algo, tc.want)
		}
	}
}
