package graphops

import "math"

// t64 is a float64 tensor of the reference networks.
type t64 struct {
	shape []int
	v     []float64
}

func newT64(shape ...int) *t64 {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return &t64{shape: shape, v: make([]float64, n)}
}

// refNet computes a netSpec in float64 from the definitions of its layers
// (PyTorch's), with the parameters p (x among them).
type refNet struct{ p map[string][]float64 }

func t(x any) *t64 { return x.(*t64) }

func (r *refNet) conv(xa any, name string, out, k, stride, pad int) any {
	x, w := t(xa), r.p[name+".w"]
	n, c, h, wd := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	oh, ow := (h+2*pad-k)/stride+1, (wd+2*pad-k)/stride+1
	y := newT64(n, out, oh, ow)
	for i := range n {
		for o := range out {
			for oy := range oh {
				for ox := range ow {
					var s float64
					for ch := range c {
						for ky := range k {
							for kx := range k {
								iy, ix := oy*stride+ky-pad, ox*stride+kx-pad
								if iy >= 0 && iy < h && ix >= 0 && ix < wd {
									s += w[((o*c+ch)*k+ky)*k+kx] * x.v[((i*c+ch)*h+iy)*wd+ix]
								}
							}
						}
					}
					y.v[((i*out+o)*oh+oy)*ow+ox] = s
				}
			}
		}
	}
	return y
}

func (r *refNet) bias(xa any, name string) any {
	x, b := t(xa), r.p[name+".b"]
	y := newT64(x.shape...)
	plane := x.shape[2] * x.shape[3]
	for i, v := range x.v {
		y.v[i] = v + b[i/plane%x.shape[1]]
	}
	return y
}

func (r *refNet) groupNorm(xa any, name string, groups int) any {
	x, g, b := t(xa), r.p[name+".g"], r.p[name+".b"]
	y := newT64(x.shape...)
	c, plane := x.shape[1], x.shape[2]*x.shape[3]
	m := c / groups * plane
	for ng := range len(x.v) / m {
		xs := x.v[ng*m : (ng+1)*m]
		var mean, v float64
		for _, a := range xs {
			mean += a
		}
		mean /= float64(m)
		for _, a := range xs {
			v += (a - mean) * (a - mean)
		}
		rstd := 1 / math.Sqrt(v/float64(m)+1e-5)
		for i, a := range xs {
			ch := (ng*m + i) / plane % c
			y.v[ng*m+i] = g[ch]*(a-mean)*rstd + b[ch]
		}
	}
	return y
}

func (r *refNet) relu(_ string, xa any) any {
	x := t(xa)
	y := newT64(x.shape...)
	for i, v := range x.v {
		y.v[i] = math.Max(v, 0)
	}
	return y
}

func (r *refNet) add(_ string, a, b any) any {
	y := newT64(t(a).shape...)
	for i := range y.v {
		y.v[i] = t(a).v[i] + t(b).v[i]
	}
	return y
}

// pool applies f to the values of each k×k window moved by stride.
func pool(x *t64, k, stride int, f func(win []float64) float64) *t64 {
	h, w := x.shape[2], x.shape[3]
	oh, ow := (h-k)/stride+1, (w-k)/stride+1
	y := newT64(x.shape[0], x.shape[1], oh, ow)
	win := make([]float64, 0, k*k)
	for p := range x.shape[0] * x.shape[1] {
		for oy := range oh {
			for ox := range ow {
				win = win[:0]
				for i := range k {
					for j := range k {
						win = append(win, x.v[(p*h+oy*stride+i)*w+ox*stride+j])
					}
				}
				y.v[(p*oh+oy)*ow+ox] = f(win)
			}
		}
	}
	return y
}

func maxOf(win []float64) float64 {
	m := math.Inf(-1)
	for _, v := range win {
		m = math.Max(m, v)
	}
	return m
}

func meanOf(win []float64) float64 {
	var s float64
	for _, v := range win {
		s += v
	}
	return s / float64(len(win))
}

func (r *refNet) maxPool(_ string, x any, k, stride int) any { return pool(t(x), k, stride, maxOf) }
func (r *refNet) avgPool(_ string, x any, k, stride int) any { return pool(t(x), k, stride, meanOf) }

func (r *refNet) globalAvgPool(_ string, xa any) any {
	x := t(xa)
	plane := x.shape[2] * x.shape[3]
	y := newT64(x.shape[0], x.shape[1])
	for p := range y.v {
		y.v[p] = meanOf(x.v[p*plane : (p+1)*plane])
	}
	return y
}

func (r *refNet) dense(xa any, name string, out int, relu bool) any {
	x, w, b := t(xa), r.p[name+".w"], r.p[name+".b"]
	n := x.shape[0]
	in := len(x.v) / n
	y := newT64(n, out)
	for i := range n {
		for o := range out {
			s := b[o]
			for k := range in {
				s += x.v[i*in+k] * w[k*out+o]
			}
			if relu {
				s = math.Max(s, 0)
			}
			y.v[i*out+o] = s
		}
	}
	return y
}

func (r *refNet) biasReLUPool(x any, name string) any {
	return pool(t(r.relu("", r.bias(x, name))), 2, 2, maxOf)
}

// refLoss is the batch mean of the softmax cross-entropy of s's logits
// against labels, in float64, with the parameters p.
func refLoss(s netSpec, p map[string][]float64, labels []uint8) float64 {
	r := &refNet{p: p}
	x := &t64{shape: append([]int{len(labels)}, s.input...), v: p["x"]}
	logits := t(s.body(r, r.bias(x, "in")))
	var total float64
	for i, l := range labels {
		z := logits.v[i*s.classes : (i+1)*s.classes]
		m := maxOf(z)
		var sum float64
		for _, v := range z {
			sum += math.Exp(v - m)
		}
		total += m + math.Log(sum) - z[l]
	}
	return total / float64(len(labels))
}
