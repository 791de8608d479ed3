package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// simKey is the secret key the stripe-flavored `settle sim` runs get.
const simKey = "sk_test_CliSimulatorKey0123456789abcd"

// The printed stripe contract names where the key comes from, never the
// key. It is checked as YAML here: package target learns the stripe fields
// (auth, encoding, headers, statuses) on another branch.
func TestSim_StripePrintContract(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	c := exec.Command(binary, "sim", "--flavor", "stripe", "--print-contract", "--name", "stripe", "--addr", addr, "--lag", "2s", "--retention", "1h", "--account-required")
	c.Env = append(os.Environ(), "SETTLE_SIM_API_KEY="+simKey)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("settle sim --flavor stripe --print-contract: %v: %s", err, stderr.String())
	}
	if strings.Contains(stdout.String(), simKey) || strings.Contains(stdout.String(), simKey[8:]) {
		t.Fatal("the printed contract holds the secret key")
	}
	var file struct {
		Targets []struct {
			Name     string            `yaml:"name"`
			BaseURL  string            `yaml:"base_url"`
			Encoding string            `yaml:"encoding"`
			Auth     map[string]string `yaml:"auth"`
			Headers  map[string]string `yaml:"headers"`
			Create   map[string]string `yaml:"create"`
			Idem     map[string]string `yaml:"idempotency"`
			Lookup   map[string]string `yaml:"lookup"`
		} `yaml:"targets"`
	}
	if err := yaml.Unmarshal(stdout.Bytes(), &file); err != nil || len(file.Targets) != 1 {
		t.Fatalf("contract: %v:\n%s", err, stdout.String())
	}
	got := file.Targets[0]
	if got.Name != "stripe" || got.BaseURL != "http://"+addr || got.Encoding != "form" ||
		got.Auth["secret_env"] != "SETTLE_SIM_API_KEY" || got.Auth["scheme"] != "Bearer" || got.Auth["header"] != "Authorization" ||
		got.Headers["Stripe-Account"] != "{tenant.account}" || got.Create["path"] != "/v1/payment_intents" ||
		got.Idem["retention"] != "1h" || got.Idem["replayed_header"] != "Idempotent-Replayed" || got.Lookup["propagation_limit"] != "3s" {
		t.Errorf("contract %+v", got)
	}

	// Without --account-required, no Stripe-Account header: it would
	// escalate unsent every operation of a tenant without an account.
	c = exec.Command(binary, "sim", "--flavor", "stripe", "--print-contract", "--addr", addr)
	c.Env = append(os.Environ(), "SETTLE_SIM_API_KEY="+simKey)
	out, err := c.Output()
	if err != nil || strings.Contains(string(out), "Stripe-Account") || strings.Contains(string(out), "headers:") {
		t.Errorf("contract without --account-required: %v:\n%s", err, out)
	}
}

// A stripe-flavored simulator serves with the key from the environment,
// names its flavor at start and stops on SIGTERM.
func TestSim_StripeServe(t *testing.T) {
	t.Parallel()
	url, stop := startSimEnv(t, []string{"SETTLE_SIM_API_KEY=" + simKey}, "--flavor", "stripe", "--addr", freeAddr(t), "--account-required")
	post := func(auth, account string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/payment_intents", strings.NewReader(
			"amount=1200&currency=EUR&payment_method=pm_card_visa&confirm=true&metadata[settle_ref]=op-1&metadata[settle_tenant]=acme"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if account != "" {
			req.Header.Set("Stripe-Account", account)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	if status, body := post("", "acct_1"); status != http.StatusUnauthorized || strings.Contains(string(body), simKey) {
		t.Errorf("without a key: %d %s", status, body)
	}
	if status, body := post("Bearer "+simKey, ""); status != http.StatusBadRequest {
		t.Errorf("without Stripe-Account under --account-required: %d %s", status, body)
	}
	if status, body := post("Bearer "+simKey, "acct_1"); status != http.StatusOK || !strings.Contains(string(body), `"currency":"eur"`) {
		t.Fatalf("create: %d %s", status, body)
	}

	resp, err := http.Get(url + "/_sim/objects")
	if err != nil {
		t.Fatal(err)
	}
	var objects []struct {
		Reference string `json:"reference"`
		Account   string `json:"account"`
	}
	err = json.NewDecoder(resp.Body).Decode(&objects)
	resp.Body.Close()
	if err != nil || len(objects) != 1 || objects[0].Reference != "op-1" || objects[0].Account != "acct_1" {
		t.Fatalf("GET /_sim/objects: %v, %+v; want the one intent op-1 of acct_1", err, objects)
	}
	stop()
}

func TestSim_StripeBadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		key  string // SETTLE_SIM_API_KEY
		want string
	}{
		{"no key", []string{"--flavor", "stripe"}, "", "SETTLE_SIM_API_KEY"},
		{"key with a space", []string{"--flavor", "stripe"}, "sk_test_hunter2 x", "must not contain spaces"},
		{"class", []string{"--flavor", "stripe", "--class", "A"}, simKey, "--class applies only to --flavor settle"},
		{"async", []string{"--flavor", "stripe", "--async"}, simKey, "--async applies only"},
		{"webhook", []string{"--flavor", "stripe", "--webhook-url", "http://127.0.0.1:1/hook"}, simKey, "--webhook-url applies only"},
		{"account required without stripe", []string{"--account-required"}, simKey, "--account-required applies only to --flavor stripe"},
		{"unknown flavor", []string{"--flavor", "paypal"}, simKey, "--flavor must be settle or stripe"},
		{"stripe faults above 1", []string{"--flavor", "stripe", "--slow", "0.6", "--reset", "0.6"}, simKey, "add up to"},
		{"stripe zero retention", []string{"--flavor", "stripe", "--retention", "0s"}, simKey, "--retention"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := exec.Command(binary, append([]string{"sim", "--print-contract"}, tt.args...)...)
			c.Env = append(os.Environ(), "SETTLE_SIM_API_KEY="+tt.key)
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
				t.Fatalf("err = %v; want exit 2 (stderr %q)", err, stderr.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || stdout.Len() != 0 || !strings.Contains(msg, tt.want) {
				t.Errorf("want one error line mentioning %q on stderr and no stdout; got %q, stdout %q", tt.want, msg, stdout.String())
			}
			if strings.Contains(msg, "hunter2") || strings.Contains(msg, simKey[8:]) {
				t.Errorf("the error repeats the key: %q", msg)
			}
		})
	}
}
