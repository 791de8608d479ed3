package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"settle/target"
)

// freeAddr returns a loopback address with a port that was free a moment
// ago, for tests that need to know the address before settle sim runs.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// printContract runs `settle sim --print-contract` and parses its output as
// settle would.
func printContract(t *testing.T, args ...string) *target.Contract {
	t.Helper()
	return printContractEnv(t, nil, args...)
}

// printContractEnv is printContract with env added to the environment.
func printContractEnv(t *testing.T, env []string, args ...string) *target.Contract {
	t.Helper()
	c := exec.Command(binary, append([]string{"sim", "--print-contract", "--name", "payments"}, args...)...)
	c.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("settle sim --print-contract: %v: %s", err, stderr.String())
	}
	set, err := target.Parse("contracts.yaml", stdout.Bytes())
	if err != nil {
		t.Fatalf("the printed contract does not parse: %v\n%s", err, stdout.String())
	}
	contract, ok := set.Get("payments")
	if !ok {
		t.Fatalf("no target payments in\n%s", stdout.String())
	}
	return contract
}

// startSim runs `settle sim` and returns its URL once it has printed its one
// line, and a stop function that sends SIGTERM and fails the test unless
// the process exits 0 without printing anything more on stdout.
func startSim(t *testing.T, args ...string) (url string, stop func()) {
	t.Helper()
	return startSimEnv(t, nil, args...)
}

// startSimEnv is startSim with env added to the environment.
func startSimEnv(t *testing.T, env []string, args ...string) (url string, stop func()) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"sim"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	var rest bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		first <- line
		_, _ = io.Copy(&rest, r)
	}()
	var line string
	select {
	case line = <-first:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("settle sim printed nothing in 30s; stderr: %s", stderr.String())
	}
	m := regexp.MustCompile(`^settle sim: listening on (http://\S+) \((class [ABCD]|flavor stripe)\)\n$`).FindStringSubmatch(line)
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("settle sim still running 30s after SIGTERM; stderr: %s", stderr.String())
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("settle sim did not exit 0 on SIGTERM: %v; stderr: %s", err, stderr.String())
		}
		if rest.Len() > 0 {
			t.Errorf("settle sim printed more than one line on stdout: %q", rest.String())
		}
	}
	t.Cleanup(stop)
	if m == nil {
		t.Fatalf("first line %q, want \"settle sim: listening on http://ADDR (class X|flavor stripe)\"; stderr: %s", line, stderr.String())
	}
	return m[1], stop
}

func TestSim_PrintContract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		classes []target.Class
	}{
		{[]string{"--class", "A"}, []target.Class{target.ClassA, target.ClassB}},
		{[]string{"--class", "B", "--lag", "1500ms"}, []target.Class{target.ClassB}},
		{[]string{"--class", "C"}, []target.Class{target.ClassB, target.ClassC}},
		{[]string{"--class", "D"}, []target.Class{target.ClassD}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			addr := freeAddr(t)
			c := printContract(t, append(tt.args, "--addr", addr)...)
			if c.BaseURL != "http://"+addr {
				t.Errorf("base_url = %s; want http://%s", c.BaseURL, addr)
			}
			if got := c.Classes(); !reflect.DeepEqual(got, tt.classes) {
				t.Errorf("Classes = %v; want %v", got, tt.classes)
			}
		})
	}

	t.Run("lag and webhook", func(t *testing.T) {
		t.Parallel()
		c := printContractEnv(t, []string{"SETTLE_SIM_WEBHOOK_SECRET=whsec_not_in_output"}, "--class", "B", "--lag", "1500ms", "--webhook-url", "http://127.0.0.1:1/webhooks/payments", "--addr", freeAddr(t))
		if c.Lookup.ReadAfterWrite || c.Lookup.PropagationLimit != 3*time.Second {
			t.Errorf("Lookup = %+v; want no read-after-write and a 3s propagation limit", *c.Lookup)
		}
		if c.Webhook == nil || c.Webhook.SecretEnv != "SETTLE_SIM_WEBHOOK_SECRET" {
			t.Errorf("Webhook = %+v", c.Webhook)
		}
	})
}

