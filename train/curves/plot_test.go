package curves

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// decodePNG reads the PNG at path.
func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s is not a valid PNG: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Fatalf("%s is %v, want a full-size plot", path, b)
	}
	return img
}

// inked counts the pixels of the left (panel 0) or right (panel 1) half of
// the panels of img, or of the legend's strip on their right (panel 2),
// drawn in exactly col: the lines of curves in that colour.
func inked(img image.Image, panel int, col color.Color) int {
	b := img.Bounds()
	half := int(panelsWidth.Dots(vgimg.DefaultDPI)) / 2
	right := b.Min.X + (panel+1)*half
	if panel == 2 {
		right = b.Max.X
	}
	r0, g0, b0, _ := col.RGBA()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X + panel*half; x < right; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r == r0 && g == g0 && bl == b0 {
				n++
			}
		}
	}
	return n
}

// TestPlotCurvesReport: whatever the values, the plot is a valid PNG, what
// can be drawn is drawn, what cannot is reported, and nothing panics.
func TestPlotCurvesReport(t *testing.T) {
	if raceEnabled {
		t.Skip("renders and scans PNGs on one goroutine (curves starts none): 5 to 10 times slower under -race, which finds nothing there; the plain go test ./... runs it")
	}
	rounds := []float64{0, 10, 20, 30, 40}
	acc := []float64{0.1, 0.5, 0.7, 0.8, 0.85}
	nan := math.NaN()
	cases := []struct {
		name    string
		curves  []Curve
		skipped []string // parts each expected report line holds, in order
		accLine bool     // the first curve's colour appears in the accuracy panel
		sLine   bool     // ... and in the S(x) panel
	}{
		{"positive S", []Curve{{Label: "a", Rounds: rounds, Acc: acc, S: []float64{1, 0.5, 0.1, 0.01, 0.001},
			SStd: []float64{0.5, 0.6, 0.01, 0.001, 0.0001}}}, nil, true, true},
		{"all S zero", []Curve{{Label: "a", Rounds: rounds, Acc: acc, S: make([]float64, 5)}},
			[]string{"S(x) panel: no curve has a positive value to draw on a log scale; drawn on a linear scale"}, true, true},
		{"all S negative", []Curve{{Label: "a", Rounds: rounds, Acc: acc, S: []float64{-1, -2, -3, -4, -5}}},
			[]string{"S(x) panel: no curve has a positive value"}, true, true},
		{"all NaN", []Curve{{Label: "a", Rounds: rounds, Acc: []float64{nan, nan, nan, nan, nan}, S: []float64{nan, nan, nan, nan, nan}}},
			[]string{"S(x) panel", `curve "a": test accuracy: none of its 5 values is finite`, `curve "a": S(x): none of its 5 values is finite`}, false, false},
		{"curve without points", []Curve{{Label: "empty"}},
			[]string{"S(x) panel", `curve "empty": no rounds`}, false, false},
		{"header-only metrics", []Curve{{Label: "cell"}, {Label: "none"}},
			[]string{"S(x) panel", `curve "cell": no rounds`, `curve "none": no rounds`}, false, false},
		{"zero curves", nil, []string{"no curves to plot"}, false, false},
		{"one point below 1", []Curve{{Label: "a", Rounds: []float64{5}, Acc: []float64{0.3}, S: []float64{0.5}}}, nil, true, true},
		{"constant S", []Curve{{Label: "a", Rounds: rounds, Acc: acc, S: []float64{1e-3, 1e-3, 1e-3, 1e-3, 1e-3}}}, nil, true, true},
		{"extreme values", []Curve{{Label: "a", Rounds: rounds, Acc: acc,
			S:    []float64{math.SmallestNonzeroFloat64, 1e-300, 1, 1e300, math.MaxFloat64},
			SStd: []float64{1, 1, 1e308, math.MaxFloat64, math.MaxFloat64}}}, nil, true, true},
		{"some values unusable", []Curve{{Label: "a", Rounds: rounds, Acc: []float64{0.1, nan, 0.5, math.Inf(1), 0.6},
			S: []float64{1, 0, nan, -1, 0.5}}},
			[]string{`curve "a": test accuracy: 2 of its 5 values not finite, left out`, `curve "a": S(x): 3 of its 5 values not positive and finite, left out`}, true, true},
		{"one good curve, one all zero", []Curve{
			{Label: "good", Rounds: rounds, Acc: acc, S: []float64{1, 0.5, 0.1, 0.01, 0.001}},
			{Label: "zero", Rounds: rounds, Acc: acc, S: make([]float64, 5)}},
			[]string{`curve "zero": S(x): none of its 5 values is positive and finite`}, true, true},
		{"slices shorter than the rounds", []Curve{{Label: "a", Rounds: rounds, Acc: acc[:2], AccStd: []float64{0.1}, S: []float64{1}, SStd: []float64{}}},
			[]string{"test accuracy: 3 of its 5 values", "S(x): 4 of its 5 values"}, true, true},
		{"log x, slices shorter than the rounds", []Curve{{Label: "a", LogX: true, Rounds: rounds, Acc: acc[:2], AccStd: []float64{0.1}, S: []float64{1, 2}}},
			[]string{"test accuracy: 3 of its 4 values", "S(x): 3 of its 4 values"}, true, true},
		{"log x, every x at 0", []Curve{{Label: "a", LogX: true, Rounds: []float64{0, 0}, Acc: []float64{0.1, 0.2}, S: []float64{1, 2}}},
			nil, true, true},
		{"log x, every x at 1", []Curve{{Label: "a", LogX: true, Rounds: []float64{1, 1}, Acc: []float64{0.1, 0.2}, S: []float64{1, 2}}},
			nil, true, true},
		{"log x, every x at 0.5", []Curve{{Label: "a", LogX: true, Rounds: []float64{0, 0.5, 0.5}, Acc: []float64{0.1, 0.2, 0.3}, S: []float64{1, 2, 3}}},
			nil, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "curves.png")
			skipped, err := PlotReport(path, "test", c.curves)
			if err != nil {
				t.Fatal(err)
			}
			if len(skipped) != len(c.skipped) {
				t.Fatalf("skipped %q, want %d lines holding %q", skipped, len(c.skipped), c.skipped)
			}
			for i, want := range c.skipped {
				if !strings.Contains(skipped[i], want) {
					t.Errorf("skipped[%d] = %q, want it to mention %q", i, skipped[i], want)
				}
			}
			img := decodePNG(t, path)
			col := palette[0]
			if got := inked(img, 0, col) > 0; got != c.accLine {
				t.Errorf("accuracy panel shows the first curve: %v, want %v", got, c.accLine)
			}
			if got := inked(img, 1, col) > 0; got != c.sLine {
				t.Errorf("S(x) panel shows the first curve: %v, want %v", got, c.sLine)
			}
		})
	}
}

