package data

import (
	"fmt"
	"image"
	"image/color"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestImageFolderCacheSpeed measures the first (decoding) and the second
// (cached) load of 10,000 small PNGs written in the system's temporary
// folder, and wants the second at least 10× faster. It runs only with
// GTSTORM_IMAGE_SPEED=1 (writing the images takes a while):
//
//	GTSTORM_IMAGE_SPEED=1 go test ./data/ -run ImageFolderCacheSpeed -v
func TestImageFolderCacheSpeed(t *testing.T) {
	if os.Getenv("GTSTORM_IMAGE_SPEED") == "" {
		t.Skip("set GTSTORM_IMAGE_SPEED=1 to measure the image cache")
	}
	imageFolderCache(t)
	dir := filepath.Join(t.TempDir(), "pngs")
	rng := rand.New(rand.NewPCG(1, 2))
	const classes, each, side = 10, 1000, 28
	for c := range classes {
		for i := range each {
			img := image.NewRGBA(image.Rect(0, 0, side, side))
			for k := range img.Pix {
				img.Pix[k] = uint8(rng.IntN(256))
			}
			img.SetRGBA(0, 0, color.RGBA{A: 255})
			writeImage(t, filepath.Join(dir, fmt.Sprintf("class%02d", c), fmt.Sprintf("%05d.png", i)), img)
		}
	}
	var times [2]time.Duration
	for k := range times {
		start := time.Now()
		train, test, st, err := LoadImageFolder(dir, LoadOptions{})
		times[k] = time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if st.Cached != (k == 1) || train.Len()+test.Len() != classes*each {
			t.Fatalf("load %d: cached %v, %d images", k+1, st.Cached, train.Len()+test.Len())
		}
	}
	t.Logf("%d PNGs of %d×%d: first load %v (decoding), second %v (cache), %.1f× faster",
		classes*each, side, side, times[0], times[1], float64(times[0])/float64(times[1]))
	if times[0] < 10*times[1] {
		t.Errorf("the cached load is less than 10× faster")
	}
}
