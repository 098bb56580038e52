package models

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// LayerSummary is one layer of a network as Summarize lists it.
type LayerSummary struct {
	Name   string // the layer's name, which names its parameters
	Op     string // what it computes, as a NetSpec names it, with its settings
	In     []int  // the tensors it reads: 0 is the input, k the output of layer k
	Shape  []int  // one sample's output
	Params int    // its trainable values
}

// Summarize lists the layers of m, a network a Net made (every image
// model New builds, and those ImportONNX makes): what each computes, the
// shape it writes and its parameter count, in order. Other models (the
// logistic regression) have no layers to list.
func Summarize(m Model) ([]LayerSummary, error) {
	cm, ok := m.(*classifier)
	if !ok {
		return nil, fmt.Errorf("%s is not a network of layers (a Net)", m.Name())
	}
	n := cm.net
	counts := map[string]int{}
	for _, p := range m.Params() {
		if i := strings.LastIndexByte(p.Name, '.'); i > 0 {
			counts[p.Name[:i]] += p.Size()
		}
	}
	out := make([]LayerSummary, len(n.layers))
	for i, l := range n.layers {
		out[i] = LayerSummary{Name: l.name, Op: l.describe(), In: append([]int(nil), l.in...),
			Shape: append([]int(nil), n.shapes[l.out]...), Params: counts[l.name]}
	}
	return out, nil
}

// describe names what l computes with its settings, torch's way where it
// has one.
func (l netLayer) describe() string {
	op := layerOps[l.kind]
	switch l.kind {
	case kindConv:
		c, a := l.conv, l.conv.mustAxes()
		s := fmt.Sprintf("conv %d×%d → %d, %s", a.kh, a.kw, c.Out, a)
		if a.uniform() {
			s = fmt.Sprintf("conv %d×%d → %d, stride %d, padding %d", a.kh, a.kw, c.Out, a.sh, a.ph)
		}
		if c.Groups > 1 {
			s += fmt.Sprintf(", groups %d", c.Groups)
		}
		if !c.Bias {
			s += ", no bias"
		}
		return s
	case kindDense:
		if l.noBias {
			return fmt.Sprintf("dense → %d, no bias", l.units)
		}
		return fmt.Sprintf("dense → %d", l.units)
	case kindGroupNorm:
		return fmt.Sprintf("groupnorm, %d groups", l.groups)
	case kindShuffle:
		return fmt.Sprintf("shuffle, %d groups", l.groups)
	case kindLayerNorm, kindChannelNorm, kindL2Normalize:
		return fmt.Sprintf("%s, ε %g", op, l.eps)
	case kindLRN:
		return fmt.Sprintf("lrn, size %d, α %g, β %g, k %g", l.lrn.Size, l.lrn.Alpha, l.lrn.Beta, l.lrn.K)
	case kindMaxPool, kindAvgPool:
		s := fmt.Sprintf("%s %d×%d, stride %d", op, l.k, l.k, l.s)
		if l.pad > 0 {
			s += fmt.Sprintf(", padding %d", l.pad)
		}
		if l.exPad {
			s += ", count_include_pad=False"
		}
		if l.ceil {
			s += ", ceil_mode"
		}
		return s
	case kindLeakyReLU, kindELU:
		return fmt.Sprintf("%s, α %g", op, l.alpha)
	case kindClamp:
		return fmt.Sprintf("clamp [%g, %g]", l.lo, l.hi)
	case kindDropout:
		return fmt.Sprintf("dropout, p %g", l.rate)
	case kindChannels:
		return fmt.Sprintf("channels [%d, %d)", l.span[0], l.span[1])
	case kindPReLU:
		return fmt.Sprintf("prelu, %d slope(s)", l.units)
	case kindLayerScale:
		return "layerscale, a trainable scale a channel"
	case kindChannelShift:
		return "channelshift, a trainable shift a channel"
	case kindAttentionPool:
		return "attentionpool, the tokens weighted by the softmax of their scores"
	case kindScale, kindShift:
		if l.owner != "" {
			return fmt.Sprintf("%s by %s's value", op, l.owner)
		}
		return op + ", one trainable value"
	case kindAttention:
		return fmt.Sprintf("attention, %d heads, scale %g", l.heads, l.scale)
	case kindTokenLinear:
		if l.noBias {
			return fmt.Sprintf("tokenlinear → %d positions, no bias", l.units)
		}
		return fmt.Sprintf("tokenlinear → %d positions", l.units)
	case kindToken:
		return fmt.Sprintf("token %d", l.index)
	case kindTokenRange:
		return fmt.Sprintf("tokens [%d, %d)", l.index, l.index+l.count)
	case kindPatches:
		return fmt.Sprintf("patches %d×%d, features %v", l.patch[0], l.patch[1], l.order)
	case kindAddConst, kindSubConst, kindMulConst, kindDivConst:
		if len(l.consts) == 1 {
			return fmt.Sprintf("%s %g", op, l.consts[0])
		}
		return fmt.Sprintf("%s, one a channel", op)
	}
	return op
}

// WriteSummary writes Summarize's table of m to w, headed by the model's
// name, input shape, class count and parameter count; a model that is not
// a Net gets its one line.
func WriteSummary(w io.Writer, m Model) error {
	shape, classes, ok := Classifier(m)
	if !ok {
		_, err := fmt.Fprintf(w, "%s: %d parameters\n", m.Name(), m.NumParams())
		return err
	}
	layers, err := Summarize(m)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: samples [%s] → %d classes, %d layers, %d parameters\n", m.Name(), joinInts(shape), classes, len(layers), m.NumParams())
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tlayer\treads\top\toutput\tparameters")
	for i, l := range layers {
		in := make([]string, len(l.In))
		for k, t := range l.In {
			in[k] = fmt.Sprint(t)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t[%s]\t%d\n", i+1, l.Name, strings.Join(in, ","), l.Op, joinInts(l.Shape), l.Params)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if names := ConstantInitialisers(m); len(names) > 0 {
		_, err = fmt.Fprintf(w, "constants multiplying or added to the data, not trained: %s (--trainable names those torch trains)\n", strings.Join(names, ", "))
	}
	return err
}
