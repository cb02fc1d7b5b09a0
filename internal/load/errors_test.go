package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// apiError stands for an HTTP client's own error type, such as kc.APIError.
type apiError struct{ status int }

func (e *apiError) Error() string   { return fmt.Sprintf("api: status %d", e.status) }
func (e *apiError) HTTPStatus() int { return e.status }

// closedError stands for an HTTP client's error for a connection the
// server closed mid-answer, such as h1.ClosedError.
type closedError struct{ broken bool }

func (e closedError) Error() string          { return "server closed the connection" }
func (e closedError) Unwrap() error          { return io.ErrUnexpectedEOF }
func (e closedError) ConnectionBroken() bool { return e.broken }

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// malformedError stands for an HTTP client's own framing error type.
type malformedError struct{}

func (malformedError) Error() string   { return "bad framing" }
func (malformedError) Malformed() bool { return true }

func TestClassify(t *testing.T) {
	t.Parallel()
	opErr := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://127.0.0.1:1/token", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"status", StatusError{Code: 401}, "http_401"},
		{"wrapped status", fmt.Errorf("token: %w", StatusError{Code: 503}), "http_503"},
		{"status pointer", &StatusError{Code: 404}, "http_404"},
		{"foreign status", fmt.Errorf("login: %w", &apiError{409}), "http_409"},
		{"silly status", StatusError{Code: 12345}, ClassOther},
		{"check", CheckError{Check: "access_token present"}, ClassCheck},
		{"wrapped check pointer", fmt.Errorf("x: %w", &CheckError{Check: "y"}), ClassCheck},
		{"refused", opErr(syscall.ECONNREFUSED), ClassConnRefused},
		{"reset", opErr(syscall.ECONNRESET), ClassConnReset},
		{"broken pipe", opErr(syscall.EPIPE), ClassConnReset},
		{"context deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), ClassTimeout},
		{"os deadline", os.ErrDeadlineExceeded, ClassTimeout},
		{"net timeout", &url.Error{Op: "Get", URL: "u", Err: timeoutError{}}, ClassTimeout},
		{"canceled", context.Canceled, ClassOther},
		{"eof", io.ErrUnexpectedEOF, ClassOther},
		{"closed mid-answer", &url.Error{Op: "Get", URL: "u", Err: closedError{broken: true}}, ClassConnReset},
		{"not broken", closedError{}, ClassOther},
		{"plain", errors.New("boom"), ClassOther},
		{"malformed", fmt.Errorf("jwks: %w", MalformedError{What: "not a JSON object"}), ClassMalformed},
		{"foreign malformed", &url.Error{Op: "Get", URL: "u", Err: malformedError{}}, ClassMalformed},
		{"net/http framing", errors.New(`Get "u": net/http: HTTP/1.x transport connection broken: malformed HTTP response "garbage"`), ClassMalformed},
		{"chunked framing", errors.New("malformed chunked encoding"), ClassMalformed},
		{"joined status first", errors.Join(StatusError{Code: 500}, context.DeadlineExceeded), "http_500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	if got, want := (StatusError{Code: 401}).Error(), "unexpected HTTP status 401 Unauthorized"; got != want {
		t.Errorf("StatusError.Error() = %q, want %q", got, want)
	}
	if got, want := (CheckError{Check: "token"}).Error(), "check failed: token"; got != want {
		t.Errorf("CheckError.Error() = %q, want %q", got, want)
	}
}

// StatusError is an unexpected HTTP status, as an HTTP client's error
// type has it: Classify counts it as "http_<Code>".
type StatusError struct {
	Code int
}

func (e StatusError) Error() string {
	return "unexpected HTTP status " + strconv.Itoa(e.Code) + " " + http.StatusText(e.Code)
}

// HTTPStatus returns e.Code.
func (e StatusError) HTTPStatus() int { return e.Code }