// TestPlotCurvesKeepsItsSignature: Plot draws the same plot and only
// drops the report.
func TestPlotCurvesKeepsItsSignature(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curves.png")
	if err := Plot(path, "test", []Curve{{Label: "a", Rounds: []float64{1, 2}, Acc: []float64{0.5, 0.6}, S: []float64{0, 0}}}); err != nil {
		t.Fatal(err)
	}
	decodePNG(t, path)
	if err := Plot(filepath.Join(t.TempDir(), "missing", "curves.png"), "test", nil); err == nil {
		t.Fatal("writing into a missing folder succeeded")
	}
}

// render builds and draws the figure of curves, as PlotReport does,
// so that its axes hold the ranges they are drawn with.
func render(t *testing.T, curves []Curve) (*figure, *vgimg.Canvas) {
	t.Helper()
	f, _, err := newFigure("test", curves)
	if err != nil {
		t.Fatal(err)
	}
	return f, f.render()
}

// TestPlotAxesHoldEveryPoint: each panel's y axis, as drawn, holds every
// value and band edge with room to spare, so that no line runs along, or
// beyond, the edge of the data area.
func TestPlotAxesHoldEveryPoint(t *testing.T) {
	rounds := []float64{0, 10, 20}
	cases := []struct {
		name         string
		curves       []Curve
		accLo, accHi float64 // the extreme values and band edges drawn
		sLo, sHi     float64
		logS         bool // the S(x) axis is on a log scale
	}{
		{"top curve at 0.7802", []Curve{
			{Label: "a", Rounds: rounds, Acc: []float64{0.1, 0.6, 0.7802}, S: []float64{1, 0.1, 0.01}},
			{Label: "b", Rounds: rounds, Acc: []float64{0.1, 0.5, 0.7}, S: []float64{2, 0.5, 0.2}}},
			0.1, 0.7802, 0.01, 2, true},
		{"std bands", []Curve{{Label: "a", Rounds: rounds, Acc: []float64{0.2, 0.5, 0.77}, AccStd: []float64{0.05, 0.01, 0.0102},
			S: []float64{1, 0.1, 0.01}, SStd: []float64{0.5, 0.02, 0.002}}},
			0.15, 0.7802, 0.008, 1.5, true},
		{"one point", []Curve{{Label: "a", Rounds: rounds[:1], Acc: []float64{0.3}, S: []float64{0.5}}},
			0.3, 0.3, 0.5, 0.5, true},
		{"linear S(x)", []Curve{{Label: "a", Rounds: rounds, Acc: []float64{0, 0, 0}, S: []float64{-3, -2, 0}}},
			0, 0, -3, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, _ := render(t, c.curves)
			for _, ax := range []struct {
				what   string
				axis   plot.Axis
				lo, hi float64
				log    bool
			}{
				{"accuracy", f.acc.Y, c.accLo, c.accHi, false},
				{"S(x)", f.st.Y, c.sLo, c.sHi, c.logS},
			} {
				if _, log := ax.axis.Scale.(plot.LogScale); log != ax.log {
					t.Errorf("%s axis on a log scale: %v, want %v", ax.what, log, ax.log)
				}
				if !(ax.axis.Min < ax.lo && ax.hi < ax.axis.Max) {
					t.Errorf("%s axis [%g, %g], want it to hold [%g, %g] with a margin", ax.what, ax.axis.Min, ax.axis.Max, ax.lo, ax.hi)
				}
			}
		})
	}
}

