package decentral

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestKnobForms: a knob's flag form parses to its typed value and formats
// back, its type's other values are refused with what it wants, and a
// value at its default (or its type's zero) is no value of its own.
func TestKnobForms(t *testing.T) {
	period, _ := LookupKnob("period")
	if v, err := period.Parse("7"); err != nil || v != 7 || period.Format(v) != "7" {
		t.Errorf("period 7: %v %v", v, err)
	}
	if _, err := period.Parse("x"); err == nil || err.Error() != "an integer" {
		t.Errorf("period x: %v, want an integer", err)
	}
	if period.Format(nil) != "100" || !period.IsDefault(DefaultPeriod) || !period.IsDefault(0) || period.IsDefault(7) {
		t.Errorf("period's default: %q", period.Format(nil))
	}
	if w := period.Want(-1); w != "a positive round count (0: 100)" {
		t.Errorf("period -1: want %q", w)
	}
	if w := period.Want("7"); w != "an integer" {
		t.Errorf(`period "7": want %q`, w)
	}
	steps, _ := LookupKnob("local-steps")
	if _, err := steps.Parse("0"); err == nil || err.Error() != "at least 1 local step" {
		t.Errorf("local-steps 0: %v", err)
	}
	nesterov, _ := LookupKnob("nesterov")
	if v, err := nesterov.Parse("true"); err != nil || v != true {
		t.Errorf("nesterov true: %v %v", v, err)
	}
	compress, _ := LookupKnob("compress")
	if v, rec := compress.Resolve("qsgd:07"); v != "qsgd:7" || !rec {
		t.Errorf("compress qsgd:07 resolves to %v, %v", v, rec)
	}
	if _, rec := compress.Resolve("none"); rec {
		t.Error("compress none is recorded")
	}
	gamma, _ := LookupKnob("gamma")
	if v, rec := gamma.Resolve(nil); v != DefaultGamma || !rec {
		t.Errorf("CHOCO's γ not given resolves to %v, %v, want the default recorded", v, rec)
	}
	if k, ok := VariantKnob(); !ok || k.Name != "compress" {
		t.Errorf("the variant knob is %q", k.Name)
	}
}

// TestKnobsChecked: NewMethod refuses a knob out of range with the
// message the method's Validate gives for the same value, which is the
// knob's one check; the methods' knobs each have help.
func TestKnobsChecked(t *testing.T) {
	for _, tc := range []struct {
		algo  string
		knobs Knobs
		m     Validator
		want  string
	}{
		{DGET, Knobs{"period": -1}, DGETMethod{Period: -1}, "period -1: want a positive round count (0: 100)"},
		{DGET, Knobs{"big-batch": -2}, DGETMethod{BigBatch: -2}, "big-batch -2: want 0 (the node's whole share) or a positive sample count"},
		{CHOCO, Knobs{"gamma": 1.5}, CHOCOMethod{Gamma: 1.5}, "gamma 1.5: want a consensus step in (0, 1] (0: 0.05)"},
		{CHOCO, Knobs{"compress": "topk:7"}, CHOCOMethod{Compress: "topk:7"}, "compress topk:7: want none, topk:F"},
		{DSGDM, Knobs{"momentum": 1.0}, DSGDMMethod{Momentum: 1}, "momentum 1: want a momentum μ in [0, 1)"},
		{DSGDM, Knobs{"local-steps": -1}, DSGDMMethod{LocalSteps: -1}, "local-steps -1: want at least 1 local step"},
		{QGDSGDM, Knobs{"momentum": -0.5}, QGDSGDMMethod{Momentum: -0.5}, "momentum -0.5: want a momentum μ in [0, 1)"},
	} {
		_, err := NewMethod(tc.algo, tc.knobs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.algo, tc.knobs, err, tc.want)
		}
		if err := tc.m.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%#v.Validate() = %v, want %q", tc.m, err, tc.want)
		}
	}
	for _, k := range AllKnobs() {
		if k.Usage == "" || len(KnobMethods(k.Name)) == 0 {
			t.Errorf("knob %s: usage %q, methods %q", k.Name, k.Usage, KnobMethods(k.Name))
		}
	}
	if m, err := NewMethod(DGET, Knobs{"period": 7, "gamma": 0.5}); err != nil || m != (DGETMethod{Period: 7}) {
		t.Errorf("D-GET from its period and CHOCO's γ: %#v, %v", m, err)
	}
}

// TestKnobsJSON: knobs by their config.json keys read back as the typed
// values they were; a value at its default is left out, and an unknown
// key or a value of another type is refused.
func TestKnobsJSON(t *testing.T) {
	k := Knobs{"big-batch": 40, "gamma": 0.2, "compress": "topk:0.1", "nesterov": true}
	b, err := json.Marshal(EncodeKnobs(k))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"big_batch":40,"compress":"topk:0.1","gamma":0.2,"nesterov":true}`; string(b) != want {
		t.Errorf("encoded %s, want %s", b, want)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(b, &raw)
	got, err := DecodeKnobs(raw)
	if err != nil || !reflect.DeepEqual(got, k) {
		t.Errorf("decoded %#v, %v, want %#v", got, err, k)
	}
	for src, want := range map[string]string{
		`{"period": 100, "local_steps": 0, "compress": "none"}`: "",
		`{"mu": 1}`:           `method knob "mu"`,
		`{"period": "ten"}`:   "period \"ten\": want an integer",
		`{"period": 2.5}`:     "period 2.5: want an integer",
		`{"rho": 1}`:          `method knob "rho"`,
		`{"nesterov": "yes"}`: "want true or false",
	} {
		var raw map[string]json.RawMessage
		json.Unmarshal([]byte(src), &raw)
		got, err := DecodeKnobs(raw)
		switch {
		case want == "" && (err != nil || got != nil):
			t.Errorf("%s: %v, %v, want no knobs", src, got, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want an error naming %q", src, err, want)
		}
	}
}
