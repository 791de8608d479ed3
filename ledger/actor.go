package ledger

import (
	"context"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
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

// NormalizeSubject is the one form in which a person's subject is recorded
// and compared: surrounding white space removed and Unicode in NFC. The
// console's sign-in passes every subject through it and the CLI passes
// --as through it, so "oidc:ada " and "oidc:ada" are one person wherever
// they were typed. Case is kept: a provider's subject is case-sensitive.
func NormalizeSubject(s string) string {
	return norm.NFC.String(strings.TrimSpace(s))
}

// cliAs separates the operator's OS user from the person they act as in
// a CLI subject ("cli:ops as oidc:ada").
const cliAs = " as "

// CLISubject is the subject the CLI records for the operating-system user
// osUser acting as the console person person: "cli:<osUser> as <person>".
// The OS user says who ran the command; the person is whom the two-person
// rule counts.
func CLISubject(osUser, person string) string {
	return "cli:" + osUser + cliAs + NormalizeSubject(person)
}

// PersonOf is the person a subject stands for, normalised: the console
// person a CLI subject acts as, or the subject itself. The two-person rule
// compares PersonOf of proposer and approver, so that a person cannot
// approve their own console proposal from the CLI, nor the reverse.
func PersonOf(subject string) string {
	if rest, ok := strings.CutPrefix(subject, "cli:"); ok {
		if _, person, ok := strings.Cut(rest, cliAs); ok {
			return NormalizeSubject(person)
		}
	}
	return NormalizeSubject(subject)
}

// SamePerson reports whether two subjects stand for the same person.
func SamePerson(a, b string) bool { return PersonOf(a) == PersonOf(b) }

// IsConsolePerson reports whether subject, normalised, has the form of a
// person the console signs in: "oidc:<sub>" or "demo:<user>".
func IsConsolePerson(subject string) bool {
	s := NormalizeSubject(subject)
	for _, p := range []string{"oidc:", "demo:"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return rest != "" && len(s) <= 300 && !strings.ContainsFunc(s, unicode.IsControl)
		}
	}
	return false
}

// PersonStore tells whether the ledger knows a console person. Both
// stores implement it.
type PersonStore interface {
	// KnownPerson reports whether subject (normalised, of the console's
	// form) has signed in to the console — it has a session row, which
	// only a verified sign-in creates — or has recorded an action in the
	// tenant from the console. The CLI's --as must name such a person.
	KnownPerson(ctx context.Context, tenant, subject string) (bool, error)
}
