package report

import "math"

// xy is one point of a series.
type xy struct{ x, y float64 }

// lttb downsamples pts to at most n points with Largest-Triangle-Three-
// Buckets (Steinarsson 2013): the first and last points stay, and from
// each of the n−2 buckets between them the point that makes the largest
// triangle with the previously kept point and the next bucket's mean,
// which keeps the peaks a chart should show. pts must be sorted by x.
// Series of at most n points, and n < 3, are returned unchanged.
func lttb(pts []xy, n int) []xy {
	if n < 3 || len(pts) <= n {
		return pts
	}
	out := make([]xy, 0, n)
	out = append(out, pts[0])
	every := float64(len(pts)-2) / float64(n-2)
	a := 0
	for i := 0; i < n-2; i++ {
		// the next bucket's mean
		ns := int(math.Floor(float64(i+1)*every)) + 1
		ne := min(int(math.Floor(float64(i+2)*every))+1, len(pts))
		var mx, my float64
		for _, p := range pts[ns:ne] {
			mx += p.x
			my += p.y
		}
		if c := float64(ne - ns); c > 0 {
			mx, my = mx/c, my/c
		}
		// this bucket's point with the largest triangle
		bs := int(math.Floor(float64(i)*every)) + 1
		be := int(math.Floor(float64(i+1)*every)) + 1
		best, bestArea := bs, -1.0
		pa := pts[a]
		for j := bs; j < be; j++ {
			area := math.Abs((pa.x-mx)*(pts[j].y-pa.y) - (pa.x-pts[j].x)*(my-pa.y))
			if area > bestArea {
				best, bestArea = j, area
			}
		}
		out = append(out, pts[best])
		a = best
	}
	return append(out, pts[len(pts)-1])
}
