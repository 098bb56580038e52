package curves

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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
	// leaving out points at x ≤ 0, as its label then says (or, where no
	// curve has a point at x > 0, draws it linear): for simulated seconds,
	// which differ by orders of magnitude between networks.
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

// Colours returns the number of colours a curve's Colour picks from,
// modulo it: curves whose Colour and Style agree modulo Colours and Styles
// are drawn alike.
func Colours() int { return len(palette) }

// Styles returns the number of line styles a curve's Style picks from,
// modulo it (see Colours).
func Styles() int { return len(lineStyles) }

// MeanStd returns the mean and the sample standard deviation of xs (0 for
// fewer than two values).
func MeanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += float64((x - mean) * (x - mean))
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// Plot draws test accuracy and S(x) (log scale) against rounds side by
// side, one line per curve with a shaded ±1 std band where there is one, and
// writes the PNG atomically to path. It is PlotReport without the report of
// what was left out.
func Plot(path, title string, curves []Curve) error {
	_, err := PlotReport(path, title, curves)
	return err
}

// PlotReport is Plot that also returns, one line each, what it
// could not draw and why: a curve without rounds, a curve's panel with no
// value to draw, values left out (not finite, or not positive on the log
// scale), the S(x) panel drawn on a linear scale because no curve has a
// positive value. Whatever the values, even none, it writes a PNG and does
// not panic; err reports only a failure to write it.
//
// Each panel's y axis holds every point drawn, band edges included, with a
// margin; the legend, shared by both panels, stands to their right, outside
// their data areas. A panel's title too wide for its panel is wrapped at
// spaces, in a smaller font where a word alone is too wide, so that it
// never runs into the other panel; an axis label longer than its axis is
// wrapped (or shrunk) likewise, and never shortens the data area. On a log
// x axis (Curve.LogX) points at x ≤ 0 cannot be drawn: they are left out,
// and the x axis label says so. That is not reported in skipped, as every
// run on a simulated network starts at t = 0. Where no curve has a point at
// x > 0, the x axis stays linear.
func PlotReport(path, title string, curves []Curve) (skipped []string, err error) {
	f, skipped, err := newFigure(title, curves)
	if err != nil {
		return skipped, fmt.Errorf("plot %s: %w", path, err)
	}
	img := f.render()
	err = atomicfile.Write(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
	return skipped, err
}

// figure is what PlotReport draws: the test accuracy and S(x)
// panels, and the legend they share.
type figure struct {
	acc, st *plot.Plot
	legend  plot.Legend
}

// newFigure builds the figure of curves, and the report of what it leaves
// out (see PlotReport).
func newFigure(title string, curves []Curve) (f *figure, skipped []string, err error) {
	f = emptyFigure(title, xLabelOf(curves))
	if len(curves) == 0 {
		skipped = append(skipped, "no curves to plot: both panels are empty")
	}
	curves = f.scaleX(curves)
	logY, note := f.scaleS(curves)
	skipped = append(skipped, note...)
	accY, stY := newSpan(), newSpan() // the y values each panel draws
	for _, c := range curves {
		notes, err := f.addCurve(c, logY, &accY, &stY)
		skipped = append(skipped, notes...)
		if err != nil {
			return f, skipped, err
		}
	}
	f.fitY(accY, stY, logY)
	f.fitLogX(curves)
	f.fitTitles(panelWidth())
	f.fitAxisLabels()
	return f, skipped, nil
}

// fitLogX gives a log x axis whose rounds drawn are all one value a range
// around it: gonum widens a one-value range by ±1, which a log scale cannot
// draw when the value is 1 or less.
func (f *figure) fitLogX(curves []Curve) {
	if _, ok := f.acc.X.Scale.(plot.LogScale); !ok {
		return
	}
	xs := newSpan()
	for _, c := range curves {
		for _, x := range c.Rounds {
			if x > 0 && !math.IsInf(x, 1) {
				xs.add(x)
			}
		}
	}
	if xs.empty() || xs.lo != xs.hi {
		return
	}
	lo, hi := logRange(xs.lo, xs.hi)
	for _, p := range []*plot.Plot{f.acc, f.st} {
		p.X.Min, p.X.Max = lo, hi
	}
}

// xLabelOf returns the x axis label of curves: the first curve's XLabel,
// or "round".
func xLabelOf(curves []Curve) string {
	if len(curves) > 0 && curves[0].XLabel != "" {
		return curves[0].XLabel
	}
	return "round"
}

// emptyFigure returns a figure with titled, labelled panels and no lines.
func emptyFigure(title, xLabel string) *figure {
	f := &figure{acc: plot.New(), st: plot.New(), legend: plot.NewLegend()}
	f.legend.Top, f.legend.Left = true, true
	f.acc.Title.Text = title + ": test accuracy of the averaged model"
	f.acc.Y.Label.Text = "accuracy"
	f.st.Title.Text = title + ": stationarity S(x)"
	f.st.Y.Label.Text = "squared global gradient norm + consensus error"
	for _, p := range []*plot.Plot{f.acc, f.st} {
		p.X.Label.Text = xLabel
		p.X.Tick.Marker = relabel{plot.DefaultTicks{}, "%g"}
	}
	return f
}

// scaleX puts both panels' x axes on a log scale where the first curve
// asks for one (Curve.LogX) and some curve has a point at x > 0, and
// returns the curves left to draw: without their points at x ≤ 0 on a
// log scale, else curves as they are.
func (f *figure) scaleX(curves []Curve) []Curve {
	if len(curves) == 0 || !curves[0].LogX {
		return curves
	}
	pos, dropped := positiveX(curves)
	if !hasRounds(pos) {
		return curves
	}
	for _, p := range []*plot.Plot{f.acc, f.st} {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{"%g"}
		if dropped {
			p.X.Label.Text += " (log scale: x ≤ 0 not shown)"
		}
	}
	return pos
}

// scaleS puts the S(x) panel's y axis on a log scale where some curve has
// a positive value to draw on it, and reports whether it did; otherwise the
// axis stays linear, which skipped notes where there are curves.
func (f *figure) scaleS(curves []Curve) (logY bool, skipped []string) {
	for _, c := range curves {
		if line, _, _, _ := points(c.Rounds, c.S, c.SStd, true); len(line) > 0 {
			logY = true
			break
		}
	}
	st := f.st
	if logY {
		st.Y.Scale = plot.LogScale{}
		st.Y.Tick.Marker = logTicks{"%.0e"}
		return true, nil
	}
	st.Y.Tick.Marker = relabel{plot.DefaultTicks{}, "%g"}
	if len(curves) > 0 {
		st.Title.Text += " (no positive values: linear scale)"
		skipped = append(skipped, "S(x) panel: no curve has a positive value to draw on a log scale; drawn on a linear scale")
	}
	return false, skipped
}

// curvePanel is what one curve draws on one panel.
type curvePanel struct {
	p       *plot.Plot
	what    string    // the panel's metric, for the report
	ys, std []float64 // the curve's values and their std
	logY    bool      // the panel's y axis is on a log scale
	y       *span     // the y values the panel draws, so far
}

// addCurve draws c on both panels (S(x) on a log scale if logY), widening
// accY and stY to the y values it draws, and adds it to the legend where it
// drew a line. It returns what it left out (see PlotReport).
func (f *figure) addCurve(c Curve, logY bool, accY, stY *span) (skipped []string, err error) {
	name := fmt.Sprintf("curve %q", c.Label)
	if len(c.Rounds) == 0 {
		return []string{name + ": no rounds, nothing to draw"}, nil
	}
	col := palette[c.Colour%len(palette)]
	dashes := lineStyles[c.Style%len(lineStyles)]
	var legend plot.Thumbnailer
	for _, panel := range []curvePanel{
		{f.acc, "test accuracy", c.Acc, c.AccStd, false, accY},
		{f.st, "S(x)", c.S, c.SStd, logY, stY},
	} {
		l, notes, err := drawOnPanel(name, c.Rounds, panel, col, dashes)
		skipped = append(skipped, notes...)
		if err != nil {
			return skipped, fmt.Errorf("%s: %w", name, err)
		}
		if legend == nil && l != nil {
			legend = l
		}
	}
	if legend != nil {
		f.legend.Add(c.Label, legend)
	}
	return skipped, nil
}

// drawOnPanel draws the curve called name, with rounds xs, on panel in
// colour col and line style dashes, widening panel.y to the values drawn.
// It returns the line, nil where no value could be drawn, and what it left
// out.
func drawOnPanel(name string, xs []float64, panel curvePanel, col color.Color, dashes []vg.Length) (l *plotter.Line, skipped []string, err error) {
	want := "finite"
	if panel.logY {
		want = "positive and finite"
	}
	line, lower, upper, dropped := points(xs, panel.ys, panel.std, panel.logY)
	switch {
	case len(line) == 0:
		return nil, []string{fmt.Sprintf("%s: %s: none of its %d values is %s, not drawn",
			name, panel.what, len(xs), want)}, nil
	case dropped > 0:
		skipped = append(skipped, fmt.Sprintf("%s: %s: %d of its %d values not %s, left out",
			name, panel.what, dropped, len(xs), want))
	}
	l, err = addLine(panel.p, line, lower, upper, col, dashes)
	if err != nil {
		return nil, skipped, err
	}
	for _, xy := range slices.Concat(line, lower, upper) {
		panel.y.add(xy.Y)
	}
	return l, skipped, nil
}

// fitY sets each panel's y range to hold the values it draws, accY and
// stY, with a margin; the S(x) panel's on a log scale if logY.
func (f *figure) fitY(accY, stY span, logY bool) {
	if !accY.empty() {
		f.acc.Y.Min, f.acc.Y.Max = linearRange(accY.lo, accY.hi)
	}
	if stY.empty() {
		return
	}
	if logY {
		f.st.Y.Min, f.st.Y.Max = logRange(stY.lo, stY.hi)
	} else {
		f.st.Y.Min, f.st.Y.Max = linearRange(stY.lo, stY.hi)
	}
}

// hasRounds reports whether some curve has a round (a point on the x axis).
func hasRounds(curves []Curve) bool {
	for _, c := range curves {
		if len(c.Rounds) > 0 {
			return true
		}
	}
	return false
}

// The figure's size: both panels together are panelsWidth wide, and the
// legend's strip on their right as wide as its longest entry; the figure
// is figureHeight high, or higher where its legend needs it.
const (
	panelsWidth  = 14 * vg.Inch
	figureHeight = 5 * vg.Inch
	pad          = 2 * vg.Millimeter
)

// render draws the figure onto a new image.
func (f *figure) render() *vgimg.Canvas {
	img := vgimg.New(f.size())
	acc, st, legend := f.layout(draw.New(img))
	f.acc.Draw(acc)
	f.st.Draw(st)
	f.legend.Draw(legend)
	return img
}

// size returns the figure's width and height: the panels' and the
// legend's strip's, which depend on its legend and its titles.
func (f *figure) size() (w, h vg.Length) {
	size := f.legend.Rectangle(draw.Canvas{}).Size()
	w, h = panelsWidth, figureHeight
	if size.X > 0 {
		w += size.X + 4*pad
		h = max(h, size.Y+f.titleHeight()+4*pad)
	}
	return w, h
}

// layout splits the figure's canvas c into the canvases of the accuracy
// panel, the S(x) panel and the legend: the panels side by side in the
// left panelsWidth of c, the legend in the strip on their right, its top
// level with the top of their data areas.
func (f *figure) layout(c draw.Canvas) (acc, st, legend draw.Canvas) {
	panels := c
	panels.Max.X = c.Min.X + panelsWidth
	legend = draw.Crop(c, panelsWidth+2*pad, -pad, pad, -pad-f.titleHeight())
	return panelTiles.At(panels, 0, 0), panelTiles.At(panels, 1, 0), legend
}

// panelTiles lays the two panels side by side in the figure's left
// panelsWidth.
var panelTiles = draw.Tiles{Rows: 1, Cols: 2, PadX: 2 * pad, PadY: pad,
	PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad}

// panelWidth is the width of each panel's canvas, which its title, centred
// on it, must not exceed, lest it run into the neighbouring panel or off
// the figure.
func panelWidth() vg.Length {
	whole := draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: panelsWidth, Y: figureHeight}}}
	return panelTiles.At(whole, 0, 0).Size().X
}

