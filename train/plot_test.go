package train

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
// img drawn in exactly col: the lines of curves in that colour.
func inked(img image.Image, panel int, col color.Color) int {
	b := img.Bounds()
	half := b.Dx() / 2
	r0, g0, b0, _ := col.RGBA()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X + panel*half; x < b.Min.X+(panel+1)*half; x++ {
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
		{"header-only metrics", []Curve{CurveOf("cell", [][]Row{{}, {}}), CurveOf("none", nil)},
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "curves.png")
			skipped, err := PlotCurvesReport(path, "test", c.curves)
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

// TestPlotCurvesKeepsItsSignature: PlotCurves draws the same plot and only
// drops the report.
func TestPlotCurvesKeepsItsSignature(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curves.png")
	if err := PlotCurves(path, "test", []Curve{{Label: "a", Rounds: []float64{1, 2}, Acc: []float64{0.5, 0.6}, S: []float64{0, 0}}}); err != nil {
		t.Fatal(err)
	}
	decodePNG(t, path)
	if err := PlotCurves(filepath.Join(t.TempDir(), "missing", "curves.png"), "test", nil); err == nil {
		t.Fatal("writing into a missing folder succeeded")
	}
}
