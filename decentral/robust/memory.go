package robust

import "github.com/gtstorm/gtstorm/decentral"

// sliceHeader is the bytes of a slice header, which the estimate counts.
const sliceHeader = 24

// Bytes returns the bytes an attack on messages and a robust rule add to
// decentral.OptimizerBytes for a run of algo: each of the byzantine nodes
// keeps two rounds of its own message to every neighbour (degree of them on
// average, p floats per shared slab), and each worker a robust rule's two
// p-float sums.
func Bytes(algo string, byzantine, p, workers int, degree float64, lies, robust bool) (int64, error) {
	m, err := decentral.NewMethod(algo, nil)
	if err != nil {
		return 0, err
	}
	var b int64
	if lies {
		perNode := 2 * degree * float64(m.Describe().Shares()) * (float64(float64(p)*4) + sliceHeader)
		b += int64(float64(byzantine) * perNode)
	}
	if lies || robust {
		b += int64(max(workers, 1)) * (int64(p)*16 + 4*sliceHeader)
	}
	return b, nil
}