// fitTitles fits each panel's title into width (see fitText), and pads
// the shorter title below so that both take the same height: the panels'
// data areas then start level, whatever the lines each title needs.
func (f *figure) fitTitles(width vg.Length) {
	panels := []*plot.Plot{f.acc, f.st}
	for _, p := range panels {
		p.Title.Text, p.Title.TextStyle = fitText(p.Title.Text, p.Title.TextStyle, width)
	}
	h := f.titleHeight()
	for _, p := range panels {
		if p.Title.Text != "" {
			p.Title.Padding = h - p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y
		}
	}
}

// fitText returns txt (a panel's title, an axis label) and its style sty
// laid out to be at most width wide before any rotation, as sty's font
// measures it: unchanged where it fits; else wrapped onto several lines at
// spaces (its own line breaks kept), and, where a word alone is still
// wider than width, in a font shrunk until the widest line fits.
func fitText(txt string, sty text.Style, width vg.Length) (string, text.Style) {
	if width <= 0 || sty.Width(txt) <= width {
		return txt, sty
	}
	var lines []string
	for _, hard := range strings.Split(txt, "\n") {
		words := strings.Fields(hard)
		if len(words) == 0 {
			lines = append(lines, "")
			continue
		}
		line := words[0]
		for _, w := range words[1:] {
			if sty.Width(line+" "+w) <= width {
				line += " " + w
				continue
			}
			lines = append(lines, line)
			line = w
		}
		lines = append(lines, line)
	}
	txt = strings.Join(lines, "\n")
	// Text widths scale with the font's size, up to rounding: shrink by
	// the excess, and by at least 1% a step where rounding leaves it over.
	for range 100 {
		w := sty.Width(txt)
		if w <= width {
			break
		}
		sty.Font.Size *= min(width/w, 0.99)
	}
	return txt, sty
}

