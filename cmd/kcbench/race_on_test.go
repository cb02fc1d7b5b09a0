//go:build race

package main

// raceDetector: the tests run under -race (make test's unit pass).
const raceDetector = true
