package compress_test

import (
	"fmt"
	"log"

	"github.com/gtstorm/gtstorm/decentral/compress"
)

// A node encodes its vector into a reused buffer; a neighbour decodes it.
func Example() {
	c, err := compress.Parse("topk:0.25")
	if err != nil {
		log.Fatal(err)
	}
	v := []float32{0.5, -3, 0, 1, 2, -0.25, 0.125, -1}
	buf := make([]byte, 0, c.Size(len(v))) // Encode allocates nothing with this room
	buf = c.Encode(buf[:0], v, 1)
	out := make([]float32, len(v))
	if err := c.Decode(out, buf); err != nil {
		log.Fatal(err)
	}
	fmt.Println(c, len(buf), "bytes:", out)
	// Output: topk:0.25 16 bytes: [0 -3 0 0 2 0 0 0]
}