// TestAxisRanges: the ranges hold their values, with a margin where the
// floats allow one, and stay finite and, on a log scale, positive.
func TestAxisRanges(t *testing.T) {
	big, tiny := math.MaxFloat64, math.SmallestNonzeroFloat64
	for _, c := range []struct {
		lo, hi float64
		log    bool
		margin bool // both ends leave room
	}{
		{0.1, 0.7802, false, true}, {0, 0, false, true}, {-5, -5, false, true}, {0.3, 0.3, false, true},
		{-big, big, false, false}, {big, big, false, false}, {-1, 1e308, false, false},
		{0.01, 2, true, true}, {0.5, 0.5, true, true}, {1e-300, 1e300, true, true},
		{tiny, big, true, false}, {tiny, tiny, true, false}, {big, big, true, false},
	} {
		rng, name := linearRange, "linearRange"
		if c.log {
			rng, name = logRange, "logRange"
		}
		lo, hi := rng(c.lo, c.hi)
		switch {
		case !finite(lo) || !finite(hi) || (c.log && lo <= 0):
			t.Errorf("%s(%g, %g) = [%g, %g], want finite%s", name, c.lo, c.hi, lo, hi, map[bool]string{true: " and positive"}[c.log])
		case lo > c.lo || hi < c.hi || lo >= hi:
			t.Errorf("%s(%g, %g) = [%g, %g], want a range that holds both", name, c.lo, c.hi, lo, hi)
		case c.margin && (lo == c.lo || hi == c.hi):
			t.Errorf("%s(%g, %g) = [%g, %g], want a margin on both sides", name, c.lo, c.hi, lo, hi)
		}
	}
}

