package cluster

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestExpandNodeList(t *testing.T) {
	for _, c := range []struct {
		list string
		want []string
	}{
		{"vm", []string{"vm"}},
		{"node[01-04,07]", []string{"node01", "node02", "node03", "node04", "node07"}},
		{"node[01-04,07],gpu5", []string{"node01", "node02", "node03", "node04", "node07", "gpu5"}},
		{"a[8-11]", []string{"a8", "a9", "a10", "a11"}},
		{"rack[1-2]-n[1-2]", []string{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"}},
		{"x[3],y[009-010].lab", []string{"x3", "y009.lab", "y010.lab"}},
		{" a , b ", []string{"a", "b"}},
	} {
		got, err := ExpandNodeList(c.list)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ExpandNodeList(%q) = %q, %v; want %q", c.list, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "node[1-", "node]1", "node[4-2]", "node[a-b]", "node[1-2", "n[0-99999999]", "n[1,,2]"} {
		if got, err := ExpandNodeList(bad); err == nil {
			t.Errorf("ExpandNodeList(%q) = %q, want an error", bad, got)
		}
	}
}

func TestExpandTasksPerNode(t *testing.T) {
	got, err := ExpandTasksPerNode("2(x3),1")
	if err != nil || !slices.Equal(got, []int{2, 2, 2, 1}) {
		t.Errorf("2(x3),1 = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "2(x0)", "x", "2(x3", "-1"} {
		if _, err := ExpandTasksPerNode(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// env returns a getenv over vars.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestFromSlurm: five tasks in blocks of 2, 2 and 1 on three nodes; every
// task derives the same ranks, each its own address.
func TestFromSlurm(t *testing.T) {
	want := []string{"n01:29400", "n01:29401", "n02:29400", "n02:29401", "gpu:29400"}
	node := []string{"n01", "n01", "n02", "n02", "gpu"}
	for r := range want {
		vars := map[string]string{
			"SLURM_PROCID": strconv.Itoa(r), "SLURM_NTASKS": "5", "SLURM_STEP_NODELIST": "n[01-02],gpu",
			"SLURM_STEP_TASKS_PER_NODE": "2(x2),1", "SLURMD_NODENAME": node[r], "SLURM_LOCALID": strconv.Itoa(r % 2),
		}
		p, err := FromEnv(env(vars), "ignored", EnvOptions{BasePort: 29400})
		if err != nil {
			t.Fatalf("task %d: %v", r, err)
		}
		if p.Rank != r || !slices.Equal(p.Ranks.Addrs, want) || !strings.HasPrefix(p.Source, "Slurm: SLURM_PROCID=") {
			t.Errorf("task %d: rank %d, addresses %v (%s)", r, p.Rank, p.Ranks.Addrs, p.Source)
		}
		// The derived ranks file parses back to the same ranks.
		back, err := ParseRanks(strings.NewReader(string(p.Ranks.Marshal())), "slurm")
		if err != nil || !slices.Equal(back.Addrs, want) {
			t.Errorf("ranks file: %v, %v", back, err)
		}
	}
	// One node, no tasks-per-node variable: every task there.
	p, err := FromEnv(env(map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "3", "SLURM_JOB_NODELIST": "vm"}), "", EnvOptions{BasePort: 7000})
	if err != nil || !slices.Equal(p.Ranks.Addrs, []string{"vm:7000", "vm:7001", "vm:7002"}) {
		t.Errorf("one node: %v, %v", p, err)
	}
}

func TestFromSlurmRefuses(t *testing.T) {
	base := map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "4", "SLURM_STEP_NODELIST": "a,b", "SLURM_STEP_TASKS_PER_NODE": "2(x2)"}
	for name, c := range map[string]struct {
		set  map[string]string
		want string
	}{
		"cyclic node":   {map[string]string{"SLURMD_NODENAME": "b"}, "--distribution=block"},
		"cyclic local":  {map[string]string{"SLURM_LOCALID": "0"}, "--distribution=block"},
		"task id":       {map[string]string{"SLURM_PROCID": "4"}, "SLURM_PROCID=4"},
		"tasks":         {map[string]string{"SLURM_NTASKS": "x"}, "SLURM_NTASKS"},
		"short list":    {map[string]string{"SLURM_STEP_TASKS_PER_NODE": "2,1"}, "does not place 4 tasks"},
		"bad node list": {map[string]string{"SLURM_STEP_NODELIST": "a[2-1]"}, "SLURM_STEP_NODELIST"},
	} {
		vars := map[string]string{}
		for k, v := range base {
			vars[k] = v
		}
		for k, v := range c.set {
			vars[k] = v
		}
		if _, err := FromEnv(env(vars), "", EnvOptions{BasePort: 29400}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
	if p, err := FromEnv(env(nil), "host", EnvOptions{BasePort: 29400}); p != nil || err != nil {
		t.Errorf("no launcher: %v, %v; want nil, nil", p, err)
	}
}

// TestFromStatefulSet: a 4-pod StatefulSet's pods each derive the ranks of
// the pods' stable DNS names behind the headless Service.
func TestFromStatefulSet(t *testing.T) {
	want := []string{"gtstorm-0.gtstorm-peers:29400", "gtstorm-1.gtstorm-peers:29400", "gtstorm-2.gtstorm-peers:29400", "gtstorm-3.gtstorm-peers:29400"}
	vars := map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "GTSTORM_RANKS": "4", "GTSTORM_SERVICE": "gtstorm-peers"}
	for r := range 4 {
		p, err := FromEnv(env(vars), "gtstorm-"+strconv.Itoa(r), EnvOptions{BasePort: 29400})
		if err != nil || p.Rank != r || !slices.Equal(p.Ranks.Addrs, want) {
			t.Errorf("pod %d: %v, %v", r, p, err)
		}
	}
	p, err := FromEnv(env(map[string]string{"KUBERNETES_SERVICE_HOST": "x"}), "train-2.train.ns.svc.cluster.local", EnvOptions{BasePort: 5000, Count: 3})
	if err != nil || p.Rank != 2 || p.Ranks.Addrs[0] != "train-0.train:5000" {
		t.Errorf("flags over the environment: %v, %v", p, err)
	}
	for name, c := range map[string]struct {
		host string
		vars map[string]string
		want string
	}{
		"not a pod name": {"worker", vars, "NAME-ORDINAL"},
		"ordinal past":   {"gtstorm-4", vars, "ordinal 4"},
		"no count":       {"gtstorm-0", map[string]string{"KUBERNETES_SERVICE_HOST": "x"}, "GTSTORM_RANKS"},
	} {
		if _, err := FromEnv(env(c.vars), c.host, EnvOptions{BasePort: 29400}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
}

// TestFromEnvCounts: counts near 0, 2³¹ and 2⁶³, and malformed integers,
// are refused in one message naming the variable and what it wants, before
// anything is allocated for them; a node list of several hosts without the
// tasks per node is refused rather than put on its first host.
func TestFromEnvCounts(t *testing.T) {
	slurm := map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_STEP_NODELIST": "a", "SLURM_STEP_TASKS_PER_NODE": "2"}
	pod := map[string]string{"KUBERNETES_SERVICE_HOST": "x", "GTSTORM_RANKS": "4"}
	for name, c := range map[string]struct {
		base, set map[string]string
		count     int
		want      string
	}{
		"tasks 2^31":        {slurm, map[string]string{"SLURM_NTASKS": "2000000000", "SLURM_STEP_TASKS_PER_NODE": "2000000000"}, 0, "SLURM_NTASKS=\"2000000000\": want a task count of 1 to 65536"},
		"tasks 2^63":        {slurm, map[string]string{"SLURM_NTASKS": "9223372036854775807"}, 0, "want a task count of 1 to 65536"},
		"tasks 0":           {slurm, map[string]string{"SLURM_NTASKS": "0"}, 0, "want a task count of 1 to 65536"},
		"tasks -1":          {slurm, map[string]string{"SLURM_STEP_NUM_TASKS": "-1"}, 0, "SLURM_STEP_NUM_TASKS=\"-1\""},
		"gtstorm rank":      {slurm, map[string]string{"SLURM_NTASKS": "x"}, 0, "run gtstorm rank under srun"},
		"localid abc":       {slurm, map[string]string{"SLURM_LOCALID": "abc"}, 0, "SLURM_LOCALID=\"abc\": want an integer"},
		"localid 2^63":      {slurm, map[string]string{"SLURM_LOCALID": "9223372036854775807"}, 0, "SLURM_LOCALID=9223372036854775807: want a task index of [0, 2)"},
		"procid abc":        {slurm, map[string]string{"SLURM_PROCID": "abc"}, 0, "SLURM_PROCID=\"abc\": want an integer"},
		"per 2^62 twice":    {slurm, map[string]string{"SLURM_STEP_NODELIST": "a,b", "SLURM_STEP_TASKS_PER_NODE": "4611686018427387904(x2)"}, 0, "does not place 2 tasks"},
		"per wraps":         {slurm, map[string]string{"SLURM_STEP_NODELIST": "a,b", "SLURM_STEP_TASKS_PER_NODE": "2,9223372036854775807"}, 0, "does not place 2 tasks"},
		"per over":          {slurm, map[string]string{"SLURM_STEP_NODELIST": "a,b", "SLURM_STEP_TASKS_PER_NODE": "2,1"}, 0, "does not place 2 tasks"},
		"no per, two hosts": {slurm, map[string]string{"SLURM_STEP_NODELIST": "a,b", "SLURM_STEP_TASKS_PER_NODE": ""}, 0, "SLURM_STEP_TASKS_PER_NODE and SLURM_TASKS_PER_NODE are unset"},
		"pod ranks 2^31":    {pod, map[string]string{"GTSTORM_RANKS": "2000000000"}, 0, "GTSTORM_RANKS=2000000000: want a rank count of 1 to 65536"},
		"pod ranks 2^63":    {pod, map[string]string{"GTSTORM_RANKS": "9223372036854775807"}, 0, "want a rank count of 1 to 65536"},
		"pod ranks -3":      {pod, map[string]string{"GTSTORM_RANKS": "-3"}, 0, "GTSTORM_RANKS=-3: want a rank count of 1 to 65536"},
		"pod ranks 0":       {pod, map[string]string{"GTSTORM_RANKS": "0"}, 0, "GTSTORM_RANKS=0: want a rank count"},
		"pod flag 2^31":     {pod, nil, 1 << 31, "--ranks-count=2147483648: want a rank count of 1 to 65536"},
		"pod flag -1":       {pod, nil, -1, "--ranks-count=-1: want a rank count"},
	} {
		vars := map[string]string{}
		for k, v := range c.base {
			vars[k] = v
		}
		for k, v := range c.set {
			vars[k] = v
		}
		_, err := FromEnv(env(vars), "gtstorm-0", EnvOptions{BasePort: 29400, Count: c.count})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", name, err, c.want)
		}
	}
	// Slurm's one host without tasks per node still holds every task.
	p, err := FromEnv(env(map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_NODELIST": "vm", "SLURM_LOCALID": "1"}), "", EnvOptions{BasePort: 7000})
	if err != nil || !slices.Equal(p.Ranks.Addrs, []string{"vm:7000", "vm:7001"}) {
		t.Errorf("one host: %v, %v", p, err)
	}
}
