package ledger

import (
	"context"
	"strings"
)

// Actor is the person behind a human action: a proposal, an approval, a
// quarantine decision, a token or callback change. The two-person rule
// compares Subjects, never display names, so that two people who share a
// name stay two people and one person under two names stays one.
type Actor struct {
	// Subject is the stable identity: "oidc:" + the provider's subject
	// claim for a console user, "cli:" + the operator's name for the CLI,
	// "demo:" + the user for the demo sign-in.
	Subject string
	// Name is what people reading the log see ("Ada Lovelace").
	Name string
	// Role is the role the action was taken under ("owner", "admin", …).
	Role string
	// RequestID ties the action to the request that carried it; "" from
	// the CLI.
	RequestID string
}

// Validate reports whether the actor can be recorded.
func (a Actor) Validate() error {
	switch {
	case a.Subject == "" || len(a.Subject) > 300 || !strings.Contains(a.Subject, ":"):
		return Errorf(EInvalid, "an action needs who acts: a stable subject such as oidc:… or cli:…")
	case len(a.Name) > 200:
		return Errorf(EInvalid, "the actor's display name must be at most 200 characters")
	case a.Role == "" || len(a.Role) > 40:
		return Errorf(EInvalid, "an action needs the role it is taken under")
	case len(a.RequestID) > 200:
		return Errorf(EInvalid, "the request id must be at most 200 characters")
	}
	return nil
}

type actorKey struct{}

// NewContextWithActor returns ctx carrying the actor of the human action
// being served. Store methods that record human actions read it from there.
func NewContextWithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFromContext returns the actor ctx carries, if any.
func ActorFromContext(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}

// ActorOf returns the validated actor ctx carries, or EInvalid.
func ActorOf(ctx context.Context) (Actor, error) {
	a, ok := ActorFromContext(ctx)
	if !ok {
		return Actor{}, Errorf(EInvalid, "an action needs who acts")
	}
	return a, a.Validate()
}