// fitAxisLabels fits each panel's axis labels to their axes as the figure
// draws them (see fitText): a y label, drawn rotated, to the height of its
// panel's data area, and the x label, the same in both panels so that
// their axes stay level, to the width of the narrower data area. Gonum
// draws a label centred on its axis; each label is then set to leave the
// data area's length to fitAxisLabels (see labelText).
//
// Each label's room depends on the other's: a y label on more lines
// widens its axis, which narrows the data area; an x label on more lines
// lowers the data area's bottom. Each is fitted again, from its text as
// first set, until neither changes.
func (f *figure) fitAxisLabels() {
	w, h := f.size()
	acc, st, _ := f.layout(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}})
	canvases := []draw.Canvas{acc, st}
	panels := []*plot.Plot{f.acc, f.st}
	xText, xSty := f.acc.X.Label.Text, measured(f.acc.X.Label.TextStyle)
	yText := []string{f.acc.Y.Label.Text, f.st.Y.Label.Text}
	ySty := []text.Style{measured(f.acc.Y.Label.TextStyle), measured(f.st.Y.Label.TextStyle)}
	for range 10 {
		changed := false
		width := vg.Length(math.Inf(1))
		for i, p := range panels {
			width = min(width, labelRoom(p, canvases[i], false))
		}
		xt, xs := fitText(xText, xSty, width)
		xs.Handler = labelText{xs.Handler}
		for i, p := range panels {
			if p.X.Label.Text != xt || p.X.Label.TextStyle != xs {
				p.X.Label.Text, p.X.Label.TextStyle, changed = xt, xs, true
			}
			yt, ys := fitText(yText[i], ySty[i], labelRoom(p, canvases[i], true))
			ys.Handler = labelText{ys.Handler}
			if p.Y.Label.Text != yt || p.Y.Label.TextStyle != ys {
				p.Y.Label.Text, p.Y.Label.TextStyle, changed = yt, ys, true
			}
		}
		if !changed {
			return
		}
	}
}

