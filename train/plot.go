package train

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gtstorm/gtstorm/internal/atomicfile"
)

// Curve is one line of a plot: a metric against rounds (or, for runs at
// an equal budget of samples, against samples), averaged over one or more
// runs with the same rows, with its standard deviation.
type Curve struct {
	Label string
	// XLabel names what Rounds holds; "" is "round". The plot takes the
	// first curve's.
	XLabel string
	// LogX draws the x axis on a log scale (the first curve's decides),
	// leaving out points at x ≤ 0: for simulated seconds, which differ by
	// orders of magnitude between networks.
	LogX bool
	// Colour and Style pick the curve's colour and line style from fixed,
	// well-separated sets: a compare grid gives each algorithm a colour and
	// each partition a style, a sweep each value a colour.
	Colour, Style int

	Rounds []float64
	Acc    []float64 // mean test accuracy
	AccStd []float64 // nil or zeros for a single run
	S      []float64 // mean stationarity S(x)
	SStd   []float64
}

// CurveOf averages the rows of runs that share their rounds (seeds of one
// setting) into a Curve.
func CurveOf(label string, runs [][]Row) Curve {
	c := Curve{Label: label}
	if len(runs) == 0 {
		return c
	}
	n := len(runs[0])
	for _, r := range runs[1:] {
		n = min(n, len(r))
	}
	for k := range n {
		acc := make([]float64, len(runs))
		s := make([]float64, len(runs))
		for i, r := range runs {
			acc[i], s[i] = r[k].TestAcc, r[k].Stationarity()
		}
		ma, sa := meanStd(acc)
		ms, ss := meanStd(s)
		c.Rounds = append(c.Rounds, float64(runs[0][k].Round))
		c.Acc, c.AccStd = append(c.Acc, ma), append(c.AccStd, sa)
		c.S, c.SStd = append(c.S, ms), append(c.SStd, ss)
	}
	return c
}

// meanStd returns the mean and the sample standard deviation of xs (0 for
// fewer than two values).
func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// PlotCurves draws test accuracy and S(x) (log scale) against rounds side by
// side, one line per curve with a shaded ±1 std band where there is one, and
// writes the PNG atomically to path. It is PlotCurvesReport without the
// report of what was left out.
func PlotCurves(path, title string, curves []Curve) error {
	_, err := PlotCurvesReport(path, title, curves)
	return err
}

