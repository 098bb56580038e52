package train

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/gtstorm/gtstorm/internal/atomicfile"
)

// Curve is one line of a plot: a metric against rounds, averaged over one
// or more runs with the same rows, with its standard deviation.
type Curve struct {
	Label  string
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
// writes the PNG atomically to path.
func PlotCurves(path, title string, curves []Curve) error {
	acc := plot.New()
	acc.Title.Text = title + ": test accuracy of the averaged model"
	acc.X.Label.Text = "round"
	acc.Y.Label.Text = "accuracy"
	acc.X.Tick.Marker = relabel{plot.DefaultTicks{}, "%g"}
	st := plot.New()
	st.Title.Text = title + ": stationarity S(x)"
	st.X.Label.Text = "round"
	st.Y.Label.Text = "squared global gradient norm + consensus error"
	st.X.Tick.Marker = relabel{plot.DefaultTicks{}, "%g"}
	st.Y.Scale = plot.LogScale{}
	st.Y.Tick.Marker = relabel{plot.LogTicks{}, "%.0e"}
	for i, c := range curves {
		col := plotutil.Color(i)
		if err := addLine(acc, c.Label, c.Rounds, c.Acc, c.AccStd, col, false); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		if err := addLine(st, c.Label, c.Rounds, c.S, c.SStd, col, true); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
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
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
}

// addLine adds one curve (and its std band) to p. On a log scale only
// positive values are drawn.
func addLine(p *plot.Plot, label string, xs, ys, std []float64, col color.Color, logY bool) error {
	var line, lo, hi plotter.XYs
	for k := range xs {
		y := ys[k]
		if math.IsNaN(y) || math.IsInf(y, 0) || (logY && y <= 0) {
			continue
		}
		line = append(line, plotter.XY{X: xs[k], Y: y})
		if std != nil && std[k] > 0 {
			l, u := y-std[k], y+std[k]
			if logY && l <= 0 {
				l = y / 10
			}
			lo = append(lo, plotter.XY{X: xs[k], Y: l})
			hi = append(hi, plotter.XY{X: xs[k], Y: u})
		}
	}
	if len(line) == 0 {
		return nil
	}
	if len(lo) == len(line) && len(lo) > 1 {
		band := make(plotter.XYs, 0, 2*len(lo))
		band = append(band, lo...)
		for k := len(hi) - 1; k >= 0; k-- {
			band = append(band, hi[k])
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
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
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