// TestPlotLegendOutsideData: the legend lies to the right of both panels'
// data areas, inside the image however many entries it has, and is drawn.
func TestPlotLegendOutsideData(t *testing.T) {
	if raceEnabled {
		t.Skip("renders and scans PNGs on one goroutine (curves starts none): 5 to 10 times slower under -race, which finds nothing there; the plain go test ./... runs it")
	}
	curves := func(n int, label string) []Curve {
		cs := make([]Curve, n)
		for i := range cs {
			cs[i] = Curve{Label: fmt.Sprintf("%s %d", label, i), Colour: i, Rounds: []float64{0, 1, 2},
				Acc: []float64{0.1, 0.9, 0.99}, S: []float64{1, 1e-3, 1e-6}}
		}
		return cs
	}
	for _, c := range []struct {
		name   string
		curves []Curve
	}{
		{"one curve", curves(1, "gt-storm")},
		{"long labels", curves(6, "choco:topk:0.01 / label / 50ms/10Mbit, a long label that would cover much of a panel")},
		{"more entries than the panels are high", curves(60, "dsgd")},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, img := render(t, c.curves)
			whole := draw.New(img)
			accC, stC, legC := f.layout(whole)
			size := f.legend.Rectangle(draw.Canvas{}).Size()
			legend := vg.Rectangle{Min: vg.Point{X: legC.Min.X, Y: legC.Max.Y - size.Y}, Max: vg.Point{X: legC.Min.X + size.X, Y: legC.Max.Y}}
			for _, data := range []vg.Rectangle{f.acc.DataCanvas(accC).Rectangle, f.st.DataCanvas(stC).Rectangle} {
				if legend.Min.X < data.Max.X && data.Min.X < legend.Max.X && legend.Min.Y < data.Max.Y && data.Min.Y < legend.Max.Y {
					t.Errorf("legend %v overlaps a data area %v", legend, data)
				}
			}
			if !(whole.Min.X <= legend.Min.X && legend.Max.X <= whole.Max.X && whole.Min.Y <= legend.Min.Y && legend.Max.Y <= whole.Max.Y) {
				t.Errorf("legend %v outside the image %v", legend, whole.Rectangle)
			}
			path := filepath.Join(t.TempDir(), "curves.png")
			if _, err := PlotReport(path, "test", c.curves); err != nil {
				t.Fatal(err)
			}
			if inked(decodePNG(t, path), 2, palette[0]) == 0 {
				t.Error("the legend's strip does not show the first curve")
			}
		})
	}
}

// TestLogTicks: a log axis labels at least two ticks in its range, and not
// so many that they overlap, whatever the range.
func TestLogTicks(t *testing.T) {
	for _, r := range [][2]float64{
		{0.3, 0.9}, {1e-3, 5e-3}, {1, 8}, {0.31, 0.39}, {5, 5.000001}, {0.9, 11}, {1e-12, 1},
		{1e-300, 1e300}, {math.SmallestNonzeroFloat64, math.MaxFloat64},
	} {
		for _, format := range []string{"%.0e", "%g"} {
			labels := labelled(logTicks{format}.Ticks(r[0], r[1]), r[0], r[1])
			if len(labels) < 2 || len(labels) > 2*maxLogLabels || len(slices.Compact(slices.Clone(labels))) != len(labels) {
				t.Errorf("logTicks{%q} on [%g, %g] labels %q, want 2 to %d distinct labels", format, r[0], r[1], labels, 2*maxLogLabels)
			}
		}
	}
	// The S(x) axis of a plot uses them.
	for _, s := range [][]float64{{0.3, 0.9}, {1e-3, 5e-3}} {
		f, _ := render(t, []Curve{{Label: "a", Rounds: []float64{1, 2}, Acc: []float64{0.5, 0.6}, S: s}})
		y := f.st.Y
		if labels := labelled(y.Tick.Marker.Ticks(y.Min, y.Max), y.Min, y.Max); len(labels) < 2 {
			t.Errorf("S(x) in %v: axis [%g, %g] labels %q, want at least 2", s, y.Min, y.Max, labels)
		}
	}
}

