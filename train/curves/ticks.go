package curves

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
)

// relabel is a tick marker whose labelled ticks are formatted with format.
type relabel struct {
	plot.Ticker
	format string
}

func (r relabel) Ticks(min, max float64) []plot.Tick {
	ticks := r.Ticker.Ticks(min, max)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = fmt.Sprintf(r.format, t.Value)
		}
	}
	return ticks
}

// logTicks is a tick marker for a log scale that labels, in format, at
// least two ticks whatever the range: the powers of ten in it (every k-th
// one where there are more than maxLogLabels), or where fewer than two fall
// in it, also their multiples 2 and 5, or else every multiple 1 to 9 of
// them; and in a range narrower than that, the ticks of a linear axis.
type logTicks struct{ format string }

// maxLogLabels is the most powers of ten logTicks labels.
const maxLogLabels = 10

func (t logTicks) Ticks(minV, maxV float64) []plot.Tick {
	if !(minV > 0 && minV < maxV) || math.IsInf(maxV, 0) {
		return linearTicks(minV, maxV)
	}
	lo, hi := int(math.Floor(math.Log10(minV))), int(math.Ceil(math.Log10(maxV)))
	if n := hi - lo + 1; n > maxLogLabels { // only every k-th power of ten
		k := (n + maxLogLabels - 1) / maxLogLabels
		var ticks []plot.Tick
		for e := lo; e <= hi; e++ {
			if v := pow10(1, e); e%k == 0 && within(v, minV, maxV) {
				ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf(t.format, v)})
			}
		}
		return ticks
	}
	for _, marks := range [][]int{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		var ticks []plot.Tick
		n := 0
		for e := lo; e <= hi; e++ {
			for m := 1; m <= 9; m++ {
				v := pow10(m, e)
				if !within(v, minV, maxV) {
					continue
				}
				tick := plot.Tick{Value: v}
				if slices.Contains(marks, m) {
					tick.Label = fmt.Sprintf(t.format, v)
					n++
				}
				ticks = append(ticks, tick)
			}
		}
		if n >= 2 {
			return ticks
		}
	}
	return linearTicks(minV, maxV)
}

// linearTicks returns the ticks of a linear axis over [minV, maxV], with
// at least two labelled, all labels distinct, and none for a range that is
// not one.
func linearTicks(minV, maxV float64) []plot.Tick {
	if !(minV < maxV) || !finite(minV) || !finite(maxV) {
		return nil
	}
	ticks := plot.DefaultTicks{}.Ticks(minV, maxV)
	n := 0
	for _, t := range ticks {
		if t.Label != "" && within(t.Value, minV, maxV) {
			n++
		}
	}
	if n < 2 { // too narrow a range for DefaultTicks: label its ends
		ticks = []plot.Tick{{Value: minV, Label: "min"}, {Value: maxV, Label: "max"}}
	}
	if n < 2 || !distinct(ticks) {
		relabelDistinct(ticks)
	}
	return ticks
}

// relabelDistinct labels the labelled ticks with the fewest significant
// digits, 3 at least, that tell them apart.
func relabelDistinct(ticks []plot.Tick) {
	for prec := 3; prec <= 17; prec++ {
		for i, t := range ticks {
			if t.Label != "" {
				ticks[i].Label = strconv.FormatFloat(t.Value, 'g', prec, 64)
			}
		}
		if distinct(ticks) {
			return
		}
	}
}

// distinct reports whether no two ticks have the same label.
func distinct(ticks []plot.Tick) bool {
	seen := make(map[string]bool, len(ticks))
	for _, t := range ticks {
		if t.Label != "" && seen[t.Label] {
			return false
		}
		seen[t.Label] = true
	}
	return true
}

// pow10 returns m·10^e, correctly rounded (3·10^-1 is 0.3, not
// 0.30000000000000004), 0 or +Inf beyond the floats.
func pow10(m, e int) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
	return v
}

// within reports whether v lies in [minV, maxV], give or take rounding.
func within(v, minV, maxV float64) bool {
	const eps = 1e-9
	return v >= minV-float64(eps*math.Abs(minV)) && v <= maxV+float64(eps*math.Abs(maxV))
}
