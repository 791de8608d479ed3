package target

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Sign returns the signature header value settle uses and verifies for
// webhooks and client callbacks: "t=<unix seconds>,v1=<hex HMAC-SHA256 of
// "<t>.<body>">". Signing the timestamp with the body lets a receiver refuse
// replays of old deliveries.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Signature verification failures. Their text is safe to count and log.
var (
	ErrSignatureMissing = errors.New("signature missing or malformed")
	ErrSignatureInvalid = errors.New("signature does not match")
	ErrSignatureExpired = errors.New("signature timestamp outside the tolerance")
)

// parseSignature splits a signature header into its signed time and its
// v1 signatures; ok is false when it holds no time or no signature.
func parseSignature(header string) (ts string, unix int64, sigs [][]byte, ok bool) {
	for _, part := range strings.Split(header, ",") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	return ts, unix, sigs, err == nil && len(sigs) > 0
}

// CheckSignatureHeader returns ErrSignatureMissing for a header Verify
// could never accept, whatever the body. It needs no body, so a receiver
// can refuse an unsigned delivery before reading (and holding) one.
func CheckSignatureHeader(header string) error {
	if _, _, _, ok := parseSignature(header); !ok {
		return ErrSignatureMissing
	}
	return nil
}

// Verify checks a signature header against body: the HMAC must match (any
// of several v1 values, so a sender can rotate secrets) and the signed time
// must be within tolerance of now, in either direction.
func Verify(header string, body, secret []byte, tolerance time.Duration, now time.Time) error {
	ts, unix, sigs, ok := parseSignature(header)
	if !ok || len(secret) == 0 {
		return ErrSignatureMissing
	}
	want := mac(secret, ts, body)
	matched := false
	for _, s := range sigs {
		matched = matched || hmac.Equal(s, want)
	}
	if !matched {
		return ErrSignatureInvalid
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return ErrSignatureExpired
	}
	return nil
}
