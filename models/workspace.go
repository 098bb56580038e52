package models

import "gorgonia.org/tensor"

// workspace holds the buffers of a worker's compiled graphs, by name. A
// worker runs one graph at a time and every run writes each buffer before
// reading it, so graphs of different batch sizes (and the training and
// evaluation graphs) share one set of buffers: a worker holds what its
// largest graph needs, not the sum over its graphs. A buffer that must grow
// for a larger graph is replaced; graphs built earlier keep the old one.
type workspace struct {
	f32 map[string][]float32
	u8  map[string][]uint8
}

func newWorkspace() *workspace {
	return &workspace{f32: map[string][]float32{}, u8: map[string][]uint8{}}
}

// floats returns the named buffer with length n.
func (ws *workspace) floats(name string, n int) []float32 {
	b := ws.f32[name]
	if cap(b) < n {
		b = make([]float32, n)
		ws.f32[name] = b
	}
	return b[:n:n]
}

// bytes returns the named byte buffer with length n.
func (ws *workspace) bytes(name string, n int) []uint8 {
	b := ws.u8[name]
	if cap(b) < n {
		b = make([]uint8, n)
		ws.u8[name] = b
	}
	return b[:n:n]
}

// tensor returns a float32 tensor of the given shape backed by the named
// buffer.
func (ws *workspace) tensor(name string, shape ...int) tensor.Tensor {
	return view(ws.floats(name, tensor.Shape(shape).TotalSize()), shape...)
}

// size returns the bytes the workspace holds.
func (ws *workspace) size() int {
	n := 0
	for _, b := range ws.f32 {
		n += 4 * cap(b)
	}
	for _, b := range ws.u8 {
		n += cap(b)
	}
	return n
}
