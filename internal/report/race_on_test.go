//go:build race

package report

// raceDetector: the tests run under -race (make test's unit pass).
const raceDetector = true