// labelled returns the labels of the ticks in [lo, hi].
func labelled(ticks []plot.Tick, lo, hi float64) []string {
	var labels []string
	for _, t := range ticks {
		if t.Label != "" && t.Value >= lo && t.Value <= hi {
			labels = append(labels, t.Label)
		}
	}
	return labels
}

// TestPlotLogXAtZero: on a log x axis, points at x = 0 are left out and
// the axis label says so; without any, it says nothing; with only those,
// the axis is linear and draws them.
func TestPlotLogXAtZero(t *testing.T) {
	for _, c := range []struct {
		name   string
		rounds []float64
		log    bool
		note   bool
	}{
		{"t = 0 and later", []float64{0, 0.5, 2, 8}, true, true},
		{"no t = 0", []float64{0.5, 1, 2, 8}, true, false},
		{"only t = 0", []float64{0, 0, 0, 0}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, _ := render(t, []Curve{{Label: "a", XLabel: "simulated seconds", LogX: true, Rounds: c.rounds,
				Acc: []float64{0.1, 0.5, 0.7, 0.8}, S: []float64{1, 0.5, 0.1, 0.01}}})
			for _, p := range []*plot.Plot{f.acc, f.st} {
				x := p.X
				if _, log := x.Scale.(plot.LogScale); log != c.log {
					t.Errorf("x axis on a log scale: %v, want %v", log, c.log)
				}
				if note := strings.Contains(x.Label.Text, "not shown"); note != c.note || !strings.HasPrefix(x.Label.Text, "simulated seconds") {
					t.Errorf("x axis label %q, want a note of points not shown: %v", x.Label.Text, c.note)
				}
				if lo := slices.Min(c.rounds); x.Min > lo && !c.log || c.log && x.Min <= 0 {
					t.Errorf("x axis from %g, want it to show %g", x.Min, lo)
				}
			}
		})
	}
}

// TestPaletteDistinct: the palette's colours are far apart.
func TestPaletteDistinct(t *testing.T) {
	sq := func(x float64) float64 { return x * x }
	for i, a := range palette {
		for _, b := range palette[i+1:] {
			ar, ag, ab, _ := a.RGBA()
			br, bg, bb, _ := b.RGBA()
			d := math.Sqrt(sq(float64(ar)-float64(br)) + sq(float64(ag)-float64(bg)) + sq(float64(ab)-float64(bb)))
			if d < 0.25*65535 {
				t.Errorf("palette colours %v and %v are too close (%.2f)", a, b, d/65535)
			}
		}
	}
}

// longGridTitle is the title of a grid with four varied factors, as the
// experiment package writes it.
const longGridTitle = "mnist: algorithms × partitions × topology × weight-decay × compression × network × byzantine"

