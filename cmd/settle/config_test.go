package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// settingLine is the line settle config check prints for key.
func settingLine(t *testing.T, out, key string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == key {
			return strings.Join(f, " ")
		}
	}
	t.Fatalf("no setting %s in:\n%s", key, out)
	return ""
}

// Flags win over the environment, which wins over the file, which wins
// over the defaults; settle config check prints each value and where it
// came from, and never a password.
func TestConfig_Precedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeFile(t, dir, "settle.yaml", `# settle serve, production
database_url: postgres://app:hunter2@db.internal:5432/settle?sslmode=disable&password=alsosecret
log_format: json
log_level: warn
workers: 4
leader_lease: 12s
`)
	code, out, errOut := runIn(t, dir, []string{"SETTLE_LOG_LEVEL=debug", "DATABASE_URL="},
		"config", "check", "--config", file, "--workers", "7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for key, want := range map[string]string{
		"database_url": "postgres://app:xxxxx@db.internal:5432/settle?password=xxxxx&sslmode=disable (" + file + ":2)",
		"log_format":   "json (" + file + ":3)",
		"log_level":    "debug (env SETTLE_LOG_LEVEL)",
		"workers":      "7 (flag)",
		"leader_lease": "12s (" + file + ":6)",
		"addr":         "127.0.0.1:8080 (default)",
	} {
		if got := settingLine(t, out, key); got != key+" "+want {
			t.Errorf("%s: %q, want %q", key, got, key+" "+want)
		}
	}
	if strings.Contains(out+errOut, "hunter2") || strings.Contains(out+errOut, "alsosecret") {
		t.Fatalf("a password was printed:\n%s", out)
	}
	if !strings.Contains(out, "settle serve would start with this configuration") {
		t.Fatalf("no verdict:\n%s", out)
	}
}

// A bad file stops settle serve (and config check) at start, each problem
// on a line of its own naming the file, line and setting, without quoting
// the value (it may be a secret).
func TestConfig_Errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"UnknownAndBadType", "addr: 127.0.0.1:0\nworkerz: 3\nlease: soon\ndatabase_url:\n  nested: x\n",
			[]string{":2: workerz: unknown setting", ":3: lease: want a duration such as 30s", ":4: database_url: want a single value"}},
		{"OutOfRange", "addr: 127.0.0.1:0\n\nworkers: 0\n", []string{":3: workers: --workers must be at least 1, got 0"}},
		{"NotYAML", "addr: [127.0.0.1\n", []string{":1: not YAML"}},
		{"NotAMapping", "- addr\n", []string{":1: want a mapping of settings"}},
		{"Duplicate", "workers: 2\nworkers: 3\n", []string{":2: not YAML: mapping key \"workers\" already defined"}},
	} {
		file := writeFile(t, dir, tt.name+".yaml", tt.text)
		for _, cmd := range [][]string{{"serve", "--config", file}, {"config", "check", "--config", file}} {
			code, out, errOut := runIn(t, dir, []string{"DATABASE_URL="}, cmd...)
			if code != 2 || out != "" {
				t.Errorf("%s: settle %s: exit %d, stdout %q; want 2 and nothing", tt.name, cmd[0], code, out)
			}
			for _, w := range tt.want {
				if prefix := "settle " + strings.Join(cmd[:len(cmd)-2], " ") + ": "; !strings.Contains(errOut, prefix+file+w) {
					t.Errorf("%s: settle %s: stderr %q lacks %q", tt.name, cmd[0], errOut, file+w)
				}
			}
			if strings.Contains(errOut, "soon") {
				t.Errorf("%s: a value from the file was quoted: %s", tt.name, errOut)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "settle.db")); err == nil {
			t.Fatalf("%s: a refused configuration created a store", tt.name)
		}
	}
}

// settle serve runs with what the file says: here its store and a JSON log.
func TestConfig_ServeReadsTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "from-file.db")
	file := writeFile(t, dir, "settle.yaml", "database_url: sqlite:"+db+"\nlog_format: json\nno_auditor: true\n")
	s := startServer(t, dir, []string{"DATABASE_URL=", "SETTLE_CONFIG=" + file})
	healthy(t, s.URL)
	if !strings.Contains(s.Line, "sqlite "+db) {
		t.Fatalf("start-up line %q does not name the file's store", s.Line)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(s.Log.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("log_format json from the file, but the line is not JSON: %s", l)
		}
	}
}

// With contracts, config check says whether each secret they name is set
// (exit 1 when one is not), never its value.
func TestConfig_CheckSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pc := exec.Command(binary, "sim", "--addr", freeAddr(t), "--print-contract", "--name", "payments",
		"--class", "B", "--webhook-url", "http://127.0.0.1:1/webhooks/payments")
	pc.Env = append(os.Environ(), "SETTLE_SIM_WEBHOOK_SECRET=sim-secret")
	out, err := pc.Output()
	if err != nil {
		t.Fatalf("print contract: %v", err)
	}
	contracts := writeFile(t, dir, "contracts.yaml", string(out))
	var env string
	for _, l := range strings.Split(string(out), "\n") {
		if _, v, ok := strings.Cut(l, "secret_env: "); ok {
			env = strings.Trim(strings.TrimSpace(v), `"}`)
		}
	}
	if env == "" {
		t.Fatalf("the contract names no webhook secret:\n%s", out)
	}
	code, stdout, stderr := runIn(t, dir, []string{"DATABASE_URL=", env + "="}, "config", "check", "--contracts", contracts)
	if code != 1 || !strings.Contains(stdout, "target payments: webhook secret from "+env+": NOT SET") ||
		!strings.Contains(stderr, env+" is not set") {
		t.Fatalf("without the secret: exit %d\n%s\n%s", code, stdout, stderr)
	}
	const secret = "whsec-value-9c1d"
	code, stdout, stderr = runIn(t, dir, []string{"DATABASE_URL=", env + "=" + secret}, "config", "check", "--contracts", contracts)
	if code != 0 || !strings.Contains(stdout, "target payments: webhook secret from "+env+": set") {
		t.Fatalf("with the secret: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, secret) {
		t.Fatal("config check printed the secret")
	}
}

// A complaint names the file's line of the first flag it mentions that the
// file set; flags from elsewhere are left alone.
func TestConfig_Blame(t *testing.T) {
	t.Parallel()
	r := &fileResolver{path: "s.yaml", used: map[string]fileSetting{
		"read-timeout":  {key: "read_timeout", line: 3},
		"write-timeout": {key: "write_timeout", line: 9},
	}}
	for msg, want := range map[string]string{
		"--write-timeout (1s) must exceed --read-timeout (2s)": "s.yaml:9: write_timeout: --write-timeout (1s) must exceed --read-timeout (2s)",
		"--read-timeout must be a positive duration, got 0s":   "s.yaml:3: read_timeout: --read-timeout must be a positive duration, got 0s",
		"--workers must be at least 1, got 0":                  "--workers must be at least 1, got 0",
		"--leader-lease must be at least 3ms":                  "--leader-lease must be at least 3ms",
	} {
		got := msg
		if err := r.blame(msg); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%q became %q, want %q", msg, got, want)
		}
	}
}
