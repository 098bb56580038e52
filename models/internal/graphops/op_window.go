package graphops

// Window configures a max or average pooling layer (MaxPoolWindow,
// AvgPoolWindow) as kernels.WindowShape does: K×K windows moved by Stride
// over maps padded with Pad (at most K/2) on every side; with ExcludePad an
// average's divisor counts only the values inside the map (PyTorch's
// count_include_pad=False), and with Ceil the output size is rounded up,
// its last windows clipped (PyTorch's ceil_mode=True).
type Window struct {
	K, Stride, Pad   int
	ExcludePad, Ceil bool
}
