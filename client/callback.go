package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Request headers of settle's client callbacks.
const (
	// SignatureHeader carries "t=<unix seconds>,v1=<hex HMAC-SHA256 of
	// "<t>.<body>" keyed with the callback secret>".
	SignatureHeader = "Settle-Signature"
	// EventIDHeader identifies a notification; it is the same on every
	// retry of it, so a receiver de-duplicates on it. It is not covered by
	// the signature.
	EventIDHeader = "Settle-Event-Id"
)

// Why a callback's signature is refused. Their text names no secret.
var (
	ErrSignatureMissing = errors.New("settle callback: signature missing or malformed")
	ErrSignatureInvalid = errors.New("settle callback: signature does not match")
	ErrSignatureExpired = errors.New("settle callback: signature timestamp outside the tolerance")
)

// VerifyCallback checks a callback's Settle-Signature header against its
// raw body and secret (the text `settle callback set` printed, as bytes),
// and that its timestamp is within tolerance of now, either way. It
// returns nil, ErrSignatureMissing, ErrSignatureInvalid or
// ErrSignatureExpired (checked last: an expired but genuine signature is
// told apart from a forged one).
func VerifyCallback(secret []byte, header string, body []byte, tolerance time.Duration) error {
	return verifyAt(secret, header, body, tolerance, time.Now())
}

func verifyAt(secret []byte, header string, body []byte, tolerance time.Duration, now time.Time) error {
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case !ok:
		case k == "t":
			ts = v
		case k == "v1":
			if b, err := hex.DecodeString(v); err == nil && len(b) == sha256.Size {
				sigs = append(sigs, b)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 || len(secret) == 0 {
		return ErrSignatureMissing
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	want := m.Sum(nil)
	matched := false
	for _, s := range sigs {
		matched = hmac.Equal(s, want) || matched
	}
	if !matched {
		return ErrSignatureInvalid
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return ErrSignatureExpired
	}
	return nil
}
