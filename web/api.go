package web

import (
	"context"
	_ "embed"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"settle/ledger"
	"settle/web/decode"
)

//go:embed openapi.json
var openAPI []byte

// tenantKey is where apiAuth leaves the token's tenant.
const tenantKey = "settle.tenant"

// api is the client API: tokens, creates and reads of one tenant's
// operations, with its limits (each token's rate, creates in progress,
// the body limit).
type api struct {
	store interface {
		Create(ctx context.Context, n ledger.NewOperation) (op ledger.Operation, created bool, err error)
		Summary(ctx context.Context, tenant, id string) (ledger.Operation, error)
		List(ctx context.Context, f ledger.ListFilter) (ledger.Page, error)
	}
	tokens    ledger.TokenStore // the server's TokenCache
	targets   Targets
	now       func() time.Time
	bodyLimit int64
	rates     *tokenRates
	creates   *createSlots
}

func (a *api) routes(e *echo.Echo) {
	e.GET("/api/v1/openapi.json", func(c echo.Context) error {
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPI)
	})
	// The middleware is the routes', not the group's: a group's
	// middleware makes Echo route every path below it, a known path with
	// another method included, to a catch-all 404, where the contract is
	// 405 method_not_allowed with an Allow header.
	api := e.Group("/api/v1")
	api.POST("/operations", a.createOperation, a.apiAuth, a.rateLimit)
	api.GET("/operations", a.listOperations, a.apiAuth, a.rateLimit)
	api.GET("/operations/:id", a.getOperation, a.apiAuth, a.rateLimit)
}

// apiAuth resolves the bearer token to its tenant. The tenant always comes
// from the token, never from the body or the URL.
func (a *api) apiAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The scheme is case-insensitive (RFC 9110, section 11.1).
		scheme, secret, _ := strings.Cut(c.Request().Header.Get(echo.HeaderAuthorization), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return a.unauthorized(c, "missing API token: send Authorization: Bearer <token>")
		}
		tok, err := ledger.Authenticate(c.Request().Context(), a.tokens, strings.TrimSpace(secret), a.now())
		if ledger.ErrorCode(err) == ledger.EUnauthorized {
			return a.unauthorized(c, "invalid or revoked API token")
		}
		if err != nil {
			return err
		}
		c.Set(tenantKey, tok.Tenant)
		c.Set(tokenKey, tok.ID)
		c.Set(tokenRateKey, tok.Rate)
		return next(c)
	}
}

func (a *api) unauthorized(c echo.Context, msg string) error {
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="settle"`)
	return echo.NewHTTPError(http.StatusUnauthorized, msg)
}

func tenantOf(c echo.Context) string { return c.Get(tenantKey).(string) }

// operationJSON is an operation as every API response shows it. It carries
// the payload's hash, never the payload.
type operationJSON struct {
	OperationID   string     `json:"operation_id"`
	Tenant        string     `json:"tenant"`
	Target        string     `json:"target"`
	OperationType string     `json:"operation_type"`
	IntentRef     string     `json:"intent_ref"`
	State         string     `json:"state"`
	Status        string     `json:"status"`
	RemoteKey     string     `json:"remote_key"`
	PayloadHash   string     `json:"payload_hash"`
	RemoteRef     string     `json:"remote_ref,omitempty"`
	Attempts      int        `json:"attempts"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	Deadline      *time.Time `json:"deadline,omitempty"`
}

func (a *api) present(op ledger.Operation) operationJSON {
	var owner string
	if t, ok := a.targets.Target(op.Target); ok {
		owner = t.Owner
	}
	out := operationJSON{
		OperationID: op.ID, Tenant: op.Tenant, Target: op.Target, OperationType: op.Type,
		IntentRef: op.IntentRef, State: string(op.State), Status: op.State.Plain(owner),
		RemoteKey: op.RemoteKey, PayloadHash: hex.EncodeToString(op.PayloadHash),
		Attempts: op.Attempts, CreatedAt: op.CreatedAt, UpdatedAt: op.UpdatedAt, Deadline: op.Deadline,
	}
	if op.State == ledger.Succeeded {
		out.RemoteRef = op.RemoteRef // only a confirmed reference is shown
	}
	return out
}

// createOperation registers an approved operation. The response is written
// only after the ledger row is committed; a client that disconnects does
// not abort a commit in progress.
func (a *api) createOperation(c echo.Context) error {
	req, err := decode.CreateBody(c.Request(), a.bodyLimit)
	if he := (*echo.HTTPError)(nil); errors.As(err, &he) &&
		(he.Code == http.StatusRequestEntityTooLarge || he.Code == http.StatusUnsupportedMediaType) {
		return unread(c, err) // the rest of the body is not wanted
	}
	if err != nil {
		return err
	}
	if err := checkPayloadShape(req.Payload); err != nil {
		return err
	}
	release, err := a.createSlot(c)
	if err != nil {
		return err
	}
	defer release()
	t, ok := a.targets.Target(req.Target)
	if !ok {
		return ledger.Errorf(ledger.EInvalid, "unknown target %q", req.Target)
	}
	n := ledger.NewOperation{
		Tenant: tenantOf(c), Type: req.OperationType, IntentRef: req.IntentRef, Target: req.Target,
		Payload: req.Payload, Deadline: req.At, RetryWindow: t.RetryWindow, Bind: t.Bind,
	}
	if n.Deadline == nil && t.Deadline > 0 {
		d := a.now().Add(t.Deadline)
		n.Deadline = &d
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), 30*time.Second)
	defer cancel()
	// The creation event names this request, as the log line and the
	// client's X-Request-Id do.
	ctx = ledger.NewContextWithRequestID(ctx, c.Response().Header().Get(echo.HeaderXRequestID))
	op, created, err := a.store.Create(ctx, n)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		c.Response().Header().Set(echo.HeaderLocation, "/api/v1/operations/"+op.ID)
	}
	return c.JSON(status, a.present(op))
}

func (a *api) getOperation(c echo.Context) error {
	op, err := a.store.Summary(c.Request().Context(), tenantOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.present(op))
}

type listJSON struct {
	Operations []operationJSON `json:"operations"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

func (a *api) listOperations(c echo.Context) error {
	f := ledger.ListFilter{
		Tenant:    tenantOf(c),
		IntentRef: c.QueryParam("intent_ref"),
		State:     ledger.State(c.QueryParam("state")),
		Cursor:    c.QueryParam("cursor"),
	}
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return ledger.Errorf(ledger.EInvalid, "limit must be an integer between 1 and %d", ledger.MaxListLimit)
		}
		f.Limit = n
	}
	page, err := a.store.List(c.Request().Context(), f)
	if err != nil {
		return err
	}
	out := listJSON{Operations: make([]operationJSON, 0, len(page.Operations)), NextCursor: page.Next}
	for _, op := range page.Operations {
		out.Operations = append(out.Operations, a.present(op))
	}
	return c.JSON(http.StatusOK, out)
}
