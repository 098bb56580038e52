package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/gtstorm/gtstorm/decentral"
)

// configFields is Config without its JSON methods: every setting but the
// method, which Config's JSON form holds under "method".
type configFields Config

// MarshalJSON writes c as config.json holds it: the method first, its name
// and the knobs it is given values of its own,
//
//	"method": {"name": "d-get", "period": 10, "big_batch": 400},
//
// then the other settings.
func (c Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Method methodJSON `json:"method"`
		configFields
	}{methodJSON{c.Algo, c.Knobs}, configFields(c)})
}

// UnmarshalJSON reads config.json, that of today's builds (the method
// under "method") or that of earlier ones, which write the method's name
// as "algo" and its knobs among the other settings ("period", "gamma", …,
// some of them for every method). A knob at the value that leaves its
// method at its default is left out of Knobs.
func (c *Config) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*configFields)(c)); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	knobs := map[string]json.RawMessage{}
	if m, ok := raw["method"]; ok {
		if err := json.Unmarshal(m, &knobs); err != nil {
			return fmt.Errorf("method: %w", err)
		}
		if name, ok := knobs["name"]; ok {
			if err := json.Unmarshal(name, &c.Algo); err != nil {
				return fmt.Errorf("method name: %w", err)
			}
			delete(knobs, "name")
		}
	} else {
		if a, ok := raw["algo"]; ok {
			if err := json.Unmarshal(a, &c.Algo); err != nil {
				return fmt.Errorf("algo: %w", err)
			}
		}
		for _, k := range decentral.AllKnobs() {
			if r, ok := raw[k.JSONName()]; ok && !k.Schedule {
				knobs[k.JSONName()] = r
			}
		}
	}
	k, err := decentral.DecodeKnobs(knobs)
	if err != nil {
		return fmt.Errorf("method %s: %w", c.Algo, err)
	}
	c.Knobs = k
	return nil
}

// methodJSON is config.json's "method": the method's name and its knobs.
type methodJSON struct {
	name  string
	knobs decentral.Knobs
}

// MarshalJSON writes the name first, then the knobs by config.json key in
// sorted order.
func (m methodJSON) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	name, err := json.Marshal(m.name)
	if err != nil {
		return nil, err
	}
	buf.WriteString(`{"name":`)
	buf.Write(name)
	enc := decentral.EncodeKnobs(m.knobs)
	for _, key := range slices.Sorted(maps.Keys(enc)) {
		v, err := json.Marshal(enc[key])
		if err != nil {
			return nil, fmt.Errorf("method knob %s: %w", key, err)
		}
		fmt.Fprintf(&buf, ",%q:%s", key, v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// flatSettings returns the settings of a config.json decoded as a map,
// with the method's name and knobs among the others, as "algo" and by
// their config.json keys (the form of earlier builds' files): so that a
// difference in the method reads as one in a setting ("gamma 0.1 there,
// 0.2 here"), whichever build wrote each side.
func flatSettings(m map[string]any) map[string]any {
	method, ok := m["method"].(map[string]any)
	if !ok {
		return m
	}
	delete(m, "method")
	for k, v := range method {
		if k == "name" {
			k = "algo"
		}
		m[k] = v
	}
	return m
}
