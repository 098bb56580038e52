package kernels

import (
	"fmt"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// Label is an integer class label type.
type Label interface {
	~uint8 | ~int32 | ~int
}

// SoftmaxCrossEntropy returns the mean over the len(labels) rows of logits
// (row-major, classes wide) of −log softmax(row)[label], computed in float64
// with the log-sum-exp shifted by the row maximum. If dlogits is not nil it
// receives the gradient of that mean, (softmax(row) − onehot(label)) /
// rows. It returns an error naming the row of a label outside [0, classes).
func SoftmaxCrossEntropy[L Label](dlogits, logits []float32, labels []L, classes int) (float64, error) {
	rows := len(labels)
	if classes < 1 {
		return 0, fmt.Errorf("softmax cross-entropy: %d classes, want ≥ 1", classes)
	}
	if len(logits) < rows*classes {
		return 0, fmt.Errorf("softmax cross-entropy: %d logits for %d rows of %d classes", len(logits), rows, classes)
	}
	if dlogits != nil && len(dlogits) < rows*classes {
		return 0, fmt.Errorf("softmax cross-entropy: gradient has %d elements, want %d", len(dlogits), rows*classes)
	}
	if rows == 0 {
		return 0, nil
	}
	inv := 1 / float64(rows)
	var loss float64
	for r, l := range labels {
		if int(l) < 0 || int(l) >= classes {
			return 0, fmt.Errorf("softmax cross-entropy: label %d of row %d outside [0, %d)", int(l), r, classes)
		}
		row := logits[r*classes : (r+1)*classes]
		m := float64(row[0])
		for _, v := range row[1:] {
			m = max(m, float64(v))
		}
		var s float64
		for _, v := range row {
			s += detmath.Exp(float64(v) - m)
		}
		lse := m + detmath.Log(s)
		loss += lse - float64(row[l])
		if dlogits != nil {
			d := dlogits[r*classes : (r+1)*classes]
			for j, v := range row {
				d[j] = float32(detmath.Exp(float64(v)-lse) * inv)
			}
			d[l] -= float32(inv)
		}
	}
	return loss * inv, nil
}
