package models

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Names of the networks New builds, and of the logistic regression.
const (
	// MNISTCNNName names NewMNISTCNN's network.
	MNISTCNNName = "mnist-cnn"
	// CIFARCNNName names NewCIFARCNN's network.
	CIFARCNNName = "cifar-cnn"
	// LogRegName names NewLogReg's model.
	LogRegName = "logreg"
	// MLPPrefix starts the name of an MLP: mlp:H1,H2,… (see NewMLP), or
	// mlp:H1,H2,…@p with Dropout of rate p after each hidden layer (see
	// NewMLPDropout).
	MLPPrefix = "mlp:"
	// MLPDropoutSep separates an MLP's widths from its dropout rate:
	// mlp:256,128@0.5.
	MLPDropoutSep = "@"
)

// Available lists the model names of this build, as a flag's help reads
// them.
const Available = "mnist-cnn|cifar-cnn|logreg|resnet20-gn|resnet32-gn|resnet56-gn|fedavg-cnn|mlp:H1,H2,…[@P]|vit:PATCH,DIM,DEPTH,HEADS[,MLP_RATIO]|cct:LAYERS[,HEADS,MLP_RATIO,DIM]/KxN"

// MaxWidth is the widest layer an MLP may ask for. It only keeps the
// parameter count far from overflowing; the memory check (see
// WorkerBytes) refuses networks that do not fit long before it.
const MaxWidth = 1 << 24

// New returns the image classifier named name — mnist-cnn, cifar-cnn,
// resnetD-gn (D = 6n + 2: resnet20-gn, resnet32-gn, resnet56-gn, …),
// fedavg-cnn, mlp:H1,H2,… (mlp:H1,H2,…@P with dropout of rate P after
// each hidden layer), vit:P,D,L,H[,R] (see NewViT) or cct:L/KxN and
// cct:L,H,R,D/KxN (see NewCCT) — for samples of the given shape [C,H,W] with
// classes classes. The paper's CNNs take any channel count and any image
// on which their unpadded 5×5 convolutions and 2×2 pools leave at least one
// value: NewMNISTCNN and NewCIFARCNN are New on MNIST's and CIFAR-10's
// shapes. The ResNets and the FedAvg CNN take any image of at least 4×4;
// the MLP takes any shape. A name ending in .onnx is the network of that
// ONNX file (see ImportONNXFile, which also returns the file's weights;
// New's model draws fresh ones with Init). It returns an error for a name
// it does not know, an ONNX file it cannot import, the logistic regression
// (see NewLogReg) and an image the network does not fit.
func New(name string, shape []int, classes int) (Model, error) {
	if classes < 1 {
		return nil, fmt.Errorf("%s: %d classes, want at least 1", name, classes)
	}
	if depth, ok, err := resNetDepth(name); ok {
		if err != nil {
			return nil, err
		}
		if err := imageFits(name, shape, 1); err != nil {
			return nil, err
		}
		return NewResNetGN(depth, shape, classes)
	}
	switch {
	case name == MNISTCNNName || name == CIFARCNNName:
		if err := cnnFits(name, shape); err != nil {
			return nil, err
		}
		if name == MNISTCNNName {
			return mnistCNNFor(shape, classes)
		}
		return cifarCNNFor(shape, classes)
	case name == FedAvgCNNName:
		if err := imageFits(name, shape, 4); err != nil {
			return nil, err
		}
		return NewFedAvgCNN(shape, classes)
	case strings.HasPrefix(name, MLPPrefix):
		hidden, p, err := ParseMLP(name)
		if err != nil {
			return nil, err
		}
		if len(shape) == 0 || slices.Min(shape) < 1 {
			return nil, fmt.Errorf("%s: samples of shape %v, want at least one feature", name, shape)
		}
		return NewMLPDropout(shape, hidden, p, classes)
	case strings.HasPrefix(name, ViTPrefix):
		c, err := ParseViT(name)
		if err != nil {
			return nil, err
		}
		return NewViT(shape, classes, c)
	case strings.HasPrefix(name, CCTPrefix):
		c, err := ParseCCT(name)
		if err != nil {
			return nil, err
		}
		return NewCCT(shape, classes, c)
	case name == LogRegName:
		return nil, fmt.Errorf("logreg is the logistic regression of LibSVM features, not an image model")
	case IsONNXName(name):
		m, _, err := ImportONNXFile(name, shape, classes)
		return m, err
	}
	return nil, fmt.Errorf("%w %q, want one of %s", ErrUnknownModel, name, Available)
}

// ErrUnknownModel is wrapped by New's error for a name that is no model.
var ErrUnknownModel = errors.New("unknown model")

// imageFits reports an error unless shape is an image [C,H,W] of at least
// side×side.
func imageFits(name string, shape []int, side int) error {
	if len(shape) != 3 || shape[0] < 1 || shape[1] < side || shape[2] < side {
		return fmt.Errorf("%s needs images [C,H,W] of at least %d×%d; the data's samples have shape %v", name, side, side, shape)
	}
	return nil
}

// ParseMLP returns the hidden widths and the dropout rate of the MLP named
// mlp:H1,H2,… or mlp:H1,H2,…@P: at least one width, each a positive integer
// of at most MaxWidth, and P a decimal number with 0 ≤ P < 1 (0 where the
// name has no @P).
func ParseMLP(name string) ([]int, float32, error) {
	list, ok := strings.CutPrefix(name, MLPPrefix)
	list, rate, hasRate := strings.Cut(list, MLPDropoutSep)
	if !ok || list == "" {
		return nil, 0, fmt.Errorf("%s: want at least one layer width, e.g. mlp:128,64 (or mlp:128,64@0.5 with dropout)", name)
	}
	var hidden []int
	for _, f := range strings.Split(list, ",") {
		h, err := strconv.Atoi(f)
		if err != nil || h < 1 || h > MaxWidth {
			return nil, 0, fmt.Errorf("%s: layer width %q, want a whole number from 1 to %d", name, f, MaxWidth)
		}
		hidden = append(hidden, h)
	}
	var p float32
	if hasRate {
		v, err := strconv.ParseFloat(rate, 64)
		if err != nil || !(v >= 0 && v < 1) || strings.ContainsAny(rate, "xXpP_") {
			return nil, 0, fmt.Errorf("%s: dropout rate %q, want a decimal number p with 0 ≤ p < 1 after %q, e.g. mlp:128,64@0.5", name, rate, MLPDropoutSep)
		}
		p = float32(v)
		if p >= 1 { // v just below 1 rounds up to float32 1
			return nil, 0, fmt.Errorf("%s: dropout rate %q rounds to 1 in float32, want 0 ≤ p < 1", name, rate)
		}
	}
	return hidden, p, nil
}

// cnnFits reports an error unless the image shape [C,H,W] leaves at least
// one value per map after the paper CNNs' two blocks of an unpadded 5×5
// convolution and a 2×2 max-pool (rounding down, as PyTorch's MaxPool2d).
func cnnFits(name string, shape []int) error {
	if len(shape) != 3 || shape[0] < 1 || pooled(shape[1]) < 1 || pooled(shape[2]) < 1 {
		return fmt.Errorf("%s needs images [C,H,W] of at least 16×16 (two unpadded 5×5 convolutions, each pooled 2×2); the data's samples have shape %v", name, shape)
	}
	return nil
}

// pooled is a side of the maps the paper CNNs' two convolution blocks
// leave of an image side n: (((n−4)/2)−4)/2, or 0 where nothing is left.
func pooled(n int) int {
	if n < 16 {
		return 0
	}
	return ((n-4)/2 - 4) / 2
}
