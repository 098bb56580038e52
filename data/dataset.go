// Package data loads the datasets gtstorm trains on (MNIST, CIFAR-10, LibSVM),
// splits them over nodes (IID and non-IID partitions) and draws reproducible
// per-node minibatches.
package data

import "fmt"

// Dataset is a labelled set of samples held in memory.
//
// Features are stored in exactly one of three forms: bytes (images, scaled to
// [0,1] on read and optionally normalised per channel), dense float32, or
// sparse CSR rows (LibSVM). Readers go through Dense or Sparse and never touch
// the storage directly.
type Dataset struct {
	Name    string
	Shape   []int // shape of one sample, e.g. [1 28 28], [3 32 32] or [d]
	Classes int   // number of classes; labels lie in [0, Classes)
	Labels  []uint8

	// Writers, for data with a natural unit of heterogeneity (FEMNIST's
	// writers): sample i's writer, an index into WriterNames; nil for data
	// without writers. --partition natural keeps each writer on one node.
	Writers     []int32
	WriterNames []string

	// Byte storage: Len()*Dim() bytes; value = (b/255 - Mean[c]) / Std[c],
	// c the channel (Shape[0]) of the feature. Mean and Std are nil for plain [0,1].
	Bytes     []uint8
	Mean, Std []float32

	// Dense float32 storage: Len()*Dim() values.
	Floats []float32

	// Sparse CSR storage: row i is Cols[RowPtr[i]:RowPtr[i+1]] (0-based feature
	// indices, increasing) with values Vals[RowPtr[i]:RowPtr[i+1]].
	RowPtr []int
	Cols   []int32
	Vals   []float32
}

// Len returns the number of samples.
func (d *Dataset) Len() int { return len(d.Labels) }

// Dim returns the number of features of one sample.
func (d *Dataset) Dim() int {
	n := 1
	for _, s := range d.Shape {
		n *= s
	}
	return n
}

// IsSparse reports whether samples are stored as sparse rows.
func (d *Dataset) IsSparse() bool { return d.RowPtr != nil }

// Dense writes sample i's features into dst, which must have length Dim().
func (d *Dataset) Dense(i int, dst []float32) {
	dim := d.Dim()
	switch {
	case d.Bytes != nil:
		src := d.Bytes[i*dim : (i+1)*dim]
		if d.Mean == nil {
			for k, b := range src {
				dst[k] = float32(b) * (1.0 / 255)
			}
			return
		}
		// A channel at a time, through a table of its 256 values when the
		// channel is larger than the table (the same expression, so the
		// same bits, and a quarter of CIFAR's divisions).
		per := dim / d.Shape[0]
		var table [256]float32
		for c := range d.Shape[0] {
			mean, std := d.Mean[c], d.Std[c]
			out, in := dst[c*per:(c+1)*per], src[c*per:(c+1)*per]
			if per <= len(table) {
				for k, b := range in {
					out[k] = standardise(b, mean, std)
				}
				continue
			}
			for b := range table {
				table[b] = standardise(uint8(b), mean, std)
			}
			for k, b := range in {
				out[k] = table[b]
			}
		}
	case d.Floats != nil:
		copy(dst, d.Floats[i*dim:(i+1)*dim])
	default:
		clear(dst)
		for k := d.RowPtr[i]; k < d.RowPtr[i+1]; k++ {
			dst[d.Cols[k]] = d.Vals[k]
		}
	}
}

// standardise is byte b of a channel of mean mean and standard deviation
// std as Dense gives it: (b/255 − mean)/std, the product converted so that
// no architecture fuses it.
func standardise(b uint8, mean, std float32) float32 {
	return (float32(float32(b)*(1.0/255)) - mean) / std
}

// Sparse returns sample i's non-zero features; it panics unless IsSparse.
func (d *Dataset) Sparse(i int) (cols []int32, vals []float32) {
	lo, hi := d.RowPtr[i], d.RowPtr[i+1]
	return d.Cols[lo:hi], d.Vals[lo:hi]
}

// ClassCounts returns how many samples of each class the dataset holds.
func (d *Dataset) ClassCounts() []int {
	c := make([]int, d.Classes)
	for _, l := range d.Labels {
		c[l]++
	}
	return c
}

// Batch is a minibatch: indices into a dataset. A drawn batch may be passed to
// several gradient evaluations (GT-STORM uses it at x_t and x_{t-1}) without
// copying any sample.
type Batch struct {
	Data  *Dataset
	Index []int

	// Draw is the batch's draw key, a function of (seed, node, draw) taken
	// from the node's stream when the sampler keys its draws (KeyDraws), and
	// zero otherwise (evaluation batches, runs without augmentation or
	// dropout). Whatever is random within one training minibatch (its
	// augmentation, its dropout masks) derives from it, so every gradient
	// evaluated on the batch (GT-STORM's two included) sees the same.
	Draw uint64
	// Augment is the augmentation of a training batch, which Dense applies
	// to each sample; nil for none (evaluation batches among them).
	Augment *Augment
}

// Len returns the number of samples in the batch. It makes *Batch a
// decentral.Batch, the optimizer's view of a minibatch.
func (b Batch) Len() int { return len(b.Index) }

// String describes the batch briefly, for error messages.
func (b Batch) String() string {
	return fmt.Sprintf("batch of %d from %s", len(b.Index), b.Data.Name)
}

// Head returns a view of the first n samples of d (all of them if n ≤ 0 or
// n ≥ Len), sharing d's storage: nothing is copied.
func (d *Dataset) Head(n int) *Dataset {
	if n <= 0 || n >= d.Len() {
		return d
	}
	h := *d
	h.Name = fmt.Sprintf("%s[:%d]", d.Name, n)
	h.Labels = d.Labels[:n]
	if d.Writers != nil {
		h.Writers = d.Writers[:n]
	}
	dim := d.Dim()
	switch {
	case d.Bytes != nil:
		h.Bytes = d.Bytes[:n*dim]
	case d.Floats != nil:
		h.Floats = d.Floats[:n*dim]
	default:
		h.RowPtr = d.RowPtr[:n+1]
	}
	return &h
}
