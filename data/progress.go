package data

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress reports the bytes of one download: a progress bar for a terminal,
// or a plain line at every tenth (every 16 MiB when the size is unknown).
type progress struct {
	w           io.Writer
	label       string
	bar         *progressbar.ProgressBar
	total, done int64
	next, step  int64
}

func newProgress(w io.Writer, label string, total int64, bar bool) *progress {
	p := &progress{w: w, label: label, total: total}
	if bar {
		max := total
		if max <= 0 {
			max = -1 // spinner
		}
		p.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowTotalBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetRenderBlankState(true),
		)
		return p
	}
	p.step = 16 << 20
	if total > 0 {
		p.step = max(total/10, 1)
	}
	p.next = p.step
	fmt.Fprintf(w, "%s: downloading %s\n", label, sizeOf(total))
	return p
}

// Write counts len(b) more bytes downloaded.
func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.bar != nil {
		p.bar.Add64(int64(len(b)))
		return len(b), nil
	}
	if p.done >= p.next {
		if p.total > 0 {
			fmt.Fprintf(p.w, "%s: %s of %s (%d%%)\n", p.label, mb(p.done), mb(p.total), p.done*100/p.total)
		} else {
			fmt.Fprintf(p.w, "%s: %s\n", p.label, mb(p.done))
		}
		for p.next <= p.done {
			p.next += p.step
		}
	}
	return len(b), nil
}

// finish ends the report of a download that succeeded (ok) or failed.
func (p *progress) finish(ok bool) {
	if p.bar != nil {
		if ok {
			p.bar.Finish()
		}
		fmt.Fprintln(p.w)
		return
	}
	if ok {
		fmt.Fprintf(p.w, "%s: downloaded %s\n", p.label, mb(p.done))
	}
}

// mb formats a byte count in megabytes.
func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// sizeOf describes a possibly unknown size.
func sizeOf(n int64) string {
	if n <= 0 {
		return "(size unknown)"
	}
	return mb(n)
}
