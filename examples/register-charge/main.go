// Command register-charge registers one charge with settle through the Go
// client and waits for its verified outcome:
//
//	SETTLE_TOKEN=$(./settle token create --tenant acme --name example) \
//	  go run ./examples/register-charge --intent approval-7731 --amount 5000
//
// Run it twice with the same --intent: the second run finds the same
// operation (created=false) and nothing is sent again.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"settle/client"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "register-charge:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("url", "http://127.0.0.1:8080", "settle's base URL")
	tgt := flag.String("target", "demo", "the target configured in settle")
	intent := flag.String("intent", "", "the business intent's reference, e.g. the approval's id (required)")
	amount := flag.Int("amount", 5000, "the amount, in minor units")
	currency := flag.String("currency", "EUR", "the currency")
	wait := flag.Duration("wait", 2*time.Minute, "how long to wait for the outcome")
	flag.Parse()
	token := os.Getenv("SETTLE_TOKEN")
	if *intent == "" || token == "" {
		return errors.New("--intent and the SETTLE_TOKEN environment variable are required")
	}
	c, err := client.New(*url, token)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	op, created, err := c.Register(ctx, client.Operation{
		Target: *tgt, Type: "charge", IntentRef: *intent,
		Payload: map[string]any{"amount": *amount, "currency": *currency},
	})
	switch {
	case errors.Is(err, client.ErrPayloadConflict):
		return fmt.Errorf("intent %s is already registered with another payload: use a new --intent for a new charge", *intent)
	case err != nil:
		return err
	}
	fmt.Printf("operation %s (created=%v): %s\n", op.ID, created, op.Status)

	ctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	final, err := c.Await(ctx, op.ID, time.Second)
	if err != nil {
		return err
	}
	fmt.Printf("operation %s: %s (%s)", final.ID, final.State, final.Status)
	if final.RemoteRef != "" {
		fmt.Printf(", remote object %s", final.RemoteRef)
	}
	fmt.Println()
	return nil
}
