package train

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// reporter shows a run's progress: a bar with rounds/s, ETA and the latest
// headline metric on a terminal, or a plain line at every evaluation. On a
// rank that does not measure (measures false) it shows nothing: that rank
// has no metrics, and logs its own nodes instead.
type reporter struct {
	w      io.Writer
	bar    *progressbar.ProgressBar
	cfg    Config
	start  time.Time
	first  int // round at which this process began
	logged int // round of the last plain line
}

func newReporter(w io.Writer, bar bool, cfg Config, measures bool) *reporter {
	if !measures {
		w = nil
	}
	r := &reporter{w: w, cfg: cfg, logged: -1}
	if w != nil && bar {
		r.bar = progressbar.NewOptions(cfg.Iters,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(fmt.Sprintf("%s %s", cfg.Algo, cfg.DataName())),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("rounds"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)
	}
	return r
}

// headline returns the row's figure a researcher watches: test accuracy for
// a CNN, the stationarity S(x) for the logistic regression.
func (r *reporter) headline(row *Row) string {
	if row == nil {
		return ""
	}
	honest := ""
	if r.cfg.Attack != "" {
		honest = "  (honest nodes)"
	}
	if r.cfg.IsLogReg() {
		return fmt.Sprintf("S(x) %.4g  acc %.4f%s", row.Stationarity(), row.TestAcc, honest)
	}
	return fmt.Sprintf("test acc %.4f  loss %.4f%s", row.TestAcc, row.TestLoss, honest)
}

func (r *reporter) begin(round int, row *Row) {
	r.start, r.first = time.Now(), round
	switch {
	case r.bar != nil:
		r.bar.Set(round)
		r.describe(row)
	case r.w != nil:
		r.line(round, row)
	}
}

func (r *reporter) describe(row *Row) {
	r.bar.Describe(fmt.Sprintf("%s %s  %s", r.cfg.Algo, r.cfg.DataName(), r.headline(row)))
}

// step reports that round t is done; row is the latest metrics row.
func (r *reporter) step(t int, row *Row) {
	switch {
	case r.bar != nil:
		if row != nil && row.Round == t {
			r.describe(row)
		}
		r.bar.Set(t)
	case r.w != nil && row != nil && row.Round == t:
		r.line(t, row)
	}
}

// line prints one plain progress line; none without a row to show.
func (r *reporter) line(t int, row *Row) {
	if t == r.logged || row == nil {
		return
	}
	r.logged = t
	msg := fmt.Sprintf("round %d/%d  %s", t, r.cfg.Iters, r.headline(row))
	if done := t - r.first; done > 0 {
		el := time.Since(r.start)
		rate := float64(done) / el.Seconds()
		eta := time.Duration(float64(r.cfg.Iters-t) / rate * float64(time.Second))
		msg += fmt.Sprintf("  %.2f rounds/s  ETA %s", rate, eta.Round(time.Second))
	}
	fmt.Fprintln(r.w, msg)
}

func (r *reporter) end() {
	if r.bar != nil {
		r.bar.Exit()
	}
}
