package main

import (
	"context"
	"net/http"
	"time"
)

// withoutCancel gives cleanup its own bounded context after an interrupt.
func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
}

type httpClient = http.Client

func newHTTPClient(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // loopback and known targets: never through a proxy
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Timeout: timeout, Transport: tr}
}
