// Package plottest holds what tests of PNG plots check without golden
// images: that a file decodes as PNG, and how much of an image is near
// black (a bar chart drawn as a black block).
package plottest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"
)

// ReadPNG reads and decodes the PNG file path, failing t when it cannot.
func ReadPNG(t testing.TB, path string) image.Image {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return DecodePNG(t, data)
}

// DecodePNG decodes data as PNG, failing t when it is not one.
func DecodePNG(t testing.TB, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

// DarkShare is the share of img's pixels whose grey level is below 40 of
// 255: text and axes take a few percent, a black block far more.
func DarkShare(img image.Image) float64 {
	n, all := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y < 40 {
				n++
			}
			all++
		}
	}
	if all == 0 {
		return 0
	}
	return float64(n) / float64(all)
}
