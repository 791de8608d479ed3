package ledger

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Canonicalize checks that raw is a JSON object and returns its RFC 8785
// (JCS) canonical form and the SHA-256 of those bytes. The canonical bytes are
// what the ledger stores and what the executor later sends, so two requests
// that differ only in key order or whitespace bind to the same hash.
//
// Canonicalisation never changes a value: a payload with a duplicate key
// (which of the two would be hashed?) or a number whose exact value an
// IEEE-754 double cannot hold is refused with EInvalid naming the path,
// e.g. "payload.items[2].amount".
func Canonicalize(raw []byte) (canonical, hash []byte, err error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, nil, Errorf(EInvalid, "payload is required")
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, nil, Errorf(EInvalid, "payload must be a JSON object")
	}
	if err := checkPayload(trimmed); err != nil {
		return nil, nil, err
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

// NumberAdvice ends every refusal of an inexact number.
const NumberAdvice = `send the number as a JSON string (e.g. "9007199254740993") so that it reaches the target unchanged`

// checkPayload walks a valid JSON document and refuses, by path, what
// canonicalisation would silently change: duplicate keys and inexact
// numbers. Messages name paths, never values.
func checkPayload(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	type frame struct {
		object  bool
		wantKey bool
		key     string
		index   int
		seen    map[string]bool
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		b.WriteString("payload")
		for _, f := range stack {
			if f.object {
				writeKey(&b, f.key)
			} else {
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		return b.String()
	}
	// done marks the value at the top of the stack as complete.
	done := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // syntax: the caller's json.Valid or jcs explains it
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, wantKey: true, seen: map[string]bool{}})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				done()
			}
		case string:
			if top := len(stack) - 1; top >= 0 && stack[top].object && stack[top].wantKey {
				f := &stack[top]
				f.key, f.wantKey = t, false
				// A key decoded with U+FFFD came from invalid UTF-8 or a lone
				// surrogate; jcs refuses those with its own reason.
				if f.seen[t] && !strings.ContainsRune(t, utf8.RuneError) {
					return Errorf(EInvalid, "%s: duplicate key; a payload must name each key once, or its hash would be ambiguous", path())
				}
				f.seen[t] = true
				continue
			}
			done()
		case json.Number:
			if why := NumberProblem(t.String()); why != "" {
				return Errorf(EInvalid, "%s: the number %s; %s", path(), why, NumberAdvice)
			}
			done()
		default:
			done()
		}
	}
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// writeKey appends .key, or ["key"] (quoted, escaped and shortened) for a
// key that is not a plain identifier.
func writeKey(b *strings.Builder, key string) {
	if identRe.MatchString(key) {
		b.WriteString("." + key)
		return
	}
	if r := []rune(key); len(r) > 40 {
		key = string(r[:40]) + "…"
	}
	b.WriteString("[" + strconv.QuoteToASCII(key) + "]")
}
