package main

import "settle/target"

// targetClient builds the one client that talks to targets: the contracts'
// credentials from the environment (read by target.ReadSecrets at
// start-up) and the tenants' request parameters from the ledger.
func targetClient(secrets *target.Secrets, params target.ParamSource) *target.Client {
	return target.NewClient(target.ClientOptions{Secrets: secrets, Params: params})
}