// labelRoom returns the room that p's y axis label (its x axis label,
// where not y) has along its axis, p drawn on c: the height (width) of p's
// data area were that label not drawn.
func labelRoom(p *plot.Plot, c draw.Canvas, y bool) vg.Length {
	q := *p // DataCanvas settles the axes' ranges: q's, not p's
	if y {
		q.Y.Label.Text = ""
		return q.DataCanvas(c).Size().Y
	}
	q.X.Label.Text = ""
	return q.DataCanvas(c).Size().X
}

// labelText is the text.Handler of the panels' axis labels: the handler
// it holds, except that, to gonum's layout, a line of a label has no
// length along its axis (a blank line keeps its width: gonum spaces a y
// axis by one). Gonum shortens a panel's data area until the glyph box of
// each axis label lies on the canvas, but centres the box on the axis's
// data value midway between its ends, not on its middle, where it draws
// the label: on a log scale that value lies near the top (right) end, and
// the box, half beyond it, shortened the data area of S(x) by a label that
// fitted (docs/results/recipes-mnist/curves.png). fitAxisLabels keeps
// each label within its data area instead.
type labelText struct{ text.Handler }

// Box is the held handler's, but 0 wide where txt is not blank.
func (h labelText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	width, height, depth = h.Handler.Box(txt, fnt)
	if strings.TrimSpace(txt) != "" {
		width = 0
	}
	return width, height, depth
}