// TestFitText: a title (or axis label) laid out for a width is, as its
// font measures it, no wider than that width; it is broken only at spaces,
// its words kept in order, and its font shrunk only where a word alone is
// too wide; a title that fits is unchanged.
func TestFitText(t *testing.T) {
	sty := plot.New().Title.TextStyle
	for _, c := range []struct {
		name    string
		title   string
		width   vg.Length
		wrapped bool // laid out on several lines
		shrunk  bool // in a smaller font
	}{
		{"short", "test: stationarity S(x)", panelWidth(), false, false},
		{"empty", "", panelWidth(), false, false},
		{"fits exactly", "mnist: test accuracy", sty.Width("mnist: test accuracy"), false, false},
		{"short, own line break", "a\nb", panelWidth(), false, false},
		{"long grid title", longGridTitle + ": test accuracy of the averaged model", panelWidth(), true, false},
		{"long grid title, linear S(x)", longGridTitle + ": stationarity S(x) (no positive values: linear scale)", panelWidth(), true, false},
		{"long, narrow panel", longGridTitle, 2 * vg.Inch, true, false},
		{"long, very narrow panel", longGridTitle, vg.Inch, true, false},
		{"one word too wide", "dirichlet:0.1/topology=er/weight-decay=1e-4/compression=topk:0.01/network=50ms/10Mbit", 2 * vg.Inch, false, true},
		{"long words and spaces", "a " + strings.Repeat("x", 80) + " b " + strings.Repeat("y", 40), 3 * vg.Inch, true, true},
		{"own line breaks, each too long", longGridTitle + "\n" + longGridTitle, 3 * vg.Inch, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, gotSty := fitText(c.title, sty, c.width)
			lines := strings.Split(got, "\n")
			if w := gotSty.Width(got); w > c.width {
				t.Errorf("laid out %q at %v pt: %v wide, want at most %v", got, gotSty.Font.Size, w, c.width)
			}
			for _, l := range lines {
				if w := gotSty.Width(l); w > c.width {
					t.Errorf("line %q is %v wide, want at most %v", l, w, c.width)
				}
			}
			if wrapped := len(lines) > len(strings.Split(c.title, "\n")); wrapped != c.wrapped {
				t.Errorf("laid out as %q: wrapped %v, want %v", got, wrapped, c.wrapped)
			}
			if shrunk := gotSty.Font.Size < sty.Font.Size; shrunk != c.shrunk {
				t.Errorf("font %v pt, was %v: shrunk %v, want %v", gotSty.Font.Size, sty.Font.Size, shrunk, c.shrunk)
			}
			if gotSty.Font.Size > sty.Font.Size {
				t.Errorf("font grew from %v to %v pt", sty.Font.Size, gotSty.Font.Size)
			}
			if !c.wrapped && !c.shrunk && (got != c.title || gotSty != sty) {
				t.Errorf("a title that fits changed: %q → %q", c.title, got)
			}
			if want := strings.Fields(c.title); !slices.Equal(strings.Fields(got), want) {
				t.Errorf("words %q, want %q: broken only at spaces", strings.Fields(got), want)
			}
		})
	}
}

// TestPlotTitlesFitTheirPanels: however long the grid's title, each
// panel's title, as drawn, stays within its own panel, overlapping
// neither the other panel's canvas nor any data area, and both titles
// take the same height, so the panels' plots start level.
func TestPlotTitlesFitTheirPanels(t *testing.T) {
	curves := []Curve{{Label: "a", Rounds: []float64{0, 1, 2}, Acc: []float64{0.1, 0.5, 0.9}, S: []float64{1, 0.1, 0.01}}}
	linear := []Curve{{Label: "a", Rounds: []float64{0, 1, 2}, Acc: []float64{0.1, 0.5, 0.9}, S: []float64{0, 0, 0}}}
	for _, c := range []struct {
		name, title string
		curves      []Curve
		short       bool // both titles fit on one line as they are
	}{
		{"short", "test", curves, true},
		{"recipes-mnist", "mnist: algorithms × partitions × topology × weight-decay", curves, true},
		{"long", longGridTitle, curves, false},
		{"long, linear S(x)", longGridTitle, linear, false},
		{"very long", strings.Repeat(longGridTitle+" ", 4), curves, false},
		{"one long word", strings.Repeat("x", 300), curves, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, _, err := newFigure(c.title, c.curves)
			if err != nil {
				t.Fatal(err)
			}
			img := f.render()
			accC, stC, _ := f.layout(draw.New(img))
			canvases := []draw.Canvas{accC, stC}
			panels := []*plot.Plot{f.acc, f.st}
			var heights []vg.Length
			for i, p := range panels {
				if several := strings.Contains(p.Title.Text, "\n"); several == c.short {
					t.Errorf("panel %d title %q: on several lines %v, want %v", i, p.Title.Text, several, !c.short)
				}
				// Where plot.Plot.Draw puts the title: centred across the
				// top of the panel's canvas, in a strip as high as the
				// title's text that it takes off the canvas.
				size := p.Title.TextStyle.Rectangle(p.Title.Text).Size()
				top, mid := canvases[i].Max.Y, canvases[i].Center().X
				r := vg.Rectangle{Min: vg.Point{X: mid - size.X/2, Y: top - size.Y}, Max: vg.Point{X: mid + size.X/2, Y: top}}
				const eps = 1e-9 // of rounding, in points
				if r.Min.X < canvases[i].Min.X-eps || r.Max.X > canvases[i].Max.X+eps {
					t.Errorf("panel %d title %v spans beyond its panel %v", i, r, canvases[i].Rectangle)
				}
				for j, other := range canvases {
					if j != i && overlaps(r, other.Rectangle) {
						t.Errorf("panel %d title %v overlaps panel %d %v", i, r, j, other.Rectangle)
					}
					if data := panels[j].DataCanvas(other).Rectangle; overlaps(r, data) {
						t.Errorf("panel %d title %v overlaps panel %d's data area %v", i, r, j, data)
					}
				}
				heights = append(heights, r.Size().Y+p.Title.Padding)
			}
			if heights[0] != heights[1] {
				t.Errorf("the titles take %v and %v, want the same height", heights[0], heights[1])
			}
		})
	}
}

