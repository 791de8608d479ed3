package target

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"settle/ledger"
)

// Content types of create bodies.
const (
	ContentTypeJSON = "application/json"
	ContentTypeForm = "application/x-www-form-urlencoded"
)

// CreateBody returns the bytes a create request carries and their content
// type, for the approved canonical payload: body_fields are filled in from
// params and written into the JSON, which is canonicalised again (RFC
// 8785), then encoded as the contract's encoding says. The stored payload
// and its hash are not touched: they stay what the client approved. Equal
// inputs give equal bytes, so a replay sends what the first send sent as
// long as the tenant's parameters are unchanged. Without body_fields and
// with JSON encoding the payload is sent as it is.
//
// An error means the request must not be sent: a parameter is missing, the
// payload already holds a body field's path, or it cannot be form-encoded.
// It names parameters and field paths, never values.
func (c *Contract) CreateBody(payload []byte, params map[string]string) (contentType string, body []byte, err error) {
	body = payload
	if len(c.BodyFields) > 0 {
		fields := make([]boundField, 0, len(c.BodyFields))
		for _, f := range c.BodyFields {
			v, missing := f.Value.expand(params)
			if len(missing) > 0 {
				return "", nil, fmt.Errorf("body field %s needs the tenant parameter %s", f.Path, strings.Join(missing, ", "))
			}
			fields = append(fields, boundField{path: f.Path, value: v, what: "a body field (body_fields)"})
		}
		// inject's and Canonicalize's errors name paths, never values.
		withFields, err := inject(payload, fields)
		if err != nil {
			return "", nil, fmt.Errorf("body fields: %s", safeMessage(err))
		}
		if body, _, err = ledger.Canonicalize(withFields); err != nil {
			return "", nil, fmt.Errorf("body fields: %s", safeMessage(err))
		}
	}
	if c.Encoding != EncodingForm {
		return ContentTypeJSON, body, nil
	}
	form, err := FormEncode(body)
	if err != nil {
		return "", nil, err
	}
	return ContentTypeForm, form, nil
}

// safeMessage is a domain error's message, or the text of an error from
// this package's JSON helpers, which name paths only.
func safeMessage(err error) string {
	if ledger.ErrorCode(err) != ledger.EInternal {
		return ledger.ErrorMessage(err)
	}
	return err.Error()
}

// headers returns the headers every request to the target carries: Accept,
// the contract's headers with params filled in, and the credential. A
// parameter missing here was reported before; a value with a control
// character (which would start another header) is an error naming the
// parameter, never the value.
func (c *Contract) headers(params map[string]string, secret string) (http.Header, error) {
	h := http.Header{"Accept": {"application/json"}}
	for _, hd := range c.Headers {
		v, missing := hd.Value.expand(params)
		if len(missing) > 0 {
			return nil, fmt.Errorf("header %s needs the tenant parameter %s", hd.Name, strings.Join(missing, ", "))
		}
		if controlChar(v) {
			return nil, fmt.Errorf("header %s: a tenant parameter it names (%s) holds a control character, which no header may carry",
				hd.Name, strings.Join(hd.Value.Params(), ", "))
		}
		h.Set(hd.Name, v)
	}
	if c.Auth != nil {
		if secret == "" {
			return nil, errors.New("no credential loaded")
		}
		h.Set(c.Auth.Header, authValue(c.Auth.Scheme, secret))
	}
	return h, nil
}

// authValue is the credential header's value. For Basic the secret holds
// "user:password", as curl -u takes it, and is base64-encoded here.
func authValue(scheme, secret string) string {
	switch scheme {
	case AuthBearer:
		return "Bearer " + secret
	case AuthBasic:
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(secret))
	}
	return secret
}

// checkBodyFields refuses, at registration, a payload that already holds a
// body field's path or cannot hold it (a parent that is not an object):
// settle writes body fields at send time, and such a payload could never
// be sent.
func (c *Contract) checkBodyFields(v any) error {
	root, ok := v.(map[string]any)
	if !ok {
		return nil // refused elsewhere
	}
	for _, f := range c.BodyFields {
		m := root
		segs := strings.Split(f.Path, ".")
		for i, seg := range segs {
			next, exists := m[seg]
			if !exists {
				break
			}
			if i == len(segs)-1 {
				return ledger.Errorf(ledger.EInvalid,
					"payload.%s is set, but settle writes it at send time from the tenant's parameters (target %s, body_fields); leave it out of the payload", f.Path, c.Name)
			}
			if m, ok = next.(map[string]any); !ok {
				return ledger.Errorf(ledger.EInvalid,
					"payload.%s is %s, not an object, so settle cannot write body field %s at send time (target %s); send it as an object or leave it out",
					strings.Join(segs[:i+1], "."), jsonKind(next), f.Path, c.Name)
			}
		}
	}
	return nil
}
