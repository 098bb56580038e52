package graphops

import "gorgonia.org/tensor"

// Workspace holds the buffers of a worker's compiled graphs, by name. A
// worker runs one graph at a time and every run writes each buffer before
// reading it, so graphs of different batch sizes (and the training and
// evaluation graphs) share one set of buffers: a worker holds what its
// largest graph needs, not the sum over its graphs. A buffer that must grow
// for a larger graph is replaced; graphs built earlier keep the old one.
type Workspace struct {
	f32 map[string][]float32
	f64 map[string][]float64
	u8  map[string][]uint8
}

// NewWorkspace returns an empty workspace.
func NewWorkspace() *Workspace {
	return &Workspace{f32: map[string][]float32{}, f64: map[string][]float64{}, u8: map[string][]uint8{}}
}

// Floats returns the named float32 buffer with length n.
func (ws *Workspace) Floats(name string, n int) []float32 {
	b := ws.f32[name]
	if cap(b) < n {
		b = make([]float32, n)
		ws.f32[name] = b
	}
	return b[:n:n]
}

// Float64s returns the named float64 buffer with length n.
func (ws *Workspace) Float64s(name string, n int) []float64 {
	b := ws.f64[name]
	if cap(b) < n {
		b = make([]float64, n)
		ws.f64[name] = b
	}
	return b[:n:n]
}

// Bytes returns the named byte buffer with length n.
func (ws *Workspace) Bytes(name string, n int) []uint8 {
	b := ws.u8[name]
	if cap(b) < n {
		b = make([]uint8, n)
		ws.u8[name] = b
	}
	return b[:n:n]
}

// tensor returns a float32 tensor of the given shape backed by the named
// buffer.
func (ws *Workspace) tensor(name string, shape ...int) tensor.Tensor {
	return view(ws.Floats(name, tensor.Shape(shape).TotalSize()), shape...)
}

// Size returns the bytes the workspace holds.
func (ws *Workspace) Size() int {
	n := 0
	for _, b := range ws.f32 {
		n += 4 * cap(b)
	}
	for _, b := range ws.f64 {
		n += 8 * cap(b)
	}
	for _, b := range ws.u8 {
		n += cap(b)
	}
	return n
}

// Sizes returns the bytes each buffer holds, keyed "f32:", "f64:" or "u8:"
// and its name.
func (ws *Workspace) Sizes() map[string]int64 {
	out := make(map[string]int64, len(ws.f32)+len(ws.f64)+len(ws.u8))
	for name, b := range ws.f32 {
		out["f32:"+name] = 4 * int64(cap(b))
	}
	for name, b := range ws.f64 {
		out["f64:"+name] = 8 * int64(cap(b))
	}
	for name, b := range ws.u8 {
		out["u8:"+name] = int64(cap(b))
	}
	return out
}
