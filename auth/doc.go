// Package auth holds the console's identities: roles, permissions and the
// principals they are granted to (and the sign-in and sessions that find
// them). API tokens for client services are ledger data (ledger.Token), so
// that the stores need nothing from this package.
package auth
