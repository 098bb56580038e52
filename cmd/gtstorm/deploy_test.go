package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDeployFilesAgree checks the files under deploy/ against the command
// line and each other: every flag the job script and the StatefulSet give
// `gtstorm rank` is one it registers, and the manifests agree on the rank
// count, the Service, the port and the Secret. (kubectl kustomize
// deploy/k8s parses them where kubectl is installed.)
func TestDeployFilesAgree(t *testing.T) {
	var help, errb bytes.Buffer
	if code := run([]string{"rank", "--help"}, &help, &errb); code != 0 {
		t.Fatalf("rank --help: exit %d: %s", code, errb.String())
	}
	registered := func(flag string) bool {
		return strings.Contains(help.String(), "  -"+flag+" ") || strings.Contains(help.String(), "  -"+flag+"\n")
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	flagRE := regexp.MustCompile(`(?m)--([a-z][a-z0-9-]*)`)

	script := read("../../deploy/slurm/gtstorm.sbatch")
	_, srun, _ := strings.Cut(script, `"$GTSTORM" rank`)
	for _, m := range flagRE.FindAllStringSubmatch(srun, -1) {
		if !registered(m[1]) {
			t.Errorf("gtstorm.sbatch gives rank --%s, which rank does not register", m[1])
		}
	}

	sts := read("../../deploy/k8s/statefulset.yaml")
	_, args, _ := strings.Cut(sts, "args:")
	args, _, _ = strings.Cut(args, "env:")
	for _, m := range flagRE.FindAllStringSubmatch(args, -1) {
		if !registered(m[1]) {
			t.Errorf("statefulset.yaml gives rank --%s, which rank does not register", m[1])
		}
	}
	field := func(text, re string) string {
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no match for %s", re)
		}
		return m[1]
	}
	svc, secret := read("../../deploy/k8s/service.yaml"), read("../../deploy/k8s/secret.yaml")
	for _, c := range []struct{ what, a, b string }{
		{"replicas and GTSTORM_RANKS", field(sts, `(?m)^\s+replicas: (\d+)`), field(sts, `(?s)GTSTORM_RANKS\s+value: "(\d+)"`)},
		{"serviceName and the Service", field(sts, `(?m)serviceName: (\S+)`), field(svc, `(?m)^  name: (\S+)`)},
		{"GTSTORM_SERVICE and the Service", field(sts, `(?s)GTSTORM_SERVICE\s+value: (\S+)`), field(svc, `(?m)^  name: (\S+)`)},
		{"--base-port and containerPort", field(sts, `--base-port=(\d+)`), field(sts, `containerPort: (\d+)`)},
		{"--base-port and the Service's port", field(sts, `--base-port=(\d+)`), field(svc, `(?m)^\s+port: (\d+)`)},
		{"the certs volume and the Secret", field(sts, `secretName: (\S+)`), field(secret, `(?m)^  name: (\S+)`)},
	} {
		if c.a != c.b {
			t.Errorf("%s disagree: %q and %q", c.what, c.a, c.b)
		}
	}
}
