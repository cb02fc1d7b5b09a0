package report

import "testing"

// skipUnderRace skips a browser test of a static page under the race
// detector: make test runs it again without (its integration pass), and
// the static pages have no Go code running while the browser works. The
// live dashboard's test runs under both.
func skipUnderRace(t *testing.T) {
	if raceDetector {
		t.Skip("a static page in the browser: run without -race (make test's integration pass)")
	}
}

// skipBuildUnderRace skips a test that builds whole reports from big
// fixtures under the race detector: Build and its charts run on the test's
// goroutine alone, so the detector has nothing to watch, and it makes them
// ten times slower (TestReferences: 4.7 s alone, 56 s in the race pass).
// make test's integration pass runs them without it.
func skipBuildUnderRace(t *testing.T) {
	if raceDetector {
		t.Skip("builds whole reports on one goroutine: run without -race (make test's integration pass)")
	}
}
