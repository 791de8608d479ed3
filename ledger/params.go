package ledger

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Tenant parameters are named values a target contract places into the
// requests it sends for one tenant — the connected account a platform acts
// for (Stripe-Account: acct_…), say — through {tenant.NAME} templates. They
// are not secrets: people read them in the CLI and the console. They are
// never logged, and no error or recorded action quotes a value.

// Limits of tenant parameters.
const (
	MaxTenantParams     = 32  // parameters per tenant
	MaxTenantParamValue = 256 // characters (Unicode code points) of one value
)

// The record of human actions names each parameter changed; never its value.
const (
	ActionTenantParamSet   ActionKind = "tenant_param.set"
	ActionTenantParamUnset ActionKind = "tenant_param.unset"
)

// paramNameRe is what the contracts' {tenant.NAME} placeholders accept.
var paramNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// ValidTenantParamName reports whether s is an acceptable parameter name:
// a lower-case letter, then up to 31 lower-case letters, digits or '_'.
func ValidTenantParamName(s string) bool { return paramNameRe.MatchString(s) }

// TenantParam is one named request parameter of a tenant.
type TenantParam struct {
	Name      string
	Value     string
	UpdatedAt time.Time // when it last got this value
}

// TenantParamStore keeps tenants' named request parameters. Both stores
// implement it; the sender reads them (target.ParamSource has TenantParams'
// signature) and operators change them (settle tenant set|unset).
type TenantParamStore interface {
	// TenantParams returns the tenant's named request parameters (empty
	// map, not an error, when none). EInvalid for an invalid tenant.
	TenantParams(ctx context.Context, tenant string) (map[string]string, error)
	// SetTenantParams sets and unsets parameters of one tenant in one
	// transaction, recording an action by the context's actor for each
	// parameter it changes, by SetTenantParamsIn's rules: EInvalid for an
	// invalid change (ValidateTenantParams), too many parameters or no
	// actor; EConflict when it would change or remove a value while the
	// tenant has unfinished operations, unless force. Setting a value a
	// parameter already has, or unsetting one the tenant does not have,
	// changes and records nothing.
	SetTenantParams(ctx context.Context, tenant string, set map[string]string, unset []string, force bool) error
}

// TenantParamLister lists a tenant's parameters with the time each got its
// value, for people (settle tenant show, the console's admin page).
type TenantParamLister interface {
	// ListTenantParams returns the tenant's parameters by name; none is an
	// empty list, not an error. EInvalid for an invalid tenant.
	ListTenantParams(ctx context.Context, tenant string) ([]TenantParam, error)
}

