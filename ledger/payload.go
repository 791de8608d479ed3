package ledger

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"

	"github.com/gowebpki/jcs"
)

// Canonicalize checks that raw is a JSON object and returns its RFC 8785
// (JCS) canonical form and the SHA-256 of those bytes. The canonical bytes are
// what the ledger stores and what the executor later sends, so two requests
// that differ only in key order or whitespace bind to the same hash.
func Canonicalize(raw []byte) (canonical, hash []byte, err error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, nil, Errorf(EInvalid, "payload is required")
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, nil, Errorf(EInvalid, "payload must be a JSON object")
	}
	canonical, err = jcs.Transform(trimmed)
	if err != nil {
		return nil, nil, Errorf(EInvalid, "payload cannot be canonicalised: %s", jcsReason(err))
	}
	sum := sha256.Sum256(canonical)
	return canonical, sum[:], nil
}

// HashMatches reports whether payload hashes to hash. Executors call it on
// the bytes they are about to send (rule 2: re-verify at claim time).
func HashMatches(payload, hash []byte) bool {
	sum := sha256.Sum256(payload)
	return len(hash) == len(sum) && subtle.ConstantTimeCompare(sum[:], hash) == 1
}

// jcsReason keeps the library's message but drops anything after a colon,
// which may quote payload content.
func jcsReason(err error) string {
	msg := err.Error()
	if i := bytes.IndexByte([]byte(msg), ':'); i > 0 {
		return msg[:i]
	}
	return msg
}
