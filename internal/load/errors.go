package load

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/kcbench/kcbench/internal/results"
)

// Error classes reported in OpStats.ErrorClasses. HTTP status errors are
// reported as "http_<code>", e.g. "http_401".
const (
	ClassTimeout     = results.ErrorClassTimeout // a deadline passed: context, socket or client timeout
	ClassConnRefused = "conn_refused"            // the target refused the connection
	ClassConnReset   = "conn_reset"              // the target reset or broke the connection
	ClassCheck       = "check"                   // a scenario check failed (CheckError)
	ClassMalformed   = "malformed"               // an answer not well-formed: HTTP framing, or not the document expected (MalformedError)
	ClassOther       = "other"                   // anything else
)

// CheckError reports that a scenario check failed, for instance a response
// that lacked an expected token. Classify counts it as ClassCheck.
type CheckError struct {
	Check string // what was checked, e.g. "access_token present"
}

func (e CheckError) Error() string { return "check failed: " + e.Check }

// failedCheck marks CheckError and *CheckError for classify's errors.As.
func (CheckError) failedCheck() {}

// MalformedError reports an answer that is not what a well-formed one of
// its kind is, for instance not a JSON object where one is expected.
// Classify counts it as ClassMalformed, and so any error in the chain
// with a method Malformed() bool that returns true (h1.MalformedError:
// broken HTTP framing).
type MalformedError struct {
	What string // what came instead, e.g. "not a JSON object"
}

func (e MalformedError) Error() string { return "malformed answer: " + e.What }

// Malformed reports true.
func (MalformedError) Malformed() bool { return true }

// class is the compact error classification stored with each sample:
// classNone for success, small values for the named classes, and
// classHTTP+code for HTTP statuses.
type class uint16

const (
	classNone class = iota
	classOther
	classTimeout
	classConnRefused
	classConnReset
	classCheck
	classMalformed
	classHTTP class = 1000 // + status code 0..999
)

func (c class) String() string {
	switch {
	case c == classNone:
		return ""
	case c == classTimeout:
		return ClassTimeout
	case c == classConnRefused:
		return ClassConnRefused
	case c == classConnReset:
		return ClassConnReset
	case c == classCheck:
		return ClassCheck
	case c == classMalformed:
		return ClassMalformed
	case c >= classHTTP:
		return "http_" + strconv.Itoa(int(c-classHTTP))
	default:
		return ClassOther
	}
}

// Classify returns the error class of err: "" for nil, "http_<code>" for an
// error with an HTTP status, or one of the Class constants. It recognises
// any error in the chain that has a method HTTPStatus() int (kc.APIError),
// so that an HTTP client's own error type is classified without importing
// this package. Likewise an error with a method ConnectionBroken() bool
// that returns true (the server closed the connection before the end of
// its answer, as h1.ClosedError) is ClassConnReset.
func Classify(err error) string { return classify(err).String() }

func classify(err error) class {
	if err == nil {
		return classNone
	}
	var hs interface{ HTTPStatus() int }
	if errors.As(err, &hs) {
		if code := hs.HTTPStatus(); code >= 0 && code < 1000 {
			return classHTTP + class(code)
		}
		return classOther
	}
	var ce interface{ failedCheck() }
	if errors.As(err, &ce) {
		return classCheck
	}
	var me interface{ Malformed() bool }
	if errors.As(err, &me) && me.Malformed() {
		return classMalformed
	}
	var cb interface{ ConnectionBroken() bool }
	if errors.As(err, &cb) && cb.ConnectionBroken() {
		return classConnReset
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return classConnRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return classConnReset
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return classTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return classTimeout
	}
	// net/http's and httputil's framing errors are not typed.
	if msg := err.Error(); strings.Contains(msg, "malformed HTTP") || strings.Contains(msg, "malformed chunked encoding") {
		return classMalformed
	}
	return classOther
}