// The drill from the docs: print the contract for an address, then serve
// there; the contract's calls work against the server, and SIGTERM stops it.
func TestSim_PrintContractThenServe(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	c := printContract(t, "--addr", addr, "--class", "A")
	url, stop := startSim(t, "--addr", addr, "--class", "A", "--seed", "7")
	if url != c.BaseURL {
		t.Fatalf("serving at %s, but the contract says %s", url, c.BaseURL)
	}

	payload := []byte(`{"amount":1200,"currency":"eur","metadata":{"settle_ref":"op-1","settle_tenant":"acme"}}`)
	method, createURL := c.CreateURL()
	req, _ := http.NewRequest(method, createURL, bytes.NewReader(payload))
	req.Header.Set(c.Idempotency.Header, "op-1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := c.Classify(resp.StatusCode); got != target.Succeeded {
		t.Fatalf("create: %d classified %s; body %s", resp.StatusCode, got, body)
	}
	if done, err := c.Completed(body); !done || err != nil || c.Mismatches(payload, body) != nil {
		t.Errorf("create response: completed %v, %v; mismatches %v", done, err, c.Mismatches(payload, body))
	}

	resp, err = http.Get(url + "/_sim/objects")
	if err != nil {
		t.Fatal(err)
	}
	var objects []struct {
		Reference string `json:"reference"`
	}
	err = json.NewDecoder(resp.Body).Decode(&objects)
	resp.Body.Close()
	if err != nil || len(objects) != 1 || objects[0].Reference != "op-1" {
		t.Fatalf("GET /_sim/objects: %v, %+v; want the one charge op-1", err, objects)
	}
	stop()
}

func TestSim_BadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  string // SETTLE_SIM_WEBHOOK_SECRET
	}{
		{"unknown class", []string{"--class", "E"}, ""},
		{"probability above 1", []string{"--slow", "1.5"}, ""},
		{"negative probability", []string{"--reset", "-0.1"}, ""},
		{"NaN probability", []string{"--fail-before-commit", "NaN"}, ""},
		{"probabilities above 1 together", []string{"--drop-after-commit", "0.6", "--fail-after-commit", "0.5"}, ""},
		{"not a number", []string{"--slow", "often"}, ""},
		{"zero retention", []string{"--retention", "0s"}, ""},
		{"negative lag", []string{"--lag", "-1s"}, ""},
		{"bad name", []string{"--name", "../x"}, ""},
		{"webhook without secret", []string{"--webhook-url", "http://127.0.0.1:1/hook"}, ""},
		{"webhook URL not http", []string{"--webhook-url", "ftp://user:hunter2@example.com/hook"}, "whsec_x"},
		{"unknown flag", []string{"--no-such-flag"}, ""},
		{"extra argument", []string{"now"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := exec.Command(binary, append([]string{"sim", "--print-contract"}, tt.args...)...)
			c.Env = append(os.Environ(), "SETTLE_SIM_WEBHOOK_SECRET="+tt.env)
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
				t.Fatalf("err = %v; want exit 2 (stderr %q)", err, stderr.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || stdout.Len() != 0 || strings.Contains(msg, "hunter2") {
				t.Errorf("want one error line on stderr (without the URL's password) and no stdout; got %q, stdout %q", msg, stdout.String())
			}
		})
	}

	// A port that cannot be listened on is an error, not a usage error.
	c := exec.Command(binary, "sim", "--addr", "127.0.0.1:notaport")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if exit, ok := c.Run().(*exec.ExitError); !ok || exit.ExitCode() != 1 || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("bad --addr: %v, %q; want exit 1 with one line", c.ProcessState, stderr.String())
	}
}

func TestSim_Help(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(binary, "sim", "-h").Output()
	if err != nil || !strings.Contains(string(out), "-print-contract") || !strings.Contains(string(out), "-drop-after-commit") {
		t.Fatalf("settle sim -h: %v: %s", err, out)
	}
}
