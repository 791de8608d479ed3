package ledger

import (
	"strconv"
	"strings"
)

// SupersedeIntent is the intent reference of the operation that supersedes
// one of intent: "<base>~s<n>", n one more than intent's own count (1 for
// an intent never superseded). It depends on the old intent only, so a
// retried approval names the same intent and creates no second operation.
func SupersedeIntent(intent string) string {
	base, n := intent, 0
	if i := strings.LastIndex(intent, "~s"); i >= 0 {
		if k, err := strconv.Atoi(intent[i+2:]); err == nil && k > 0 && strconv.Itoa(k) == intent[i+2:] {
			base, n = intent[:i], k
		}
	}
	return base + "~s" + strconv.Itoa(n+1)
}

// Successor is the NewOperation that supersedes op: the same tenant, type,
// target, approved payload and window, under SupersedeIntent. rebind
// replaces the reference op's payload already carries with the new remote
// key (a contract's Rebind): the stored payload is bound to op's key.
func Successor(op Operation, rebind func(payload []byte, remoteKey, tenant string) ([]byte, error)) NewOperation {
	return NewOperation{
		Tenant: op.Tenant, Type: op.Type, IntentRef: SupersedeIntent(op.IntentRef), Target: op.Target,
		Payload: op.Payload, RetryWindow: op.RetryWindow, Bind: rebind,
	}
}