// PlotCurvesReport is PlotCurves that also returns, one line each, what it
// could not draw and why: a curve without rounds, a curve's panel with no
// value to draw, values left out (not finite, or not positive on the log
// scale), the S(x) panel drawn on a linear scale because no curve has a
// positive value. Whatever the values, even none, it writes a PNG and does
// not panic; err reports only a failure to write it.
func PlotCurvesReport(path, title string, curves []Curve) (skipped []string, err error) {
	xLabel := "round"
	if len(curves) > 0 && curves[0].XLabel != "" {
		xLabel = curves[0].XLabel
	}
	acc := plot.New()
	acc.Title.Text = title + ": test accuracy of the averaged model"
	acc.X.Label.Text = xLabel
	acc.Y.Label.Text = "accuracy"
	acc.X.Tick.Marker = relabel{plot.DefaultTicks{}, "%g"}
	st := plot.New()
	st.Title.Text = title + ": stationarity S(x)"
	st.X.Label.Text = xLabel
	st.Y.Label.Text = "squared global gradient norm + consensus error"
	st.X.Tick.Marker = relabel{plot.DefaultTicks{}, "%g"}

	if len(curves) == 0 {
		skipped = append(skipped, "no curves to plot: both panels are empty")
	}
	if len(curves) > 0 && curves[0].LogX {
		for _, p := range []*plot.Plot{acc, st} {
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = relabel{plot.LogTicks{}, "%g"}
		}
		curves = positiveX(curves)
	}
	logY := false
	for _, c := range curves {
		if line, _, _, _ := points(c.Rounds, c.S, c.SStd, true); len(line) > 0 {
			logY = true
			break
		}
	}
	if logY {
		st.Y.Scale = plot.LogScale{}
		st.Y.Tick.Marker = relabel{plot.LogTicks{}, "%.0e"}
	} else {
		st.Y.Tick.Marker = relabel{plot.DefaultTicks{}, "%g"}
		if len(curves) > 0 {
			st.Title.Text += " (no positive values: linear scale)"
			skipped = append(skipped, "S(x) panel: no curve has a positive value to draw on a log scale; drawn on a linear scale")
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1) // range of the S(x) panel's points
	for _, c := range curves {
		name := fmt.Sprintf("curve %q", c.Label)
		if len(c.Rounds) == 0 {
			skipped = append(skipped, name+": no rounds, nothing to draw")
			continue
		}
		col := palette[c.Colour%len(palette)]
		dashes := lineStyles[c.Style%len(lineStyles)]
		for _, panel := range []struct {
			p       *plot.Plot
			what    string
			ys, std []float64
			logY    bool
		}{
			{acc, "test accuracy", c.Acc, c.AccStd, false},
			{st, "S(x)", c.S, c.SStd, logY},
		} {
			want := "finite"
			if panel.logY {
				want = "positive and finite"
			}
			line, lower, upper, dropped := points(c.Rounds, panel.ys, panel.std, panel.logY)
			switch {
			case len(line) == 0:
				skipped = append(skipped, fmt.Sprintf("%s: %s: none of its %d values is %s, not drawn",
					name, panel.what, len(c.Rounds), want))
				continue
			case dropped > 0:
				skipped = append(skipped, fmt.Sprintf("%s: %s: %d of its %d values not %s, left out",
					name, panel.what, dropped, len(c.Rounds), want))
			}
			if err := addLine(panel.p, c.Label, line, lower, upper, col, dashes); err != nil {
				return skipped, fmt.Errorf("plot %s: %s: %w", path, name, err)
			}
			if panel.p == st {
				for _, xy := range slices.Concat(line, lower, upper) {
					lo, hi = min(lo, xy.Y), max(hi, xy.Y)
				}
			}
		}
	}
	if logY {
		// A single positive value would be widened by ±1, possibly to ≤ 0,
		// which the log scale cannot show: widen it by a factor instead.
		st.Y.Min, st.Y.Max = lo, hi
		if lo == hi {
			if l := lo / 2; l > 0 {
				st.Y.Min = l
			}
			if h := hi * 2; !math.IsInf(h, 0) {
				st.Y.Max = h
			}
		}
	}
	acc.Legend.Top = false // bottom right, below rising curves

	const w, h = 14 * vg.Inch, 5 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	acc.Draw(tiles.At(dc, 0, 0))
	st.Draw(tiles.At(dc, 1, 0))
	err = atomicfile.Write(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
	return skipped, err
}

// points returns a curve's drawable points: its line, and the lower and upper
// edges of its ±1 std band where every point of the line has a positive
// std. A point is left out (and counted in dropped) where its round or value
// is not finite, or on a log scale (logY) where its value is not positive;
// values missing at the end of ys count as not finite. On a log scale, band
// edges stay positive.
func points(xs, ys, std []float64, logY bool) (line, lower, upper plotter.XYs, dropped int) {
	for k, x := range xs {
		if k >= len(ys) || !finite(x) || !finite(ys[k]) || (logY && ys[k] <= 0) {
			dropped++
			continue
		}
		y := ys[k]
		line = append(line, plotter.XY{X: x, Y: y})
		if k < len(std) && std[k] > 0 && finite(std[k]) {
			l, u := y-std[k], y+std[k]
			if logY && l <= 0 {
				l = y / 10 // or 0 if y is tiny: then no lower edge below y
			}
			if !finite(l) || (logY && l <= 0) {
				l = y
			}
			if !finite(u) {
				u = y
			}
			lower = append(lower, plotter.XY{X: x, Y: l})
			upper = append(upper, plotter.XY{X: x, Y: u})
		}
	}
	if len(lower) != len(line) || len(lower) < 2 {
		lower, upper = nil, nil
	}
	return line, lower, upper, dropped
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// addLine adds one curve's line (a dot if it has one point), and its std
// band between lower and upper when those are given, to p.
func addLine(p *plot.Plot, label string, line, lower, upper plotter.XYs, col color.Color, dashes []vg.Length) error {
	if len(lower) > 0 {
		band := make(plotter.XYs, 0, 2*len(lower))
		band = append(band, lower...)
		for k := len(upper) - 1; k >= 0; k-- {
			band = append(band, upper[k])
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return err
		}
		r, g, b, _ := col.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	l, err := plotter.NewLine(line)
	if err != nil {
		return err
	}
	l.Color = col
	l.Width = vg.Points(1.5)
	l.Dashes = dashes
	p.Add(l)
	p.Legend.Add(label, l)
	if len(line) == 1 { // a line of one point draws nothing: mark the point
		dot, err := plotter.NewScatter(line)
		if err != nil {
			return err
		}
		dot.Color = col
		dot.Shape = draw.CircleGlyph{}
		dot.Radius = vg.Points(3)
		p.Add(dot)
	}
	return nil
}

// palette is the Okabe–Ito colour set (its yellow left out, too pale on
// white): colours that stay apart for every reader, colour-blind ones too.
var palette = []color.Color{
	color.NRGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.NRGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.NRGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.NRGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.NRGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.NRGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.NRGBA{0x00, 0x00, 0x00, 0xff}, // black
}

// lineStyles are the dash patterns of Curve.Style: solid, dashed, dotted,
// dash-dotted.
var lineStyles = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(7), vg.Points(3), vg.Points(1.5), vg.Points(3)},
}

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

// positiveX returns curves without their points at x ≤ 0, which a log x
// axis cannot show.
func positiveX(curves []Curve) []Curve {
	out := make([]Curve, len(curves))
	for i, c := range curves {
		keep := func(v []float64) []float64 {
			if v == nil {
				return nil
			}
			var kept []float64
			for k, x := range c.Rounds {
				if x > 0 {
					kept = append(kept, v[k])
				}
			}
			return kept
		}
		out[i] = c
		out[i].Acc, out[i].AccStd, out[i].S, out[i].SStd = keep(c.Acc), keep(c.AccStd), keep(c.S), keep(c.SStd)
		out[i].Rounds = keep(c.Rounds)
	}
	return out
}
