package train

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/decentral"
)

// Flag values over Config's fields. Their Set errors say what is wanted.
type (
	stringValue string
	intValue    int
	uintValue   uint64
	floatValue  float64
	boolValue   bool
)

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string     { return string(*v) }

// attackValue is --attack: a string setting whose value none, as `--vary
// attack=none,…` lists it, is no attack (the empty setting), so that
// config.json and the run are those of a run without the flag.
type attackValue string

func (v *attackValue) Set(s string) error {
	if s == AttackNone {
		s = ""
	}
	*v = attackValue(s)
	return nil
}
func (v *attackValue) String() string { return string(*v) }

// AttackNone is the --attack value that means no attack.
const AttackNone = "none"

// scheduleValue is --schedule: paper, the default, is stored as "" so
// that config.json and the run are those of a run without the flag.
type scheduleValue string

func (v *scheduleValue) Set(s string) error {
	if s == decentral.SchedulePaper {
		s = ""
	}
	*v = scheduleValue(s)
	return nil
}
func (v *scheduleValue) String() string { return cmp.Or(string(*v), decentral.SchedulePaper) }

// scheduleWant checks --schedule's spec (decentral.ParseSchedule).
func scheduleWant(c Config) string {
	_, _, err := decentral.ParseSchedule(c.StepSchedule)
	if err == nil {
		return ""
	}
	detail := strings.TrimPrefix(err.Error(), fmt.Sprintf("schedule %q: ", c.StepSchedule))
	if strings.HasPrefix(detail, "want ") {
		return decentral.ScheduleWant
	}
	return decentral.ScheduleWant + " (" + detail + ")"
}

func (v *intValue) Set(s string) error {
	x, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("an integer")
	}
	*v = intValue(x)
	return nil
}
func (v *intValue) String() string { return strconv.Itoa(int(*v)) }

func (v *uintValue) Set(s string) error {
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("an integer from 0 to %d", uint64(math.MaxUint64))
	}
	*v = uintValue(x)
	return nil
}
func (v *uintValue) String() string { return strconv.FormatUint(uint64(*v), 10) }

func (v *floatValue) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("a number")
	}
	*v = floatValue(x)
	return nil
}
func (v *floatValue) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }

func (v *boolValue) Set(s string) error {
	x, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("true or false")
	}
	*v = boolValue(x)
	return nil
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
