package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// apiDoc checks API traffic against the OpenAPI document a running server
// serves: every request to /api/v1 must be a documented operation, and every
// response must have a documented status, headers and body. It remembers
// which (operation, status) pairs it has seen so a test can prove it
// exercised every documented response.
type apiDoc struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options

	mu   sync.Mutex
	seen map[string]bool // "operationId status"
}

// loadAPIDoc fetches /api/v1/openapi.json from the server at base over HTTP.
func loadAPIDoc(t testing.TB, base string) *apiDoc {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json: %d %v", resp.StatusCode, err)
	}
	d, err := parseAPIDoc(body)
	if err != nil {
		t.Fatalf("the served OpenAPI document: %v", err)
	}
	return d
}

func parseAPIDoc(body []byte) (*apiDoc, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(body)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("invalid: %w", err)
	}
	closeResponseSchemas(doc)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	return &apiDoc{doc: doc, router: router, seen: map[string]bool{}, opts: &openapi3filter.Options{
		AuthenticationFunc:    bearerPresent,
		IncludeResponseStatus: true, // an undocumented status is a failure
		MultiError:            true,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.EnableFormatValidation(),
			openapi3.WithStringFormatValidator("uuid",
				openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
		},
	}}, nil
}

// closeResponseSchemas makes every object schema of a response refuse
// properties it does not name. Clients must tolerate new fields, but the
// server must not send a field its document does not describe; this holds
// the server (not the published document) to that.
func closeResponseSchemas(doc *openapi3.T) {
	done := map[*openapi3.Schema]bool{}
	var walk func(*openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || done[ref.Value] {
			return
		}
		s := ref.Value
		done[s] = true
		if s.Type.Is(openapi3.TypeObject) && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			no := false
			s.AdditionalProperties.Has = &no
		}
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				for _, mt := range r.Value.Content {
					walk(mt.Schema)
				}
			}
		}
	}
}

// bearerPresent is the document's one security scheme, checked for form
// only: whether the token is good is the server's to say (401).
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecurityScheme.Type != "http" || !strings.EqualFold(in.SecurityScheme.Scheme, "bearer") {
		return in.NewError(fmt.Errorf("unexpected security scheme %s/%s", in.SecurityScheme.Type, in.SecurityScheme.Scheme))
	}
	scheme, token, _ := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return in.NewError(fmt.Errorf("no bearer token"))
	}
	return nil
}

// check validates one exchange. Requests outside /api/v1 are not the
// document's business. A request may break the document on purpose (a
// test of the server's refusals), but then the server must refuse it; a
// request the document allows must never be refused as malformed.
func (d *apiDoc) check(req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) error {
	if !strings.HasPrefix(req.URL.Path, "/api/v1/") {
		return nil
	}
	route, params, err := d.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s is not in the document: %w", req.Method, req.URL.Path, err)
	}
	r := req.Clone(context.Background())
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(reqBody)), nil }
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: d.opts}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	if reqErr == nil && len(reqBody) > 0 && isJSON(req.Header.Get("Content-Type")) && !json.Valid(reqBody) {
		// kin-openapi reads the first JSON value and ignores the rest;
		// a body with trailing data is no JSON document.
		reqErr = fmt.Errorf("the body is not one JSON value")
	}
	if reqErr == nil && len(reqBody) > 0 && isJSON(req.Header.Get("Content-Type")) {
		// kin-openapi keeps the last of two same-named fields; the
		// document's objects have each field once.
		if name, dup := duplicateField(reqBody); dup {
			reqErr = fmt.Errorf("field %q appears twice", name)
		}
	}
	switch {
	case reqErr != nil && status < 400:
		return fmt.Errorf("the server answered %d to a request the document forbids (%v): %s", status, reqErr, respBody)
	case reqErr == nil && (status == http.StatusBadRequest || status == http.StatusUnsupportedMediaType):
		return fmt.Errorf("the server refused a request the document allows with %d: %s", status, respBody)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header,
		Body: io.NopCloser(bytes.NewReader(respBody)), Options: d.opts}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("response %d is not as documented: %w\nbody: %s", status, err, respBody)
	}
	d.mu.Lock()
	d.seen[route.Operation.OperationID+" "+strconv.Itoa(status)] = true
	d.mu.Unlock()
	return nil
}

// duplicateField reports a top-level field named twice in a JSON object.
func duplicateField(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		name, _ := tok.(string)
		if seen[name] {
			return name, true
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// unexercised lists the documented (operation, status) pairs not yet seen.
func (d *apiDoc) unexercised() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, item := range d.doc.Paths.Map() {
		for _, op := range item.Operations() {
			for status := range op.Responses.Map() {
				if k := op.OperationID + " " + status; !d.seen[k] {
					out = append(out, k)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// checkingTransport passes every exchange through an apiDoc; a violation
// fails t (Errorf is safe from the goroutines some tests send from).
type checkingTransport struct {
	t    testing.TB
	doc  *apiDoc
	next http.RoundTripper
}

func (c checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	out := req.Clone(req.Context())
	out.Body = http.NoBody
	if len(body) > 0 {
		out.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := c.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if err := c.doc.check(req, body, resp.StatusCode, resp.Header, respBody); err != nil {
		c.t.Errorf("OpenAPI: %s %s: %v", req.Method, req.URL.RequestURI(), err)
	}
	return resp, nil
}
