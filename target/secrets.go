package target

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// Secrets holds the credentials of the targets whose contracts have an
// auth block, and the signing keys of owner notifications (owner.notify),
// read once at start-up by ReadSecrets. Its values never leave
// it except into the credential header of a request: it formats as
// redacted with every fmt verb, marshals to JSON as redacted and logs
// (slog) as redacted, so that printing a configuration cannot leak one.
// The zero value and nil hold none.
type Secrets struct {
	byTarget map[string]string
	notify   map[string][]byte // target → owner notification signing key
}

// ReadSecrets reads the secret of every contract with an auth block, and
// the signing key (at least 32 bytes) of every owner.notify block, from
// the environment variable the contract names, through getenv (os.Getenv in
// production). A missing or unusable secret stops start-up, as a missing
// webhook secret does, rather than leaving a target every send to which
// would be escalated unsent. Errors name the target and the variable, never
// a value.
func ReadSecrets(set *Set, getenv func(string) string) (*Secrets, error) {
	if getenv == nil {
		return nil, errors.New("target: ReadSecrets needs a getenv function")
	}
	s := &Secrets{byTarget: map[string]string{}, notify: map[string][]byte{}}
	if set == nil {
		return s, nil
	}
	for _, name := range set.names {
		c := set.byName[name]
		if c.Owner.Notify != nil {
			env := c.Owner.Notify.SecretEnv
			v := getenv(env)
			if len(strings.TrimSpace(v)) < 32 {
				return nil, fmt.Errorf("target %s: owner notify secret environment variable %s is not set or shorter than 32 bytes", name, env)
			}
			s.notify[name] = []byte(v)
		}
		if c.Auth == nil {
			continue
		}
		v := getenv(c.Auth.SecretEnv)
		switch {
		case strings.TrimSpace(v) == "":
			return nil, fmt.Errorf("target %s: auth secret environment variable %s is not set", name, c.Auth.SecretEnv)
		case controlChar(v):
			return nil, fmt.Errorf("target %s: auth secret environment variable %s holds a line break or another control character; a header cannot carry it",
				name, c.Auth.SecretEnv)
		case c.Auth.Scheme == AuthBasic && !strings.Contains(v, ":"):
			return nil, fmt.Errorf("target %s: auth secret environment variable %s must hold user:password for the Basic scheme (settle base64-encodes it)",
				name, c.Auth.SecretEnv)
		}
		s.byTarget[name] = v
	}
	return s, nil
}

// secret returns the target's credential, or "" when none was loaded.
func (s *Secrets) secret(target string) string {
	if s == nil {
		return ""
	}
	return s.byTarget[target]
}

// NotifySecret returns the key that signs the target's owner
// notifications, or nil when none was loaded.
func (s *Secrets) NotifySecret(target string) []byte {
	if s == nil {
		return nil
	}
	return s.notify[target]
}

// redacted is what a Secrets prints as.
func (s Secrets) redacted() string {
	return fmt.Sprintf("target.Secrets{%d redacted}", len(s.byTarget))
}

// Format prints the number of secrets, never one, whatever the verb.
// Value receivers cover a Secrets printed by value as well as through a
// pointer: fmt would otherwise print the unexported map's contents.
func (s Secrets) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.redacted())) }

// String is the redacted form.
func (s Secrets) String() string { return s.redacted() }

// GoString is the redacted form, for %#v.
func (s Secrets) GoString() string { return s.redacted() }

// MarshalJSON writes "redacted", never a value.
func (s Secrets) MarshalJSON() ([]byte, error) { return []byte(`"redacted"`), nil }

// LogValue logs the redacted form.
func (s Secrets) LogValue() slog.Value { return slog.StringValue(s.redacted()) }