// Draw draws txt as the handler labelText holds does, at its length.
func (h labelText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	sty.Handler = h.Handler
	h.Handler.Draw(c, txt, sty, pt)
}

// measured returns sty measuring its text at its length: without
// labelText.
func measured(sty text.Style) text.Style {
	if h, ok := sty.Handler.(labelText); ok {
		sty.Handler = h.Handler
	}
	return sty
}

// titleHeight is the height the panels' titles take, padding included.
func (f *figure) titleHeight() vg.Length {
	var h vg.Length
	for _, p := range []*plot.Plot{f.acc, f.st} {
		if p.Title.Text != "" {
			h = max(h, p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y+p.Title.Padding)
		}
	}
	return h
}

// axisMargin is the share of an axis's range (of its logarithm's, on a log
// scale) left free beyond the extreme values on either side, so that no
// line runs along the edge of the data area, half clipped.
const axisMargin = 0.05

// span is the range of a set of values; empty while lo > hi.
type span struct{ lo, hi float64 }

func newSpan() span           { return span{math.Inf(1), math.Inf(-1)} }
func (s *span) add(v float64) { s.lo, s.hi = min(s.lo, v), max(s.hi, v) }
func (s span) empty() bool    { return s.lo > s.hi }

// linearRange returns a linear axis range that holds [lo, hi], finite,
// with a margin: axisMargin of hi - lo on either side, or of |lo| where
// lo = hi. Near ±math.MaxFloat64 the margin shrinks to stay finite.
func linearRange(lo, hi float64) (minV, maxV float64) {
	m := (float64(hi/2) - float64(lo/2)) * 2 * axisMargin // halves: hi - lo may overflow
	if m == 0 {
		m = math.Abs(lo) * axisMargin
	}
	if m == 0 {
		m = axisMargin
	}
	return max(lo-m, -math.MaxFloat64), min(hi+m, math.MaxFloat64)
}

// logRange returns a log axis range that holds [lo, hi] (0 < lo ≤ hi) with
// a margin: axisMargin of log(hi/lo) on either side, or a factor of 2 where
// lo = hi. Near the ends of the positive floats the margin shrinks to stay
// in them.
func logRange(lo, hi float64) (minV, maxV float64) {
	f := math.Pow(hi/lo, axisMargin)
	if math.IsInf(f, 0) { // hi/lo overflowed
		f = math.Pow(hi, axisMargin) / math.Pow(lo, axisMargin)
	}
	if f == 1 {
		f = 2
	}
	return max(lo/f, math.SmallestNonzeroFloat64), min(hi*f, math.MaxFloat64)
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
// band between lower and upper when those are given, to p, and returns the
// line, whose thumbnail stands for the curve in a legend.
func addLine(p *plot.Plot, line, lower, upper plotter.XYs, col color.Color, dashes []vg.Length) (*plotter.Line, error) {
	if len(lower) > 0 {
		band := make(plotter.XYs, 0, 2*len(lower))
		band = append(band, lower...)
		for k := len(upper) - 1; k >= 0; k-- {
			band = append(band, upper[k])
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, err
		}
		r, g, b, _ := col.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	l, err := plotter.NewLine(line)
	if err != nil {
		return nil, err
	}
	l.Color = col
	l.Width = vg.Points(1.5)
	l.Dashes = dashes
	p.Add(l)
	if len(line) == 1 { // a line of one point draws nothing: mark the point
		dot, err := plotter.NewScatter(line)
		if err != nil {
			return nil, err
		}
		dot.Color = col
		dot.Shape = draw.CircleGlyph{}
		dot.Radius = vg.Points(3)
		p.Add(dot)
	}
	return l, nil
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

// positiveX returns curves without their points at x ≤ 0, which a log x
// axis cannot show, and whether it left any out.
func positiveX(curves []Curve) (out []Curve, dropped bool) {
	out = make([]Curve, len(curves))
	for i, c := range curves {
		keep := func(v []float64) []float64 {
			if v == nil {
				return nil
			}
			var kept []float64
			for k, x := range c.Rounds {
				if k >= len(v) {
					break
				}
				if x > 0 {
					kept = append(kept, v[k])
				}
			}
			return kept
		}
		out[i] = c
		out[i].Acc, out[i].AccStd, out[i].S, out[i].SStd = keep(c.Acc), keep(c.AccStd), keep(c.S), keep(c.SStd)
		out[i].Rounds = keep(c.Rounds)
		dropped = dropped || len(out[i].Rounds) < len(c.Rounds)
	}
	return out, dropped
}
