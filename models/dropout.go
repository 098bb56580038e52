package models

import (
	"fmt"
	"math"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/splitmix"
)

// Dropout's masks are part of the minibatch draw (SPEC §12): element e
// (its index within the batch, sample k of size s holding e = k·s … k·s+s−1)
// of the Dropout layer of key L is dropped where
//
//	mix(key_L + (e+1)·γ) < ⌊p·2⁶⁴⌋,   key_L = mix(Draw ⊕ mix((L+1)·γ)),
//
// with mix SplitMix64's finaliser (splitmix.Mix), γ its increment
// (splitmix.Gamma) and
// Draw the batch's key (data.Batch.Draw). L is the layer's position in the
// description (its index among the layers) where Net.Dropout adds it, and
// its name dropout#L+1 records it: the ONNX export writes that name and the
// import reads it back, so a network imported from its own export keeps L
// though its layers are counted otherwise (an explicit Flatten, …), and a
// NetSpec keeps it too. A kept element is scaled by
// float32(1)/float32(1−p), as PyTorch scales. The bits depend on nothing
// but (Draw, L, e): not on the worker, the goroutine or the rank that
// evaluates the gradient, nor on earlier batches, so both of GT-STORM's
// gradients on one minibatch, any number of workers and a resumed run see
// the same masks.

// dropMask is the mask buffer of one Dropout layer in a training graph.
type dropMask struct {
	buf   []float32 // one value per element of the batch's activations
	layer int       // the layer's key L (its index in the description where Net.Dropout added it)
	rate  float32   // p
}

// fill writes the mask of the batch whose draw key is draw.
func (m dropMask) fill(draw uint64) {
	fillDropMask(m.buf, draw, m.layer, m.rate)
}

// fillDropMask writes into mask the dropout mask of layer on the batch
// keyed draw: 0 for a dropped element, 1/(1−p) for a kept one.
func fillDropMask(mask []float32, draw uint64, layer int, p float32) {
	thr := uint64(math.Ldexp(float64(p), 64)) // p < 1: below 2⁶⁴
	scale := float32(1) / float32(1-float64(p))
	key := splitmix.Mix(draw ^ splitmix.Mix((uint64(layer)+1)*splitmix.Gamma))
	for e := range mask {
		if splitmix.Mix(key+(uint64(e)+1)*splitmix.Gamma) < thr {
			mask[e] = 0
		} else {
			mask[e] = scale
		}
	}
}

// Stochastic reports whether m's gradients depend on more of the minibatch
// draw than its samples: whether it has a Dropout layer of rate p > 0. Such
// a model's Grad and GradPair take keyed batches only (data.Batch.Draw ≠ 0,
// made by a data.Sampler after KeyDraws), and a run that trains it keys
// its sampler's draws.
func Stochastic(m Model) bool {
	cm, ok := m.(*classifier)
	return ok && cm.net.stochastic()
}

// stochastic reports whether n has a Dropout layer of rate p > 0.
func (n *Net) stochastic() bool {
	for _, l := range n.layers {
		if l.kind == kindDropout && l.rate > 0 {
			return true
		}
	}
	return false
}

// checkDraw refuses a training batch without a draw key for a network with
// dropout: its masks would be no draw's.
func (m *classifier) checkDraw(b data.Batch) error {
	if b.Draw == 0 && m.net.stochastic() {
		return fmt.Errorf("%s: has dropout, whose masks derive from the batch's draw key, but the batch %v has none (sample with a data.Sampler after KeyDraws, or set Batch.Draw)", m.name, b)
	}
	return nil
}