// CheckTenantParamValue validates one value: 1 to MaxTenantParamValue
// printable characters of valid UTF-8 — no control or format character,
// no line break, no space other than U+0020 — and no leading or trailing
// space. The message names the parameter, never the value.
func CheckTenantParamValue(name, value string) error {
	switch {
	case value == "" || !utf8.ValidString(value) || utf8.RuneCountInString(value) > MaxTenantParamValue:
		return Errorf(EInvalid, "parameter %s: the value must be 1-%d characters of valid UTF-8", name, MaxTenantParamValue)
	case strings.IndexFunc(value, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return Errorf(EInvalid, "parameter %s: the value must be printable characters only (no control characters, line breaks or tabs)", name)
	case strings.TrimSpace(value) != value:
		return Errorf(EInvalid, "parameter %s: the value must not begin or end with a space", name)
	}
	return nil
}

// ValidateTenantParams checks a change before any store is touched: a
// valid tenant, at least one parameter, valid names (an invalid name is not
// quoted: it may be a value typed in the wrong place) and values, no name
// both set and unset, and at most MaxTenantParams of each.
func ValidateTenantParams(tenant string, set map[string]string, unset []string) error {
	if !ValidTenant(tenant) {
		return Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	switch {
	case len(set) == 0 && len(unset) == 0:
		return Errorf(EInvalid, "name at least one parameter to set or unset")
	case len(set) > MaxTenantParams || len(unset) > MaxTenantParams:
		return Errorf(EInvalid, "at most %d parameters may be set, or unset, at once", MaxTenantParams)
	}
	for _, name := range sortedKeys(set) {
		if !ValidTenantParamName(name) {
			return invalidParamName()
		}
		if err := CheckTenantParamValue(name, set[name]); err != nil {
			return err
		}
	}
	for _, name := range unset {
		if !ValidTenantParamName(name) {
			return invalidParamName()
		}
		if _, ok := set[name]; ok {
			return Errorf(EInvalid, "parameter %s is both set and unset", name)
		}
	}
	return nil
}

func invalidParamName() error {
	return Errorf(EInvalid, "a parameter name must be a lower-case letter, then up to 31 of a-z, 0-9 and '_'")
}

// ParamDriver is the SQL of tenant_params.
type ParamDriver interface {
	// TenantParamList returns the tenant's parameters by name.
	TenantParamList(ctx context.Context, tenant string) ([]TenantParam, error)
	// TenantParamLock holds off other changes of the tenant's parameters
	// until the transaction of WithTx ends, so that the limit and the guard
	// of a change see what stands (a lock on rows would miss the ones a
	// first-time set is about to insert).
	TenantParamLock(ctx context.Context, tenant string) error
	// TenantParamPut inserts the parameter, or gives it its value, at
	// p.UpdatedAt.
	TenantParamPut(ctx context.Context, tenant string, p TenantParam) error
	TenantParamDelete(ctx context.Context, tenant, name string) error
	// OperationCountInStates counts the tenant's operations in one of
	// states, up to limit: limit means "limit or more".
	OperationCountInStates(ctx context.Context, tenant string, states []State, limit int) (int, error)
}

// TenantParams implements TenantParamStore.
func (l *Ledger) TenantParams(ctx context.Context, tenant string) (map[string]string, error) {
	ps, err := l.ListTenantParams(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ps))
	for _, p := range ps {
		out[p.Name] = p.Value
	}
	return out, nil
}

// ListTenantParams implements TenantParamLister.
func (l *Ledger) ListTenantParams(ctx context.Context, tenant string) ([]TenantParam, error) {
	if !ValidTenant(tenant) {
		return nil, Errorf(EInvalid, "tenant must be 1-63 characters of a-z, 0-9, '.', '_' or '-'")
	}
	ps, err := l.d.TenantParamList(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("list tenant params: %w", err)
	}
	if ps == nil {
		ps = []TenantParam{}
	}
	return ps, nil
}

// SetTenantParams implements TenantParamStore with setTenantParams, in
// one transaction.
func (l *Ledger) SetTenantParams(ctx context.Context, tenant string, set map[string]string, unset []string, force bool) error {
	if err := ValidateTenantParams(tenant, set, unset); err != nil {
		return err
	}
	err := l.d.WithTx(ctx, func(tx Driver) error {
		return setTenantParams(ctx, tx, tenant, set, unset, force, l.clock())
	})
	if err != nil {
		return fmt.Errorf("set tenant params: %w", err)
	}
	return nil
}

// unfinishedCountLimit bounds the count of unfinished operations that a
// refusal quotes: the decision needs only "any", the person a sense of size.
const unfinishedCountLimit = 1000

// setTenantParams applies a change of the tenant's parameters in tx, by
// the context's actor. Setting a parameter for the first time is always
// allowed. Changing or removing a value is refused with EConflict while
// the tenant has unfinished operations, unless force: a same-key replay or
// a lookup of an operation sent with the old value would go to another
// connected account, where its idempotency key and reference mean nothing,
// so its outcome could never be learnt and a resend could apply it twice.
// A forced change says so in its action. Each parameter changed is one
// action (object: the name; reason: what happened, never the value);
// setting an equal value or unsetting an absent parameter is no change.
func setTenantParams(ctx context.Context, tx Driver, tenant string, set map[string]string, unset []string, force bool, now time.Time) error {
	if err := ValidateTenantParams(tenant, set, unset); err != nil {
		return err
	}
	if _, err := ActorOf(ctx); err != nil {
		return err
	}
	if err := tx.TenantParamLock(ctx, tenant); err != nil {
		return err
	}
	ps, err := tx.TenantParamList(ctx, tenant)
	if err != nil {
		return err
	}
	cur := make(map[string]string, len(ps))
	for _, p := range ps {
		cur[p.Name] = p.Value
	}
	type change struct {
		name, value string
		kind        ActionKind
		guarded     bool // an existing value changes or goes
	}
	var (
		changes []change
		guarded []string
		count   = len(cur)
	)
	for _, name := range sortedKeys(set) {
		old, had := cur[name]
		switch {
		case !had:
			count++
			changes = append(changes, change{name: name, value: set[name], kind: ActionTenantParamSet})
		case old != set[name]:
			changes = append(changes, change{name: name, value: set[name], kind: ActionTenantParamSet, guarded: true})
			guarded = append(guarded, name)
		}
	}
	names := slices.Clone(unset)
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if _, had := cur[name]; had {
			count--
			changes = append(changes, change{name: name, kind: ActionTenantParamUnset, guarded: true})
			guarded = append(guarded, name)
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if count > MaxTenantParams {
		return Errorf(EInvalid, "tenant %s may have at most %d parameters; this change would leave %d", tenant, MaxTenantParams, count)
	}
	forced := ""
	if len(guarded) > 0 {
		n, err := tx.OperationCountInStates(ctx, tenant, UnfinishedStates(), unfinishedCountLimit)
		if err != nil {
			return err
		}
		if n > 0 && !force {
			return Errorf(EConflict, "tenant %s has %s not yet final (PREPARED, IN_FLIGHT, UNKNOWN or ESCALATED): "+
				"changing or removing %s would send their same-key replays and lookups with the new value, to another "+
				"account where their idempotency keys mean nothing; wait until they are final, or force the change",
				tenant, unfinished(n), strings.Join(guarded, ", "))
		}
		if n > 0 {
			forced = ", forced with " + unfinished(n) + " not yet final"
		}
	}
	for _, c := range changes {
		reason := "first set"
		if c.kind == ActionTenantParamUnset {
			reason = "removed"
			err = tx.TenantParamDelete(ctx, tenant, c.name)
		} else {
			if c.guarded {
				reason = "changed"
			}
			err = tx.TenantParamPut(ctx, tenant, TenantParam{Name: c.name, Value: c.value, UpdatedAt: now})
		}
		if err != nil {
			return err
		}
		if c.guarded {
			reason += forced
		}
		a, err := NewAction(ctx, c.kind, tenant, c.name, "", reason, now)
		if err != nil {
			return err
		}
		if err := tx.ActionInsert(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// UnfinishedStates lists the states that are not Final, for stores that
// filter in SQL.
func UnfinishedStates() []State {
	var out []State
	for _, s := range States {
		if !s.Final() {
			out = append(out, s)
		}
	}
	return out
}

// unfinished says how many operations, bounded by unfinishedCountLimit.
func unfinished(n int) string {
	switch {
	case n >= unfinishedCountLimit:
		return fmt.Sprintf("%d or more operations", unfinishedCountLimit)
	case n == 1:
		return "1 operation"
	}
	return fmt.Sprintf("%d operations", n)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
