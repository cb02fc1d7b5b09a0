package experiment

import "testing"

// FuzzParseBytes: accepted sizes are positive and at most MaxBytes.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"8GiB", "6000MiB", "512MB", "1g", "1.5 GiB", "8xGiB", "1e300GiB", "-1g", "NaNg", "Infm"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseBytes(s); err == nil && (n <= 0 || n > MaxBytes) {
			t.Fatalf("%q: %d", s, n)
		}
		if p, err := ParsePercent(s); err == nil && !(p >= 0 && p <= 1) {
			t.Fatalf("%q: %g", s, p)
		}
	})
}
