package data

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The numbers of LEAF's x arrays, read without encoding/json's reflection:
// FEMNIST's pixels are most of a LEAF file.

// leafPixels reads the numbers of a LEAF x array, whose syntax the JSON
// decoder has checked.
type leafPixels struct {
	b   []byte
	pos int
}

// skipSpace skips JSON white space.
func (p *leafPixels) skipSpace() {
	for p.pos < len(p.b) && (p.b[p.pos] == ' ' || p.b[p.pos] == '\n' || p.b[p.pos] == '\t' || p.b[p.pos] == '\r') {
		p.pos++
	}
}

// consume skips white space and then c, reporting whether c was there.
func (p *leafPixels) consume(c byte) bool {
	p.skipSpace()
	if p.pos < len(p.b) && p.b[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// image reads x[i], one array of 784 values in [0, 1], appending its
// bytes 255 − round(255·v) to w.
func (p *leafPixels) image(i int, w *leafWriter) error {
	if !p.consume('[') {
		return fmt.Errorf("x[%d]: want an array of %d pixel values", i, femnistPixels)
	}
	k := 0
	for ; !p.consume(']'); k++ {
		if k > 0 && !p.consume(',') {
			return fmt.Errorf("x[%d][%d]: want \",\" between values", i, k)
		}
		v, err := p.number()
		if err != nil {
			return fmt.Errorf("x[%d][%d]: %w", i, k, err)
		}
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("x[%d][%d] = %g, want a pixel value in [0, 1]", i, k, v)
		}
		if k < femnistPixels {
			w.pix = append(w.pix, byte(255-math.Round(v*255)))
		}
	}
	if k != femnistPixels {
		w.pix = w.pix[:len(w.pix)-min(k, femnistPixels)]
		return fmt.Errorf("x[%d]: %d values, want %d (28×28)", i, k, femnistPixels)
	}
	return nil
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number reads one JSON number. A plain decimal whose digits make an
// integer below 2⁵³ (all that LEAF writes, such as 0.5019607843137255) is
// that integer over a power of ten: both exact in float64, so the one
// correctly rounded division gives strconv.ParseFloat's value. Anything
// else (an exponent, more digits) goes to strconv.ParseFloat.
func (p *leafPixels) number() (float64, error) {
	p.skipSpace()
	start := p.pos
	var m uint64
	digits, frac, plain := 0, 0, true
	seenDot := false
	for ; p.pos < len(p.b); p.pos++ {
		c := p.b[p.pos]
		switch {
		case c >= '0' && c <= '9':
			if m != 0 || c != '0' {
				digits++
			}
			m = m*10 + uint64(c-'0')
			if seenDot {
				frac++
			}
			continue
		case c == '.' && !seenDot:
			seenDot = true
			continue
		case c == '-' || c == '+' || c == 'e' || c == 'E' || c == '.':
			plain = false
			continue
		}
		break
	}
	text := p.b[start:p.pos]
	if len(text) == 0 {
		return 0, errors.New("want a number")
	}
	if plain && digits <= 19 && m <= 1<<53 && frac < len(pow10) {
		return float64(m) / pow10[frac], nil
	}
	v, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", text)
	}
	return v, nil
}
