package main

import (
	"context"
	"time"
)

// withoutCancel gives cleanup its own bounded context after an interrupt.
func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
}