// TestPlotAxisLabelsFitTheirAxes: each panel's axis labels, as drawn, are
// no longer than their axes: a y label (drawn rotated) no taller than its
// panel's data area, the x label no wider, so that neither shortens the
// data area, which is as large as were the label not drawn. A label that
// fits is unchanged; one that does not is broken only at spaces, its words
// kept, in a smaller font only where a word alone is too long; the x label
// is the same in both panels, and both data areas are level. Before, the
// S(x) panel's log y axis was shortened by its label, which fitted: gonum
// pads for the label as if centred at the data midpoint of the axis, near
// its top on a log scale (likewise a log x axis at its right).
func TestPlotAxisLabelsFitTheirAxes(t *testing.T) {
	if raceEnabled {
		t.Skip("renders and scans PNGs on one goroutine (curves starts none): 5 to 10 times slower under -race, which finds nothing there; the plain go test ./... runs it")
	}
	curves := []Curve{{Label: "a", Rounds: []float64{0, 1, 2}, Acc: []float64{0.1, 0.5, 0.9}, S: []float64{1, 0.1, 0.01}}}
	withX := func(x string, logX bool) []Curve {
		cs := slices.Clone(curves)
		cs[0].XLabel, cs[0].LogX = x, logX
		return cs
	}
	many := make([]Curve, 40) // a legend taller than the panels
	for i := range many {
		many[i] = curves[0]
		many[i].Label = fmt.Sprintf("dsgd / dirichlet:0.1 / topology=er / weight-decay=1e-4 / %d", i)
	}
	longY := "the squared norm of the global gradient at the averaged model plus the consensus error of the nodes' models"
	for _, c := range []struct {
		name, title string
		curves      []Curve
		yLabel      string // "" keeps the figure's S(x) y label
	}{
		{"recipes-mnist", "mnist: algorithms × partitions × topology × weight-decay", curves, ""},
		{"long title", longGridTitle, curves, ""},
		{"very long title", strings.Repeat(longGridTitle+" ", 4), curves, ""},
		{"tall legend", "test", many, ""},
		{"long y label, long title", longGridTitle, curves, longY},
		{"long y label, tall legend", "test", many, longY},
		{"one long y word", "test", curves, strings.Repeat("y", 200)},
		{"log x", "test", []Curve{{Label: "a", XLabel: "simulated seconds", LogX: true, Rounds: []float64{1, 10, 1000},
			Acc: []float64{0.1, 0.5, 0.9}, S: []float64{1, 0.1, 0.01}}}, ""},
		{"log x, x ≤ 0 not shown", "test", withX("simulated seconds", true), ""},
		{"long x label", "test", withX(strings.Repeat("simulated seconds ", 12), false), ""},
		{"long x label, log x", "test", withX(strings.Repeat("simulated seconds ", 12), true), ""},
		{"one long x word", "test", withX(strings.Repeat("x", 300), false), ""},
		{"long x and y labels", longGridTitle, withX(strings.Repeat("simulated seconds ", 12), true), longY},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, _, err := newFigure(c.title, c.curves)
			if err != nil {
				t.Fatal(err)
			}
			if c.yLabel != "" {
				f.st.Y.Label.Text = c.yLabel
				f.fitAxisLabels()
			}
			// The labels as set, before they were fitted.
			unfitted := emptyFigure(c.title, xLabelOf(c.curves))
			unfitted.scaleX(c.curves)
			xLabel := unfitted.acc.X.Label.Text
			yLabels := []string{unfitted.acc.Y.Label.Text, unfitted.st.Y.Label.Text}
			if c.yLabel != "" {
				yLabels[1] = c.yLabel
			}
			sty := plot.New().X.Label.TextStyle
			img := f.render()
			accC, stC, _ := f.layout(draw.New(img))
			canvases := []draw.Canvas{accC, stC}
			for i, p := range []*plot.Plot{f.acc, f.st} {
				// The data area's size were the x (y) label not drawn, and
				// the y (x) label as it is.
				data := p.DataCanvas(canvases[i]).Size()
				var bare vg.Point
				for _, y := range []bool{false, true} {
					q := *p
					if y {
						q.Y.Label.Text = ""
						bare.Y = q.DataCanvas(canvases[i]).Size().Y
					} else {
						q.X.Label.Text = ""
						bare.X = q.DataCanvas(canvases[i]).Size().X
					}
				}
				if data != bare {
					t.Errorf("panel %d: data area %v, %v were its axis labels not drawn: shortened by them", i, data, bare)
				}
				for _, l := range []struct {
					axis      string
					got, want string
					sty       text.Style
					room      vg.Length
				}{
					{"x", p.X.Label.Text, xLabel, measured(p.X.Label.TextStyle), data.X},
					{"y", p.Y.Label.Text, yLabels[i], measured(p.Y.Label.TextStyle), data.Y},
				} {
					// Gonum draws it centred on the data area.
					if w := l.sty.Width(l.got); w > l.room {
						t.Errorf("panel %d %s label %q is %v long, its data area %v", i, l.axis, l.got, w, l.room)
					}
					if !slices.Equal(strings.Fields(l.got), strings.Fields(l.want)) {
						t.Errorf("panel %d %s label %q, want the words of %q", i, l.axis, l.got, l.want)
					}
					fits := sty.Width(l.want) <= l.room
					if fits && (l.got != l.want || l.sty != sty) {
						t.Errorf("panel %d %s label %q fits its axis %v, yet laid out as %q at %v pt", i, l.axis, l.want, l.room, l.got, l.sty.Font.Size)
					}
					wordFits := true
					for _, w := range strings.Fields(l.want) {
						wordFits = wordFits && sty.Width(w) <= l.room
					}
					if shrunk := l.sty.Font.Size < sty.Font.Size; shrunk == wordFits {
						t.Errorf("panel %d %s label %q: font %v pt, was %v, with every word fitting %v", i, l.axis, l.got, l.sty.Font.Size, sty.Font.Size, wordFits)
					}
				}
			}
			if f.acc.X.Label != f.st.X.Label {
				t.Errorf("x labels %q and %q differ", f.acc.X.Label.Text, f.st.X.Label.Text)
			}
			acc, st := f.acc.DataCanvas(accC).Rectangle, f.st.DataCanvas(stC).Rectangle
			if acc.Min.Y != st.Min.Y || acc.Max.Y != st.Max.Y {
				t.Errorf("data areas %v and %v, want them level", acc, st)
			}
		})
	}
}

// overlaps reports whether rectangles a and b share some area.
func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}
