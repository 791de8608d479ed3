package ledger

import (
	"context"
	"encoding/json"
)

type requestIDKey struct{}

// NewContextWithRequestID returns ctx carrying the id of the request that
// causes what a store does with it, so that the events it records name the
// request (an API create's creation event), tying the ledger to the log
// lines and to the X-Request-Id the client was given.
func NewContextWithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFromContext returns the request id ctx carries, or "" when it
// carries none or one that is not a plain id (1–64 of [A-Za-z0-9-], what the
// web server keeps or makes): the event log stores only plain values.
func RequestIDFromContext(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	if len(id) == 0 || len(id) > 64 {
		return ""
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return ""
		}
	}
	return id
}

// CreationEvidence is the evidence of an operation's creation event:
// {"request_id": …} when ctx carries a request id, else {}.
func CreationEvidence(ctx context.Context) []byte {
	id := RequestIDFromContext(ctx)
	if id == "" {
		return []byte("{}")
	}
	b, _ := json.Marshal(map[string]string{"request_id": id}) // a map of strings always marshals
	return b
}
