package load

import (
	"math/rand/v2"
	"slices"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// What hlogEncoder writes, hdr.Decode reads back as the same histogram,
// for empty, sparse, dense and extreme histograms, with one encoder
// reused throughout.
func TestHlogEncoderRoundTrip(t *testing.T) {
	var e hlogEncoder
	r := rand.New(rand.NewPCG(1, 2))
	for name, fill := range map[string]func(h *hdr.Histogram){
		"empty":  func(*hdr.Histogram) {},
		"one":    func(h *hdr.Histogram) { h.RecordValue(1) },
		"max":    func(h *hdr.Histogram) { h.RecordValue(histHighest); h.RecordValues(histLowest, 1<<40) },
		"sparse": func(h *hdr.Histogram) { h.RecordValue(3); h.RecordValue(5000); h.RecordValue(7_000_000) },
		"dense": func(h *hdr.Histogram) {
			for range 100_000 {
				h.RecordValue(int64(1 + r.ExpFloat64()*20_000))
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			for range 2 {
				h := newHist()
				fill(h)
				got, err := hdr.Decode(e.encode(h))
				if err != nil {
					t.Fatal(err)
				}
				want := h.Export()
				g := got.Export()
				if g.LowestTrackableValue != want.LowestTrackableValue || g.HighestTrackableValue != want.HighestTrackableValue ||
					g.SignificantFigures != want.SignificantFigures || !slices.Equal(g.Counts, want.Counts) ||
					got.TotalCount() != h.TotalCount() || got.Max() != h.Max() {
					t.Fatalf("decoded histogram differs: total %d max %d, want %d %d", got.TotalCount(), got.Max(), h.TotalCount(), h.Max())
				}
			}
		})
	}
}

func BenchmarkHlogEncode(b *testing.B) {
	h := newHist()
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		h.RecordValue(int64(5000 + r.ExpFloat64()*3000))
	}
	b.Run("hdr.Encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.Encode(hdr.V2CompressedEncodingCookieBase)
		}
	})
	b.Run("hlogEncoder", func(b *testing.B) {
		var e hlogEncoder
		b.ReportAllocs()
		for b.Loop() {
			e.encode(h)
		}
	})
}
