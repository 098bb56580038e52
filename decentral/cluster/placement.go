package cluster

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// Placement is where a cluster's launcher put this process: its rank and
// every rank's address, derived from the launcher's environment instead of
// a hand-written ranks file.
type Placement struct {
	// Source names the launcher and what was read, for the line a rank
	// prints at start ("Slurm: SLURM_PROCID=1, SLURM_NTASKS=3, …").
	Source string
	Rank   int
	Ranks  *Ranks
}

// EnvOptions are the settings a placement needs beyond the environment.
type EnvOptions struct {
	// BasePort is the first port: under Slurm a task listens on BasePort
	// plus its index among its node's tasks (SLURM_LOCALID), in a
	// StatefulSet every pod on BasePort.
	BasePort int
	// Service is a StatefulSet's headless Service, whose DNS names the
	// pods (NAME-J.SERVICE); empty reads GTSTORM_SERVICE, then takes the
	// StatefulSet's name.
	Service string
	// Count is a StatefulSet's rank count; 0 reads GTSTORM_RANKS (set it
	// from the StatefulSet's replicas).
	Count int
}

// FromEnv returns the placement that the environment gives: Slurm's when
// SLURM_PROCID is set (a task of srun), a Kubernetes StatefulSet's when
// KUBERNETES_SERVICE_HOST is (a pod, whose hostname is NAME-ORDINAL); nil
// when neither is. getenv reads the environment (os.Getenv).
func FromEnv(getenv func(string) string, hostname string, opt EnvOptions) (*Placement, error) {
	if opt.BasePort < 1 || opt.BasePort > 65535 {
		return nil, fmt.Errorf("base port %d: want a port of 1-65535", opt.BasePort)
	}
	switch {
	case getenv("SLURM_PROCID") != "":
		return fromSlurm(getenv, opt.BasePort)
	case getenv("KUBERNETES_SERVICE_HOST") != "":
		return fromStatefulSet(getenv, hostname, opt)
	}
	return nil, nil
}

// MaxRanks bounds the ranks a launcher's environment may declare
// (SLURM_NTASKS, GTSTORM_RANKS): every rank's address is held in memory and
// every rank keeps a connection to its neighbours, so a count past it is a
// mistake, refused before anything is allocated for it.
const MaxRanks = 1 << 16

// fromSlurm places a task of an srun step. Ranks are task ids; the hosts
// are the step's node list, holding the step's tasks in blocks
// (SLURM_STEP_TASKS_PER_NODE), which is srun's default distribution. A
// task whose own node or local id disagrees with that order was placed
// otherwise (--distribution=cyclic) and is refused. Without a tasks-per-node
// variable a node list of one host holds every task; one of several hosts is
// refused, as the split of the tasks among them is unknown.
func fromSlurm(getenv func(string) string, basePort int) (*Placement, error) {
	first := func(names ...string) (string, string) {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return n, v
			}
		}
		return names[0], ""
	}
	rank, err := envInt(getenv, "SLURM_PROCID")
	if err != nil {
		return nil, fmt.Errorf("Slurm: %w", err)
	}
	tasksVar, tasksText := first("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS")
	tasks, err := strconv.Atoi(tasksText)
	if err != nil || tasks < 1 || tasks > MaxRanks {
		return nil, fmt.Errorf("Slurm: %s=%q: want a task count of 1 to %d (run gtstorm rank under srun)", tasksVar, tasksText, MaxRanks)
	}
	if rank < 0 || rank >= tasks {
		return nil, fmt.Errorf("Slurm: SLURM_PROCID=%d: want a task id of [0, %d)", rank, tasks)
	}
	local := -1 // SLURM_LOCALID, when set
	if getenv("SLURM_LOCALID") != "" {
		if local, err = envInt(getenv, "SLURM_LOCALID"); err != nil {
			return nil, fmt.Errorf("Slurm: %w", err)
		}
		if local < 0 || local >= tasks {
			return nil, fmt.Errorf("Slurm: SLURM_LOCALID=%d: want a task index of [0, %d)", local, tasks)
		}
	}
	listVar, list := first("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
	hosts, err := ExpandNodeList(list)
	if err != nil {
		return nil, fmt.Errorf("Slurm: %s: %w", listVar, err)
	}
	perVar, perText := first("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")
	var per []int
	switch {
	case perText != "":
		if per, err = ExpandTasksPerNode(perText); err != nil {
			return nil, fmt.Errorf("Slurm: %s: %w", perVar, err)
		}
	case len(hosts) == 1:
		per = []int{tasks} // one node: every task on it
	default:
		return nil, fmt.Errorf("Slurm: SLURM_STEP_TASKS_PER_NODE and SLURM_TASKS_PER_NODE are unset, and %s=%q names %d hosts: want the tasks per node (srun sets them)", listVar, list, len(hosts))
	}
	if fits, err := blocksFit(per, hosts, tasks, basePort); err != nil {
		return nil, err
	} else if !fits {
		return nil, fmt.Errorf("Slurm: %s=%q does not place %d tasks on the %d hosts of %s=%q", perVar, perText, tasks, len(hosts), listVar, list)
	}
	rk := &Ranks{Name: "slurm", Addrs: make([]string, 0, tasks)}
	for n, h := range hosts {
		for l := range per[n] {
			rk.Addrs = append(rk.Addrs, net.JoinHostPort(h, strconv.Itoa(basePort+l)))
		}
	}
	host, port, _ := net.SplitHostPort(rk.Addrs[rank])
	if node := getenv("SLURMD_NODENAME"); node != "" && node != host {
		return nil, fmt.Errorf("Slurm: task %d runs on %s, but the block order of %s puts it on %s: run srun with --distribution=block", rank, node, perVar, host)
	}
	if p, _ := strconv.Atoi(port); local >= 0 && p-basePort != local {
		return nil, fmt.Errorf("Slurm: task %d has SLURM_LOCALID=%d, but the block order of %s makes it task %d of %s: run srun with --distribution=block", rank, local, perVar, p-basePort, host)
	}
	src := fmt.Sprintf("Slurm: SLURM_PROCID=%d, %s=%d, %s=%s, %s=%s", rank, tasksVar, tasks, listVar, list, perVar, perText)
	return &Placement{Source: src, Rank: rank, Ranks: rk}, nil
}

// blocksFit reports whether per, the tasks on each of hosts, places
// exactly tasks tasks. Every count is checked before the addresses are
// allocated: each host holds at most tasks tasks (so that the sum cannot
// wrap), listening on consecutive ports from basePort, which must stay
// below 65536.
func blocksFit(per []int, hosts []string, tasks, basePort int) (bool, error) {
	if len(per) != len(hosts) {
		return false, nil
	}
	placed := 0
	for n, k := range per {
		if k > tasks-placed {
			return false, nil
		}
		if basePort+k-1 > 65535 {
			return false, fmt.Errorf("Slurm: base port %d + %d tasks on %s passes 65535", basePort, k, hosts[n])
		}
		placed += k
	}
	return placed == tasks, nil
}

// ordinal matches a StatefulSet pod's hostname, NAME-ORDINAL.
var ordinal = regexp.MustCompile(`^(.+)-([0-9]+)$`)

// fromStatefulSet places a pod of a StatefulSet: its rank is its ordinal,
// and rank J is at NAME-J.SERVICE:BasePort.
func fromStatefulSet(getenv func(string) string, hostname string, opt EnvOptions) (*Placement, error) {
	host, _, _ := strings.Cut(hostname, ".")
	m := ordinal.FindStringSubmatch(host)
	if m == nil {
		return nil, fmt.Errorf("Kubernetes: hostname %q: want a StatefulSet pod's NAME-ORDINAL", hostname)
	}
	name := m[1]
	rank, err := strconv.Atoi(m[2])
	if err != nil {
		return nil, fmt.Errorf("Kubernetes: hostname %q: ordinal %q: %w", hostname, m[2], err)
	}
	count, countFrom := opt.Count, "--ranks-count"
	if count == 0 {
		if count, err = envInt(getenv, "GTSTORM_RANKS"); err != nil {
			return nil, fmt.Errorf("Kubernetes: %w (set it to the StatefulSet's replicas, or give --ranks-count)", err)
		}
		countFrom = "GTSTORM_RANKS"
	}
	if count < 1 || count > MaxRanks {
		return nil, fmt.Errorf("Kubernetes: %s=%d: want a rank count of 1 to %d (the StatefulSet's replicas)", countFrom, count, MaxRanks)
	}
	if rank >= count {
		return nil, fmt.Errorf("Kubernetes: pod %s has ordinal %d, want one of [0, %d) (%s=%d)", hostname, rank, count, countFrom, count)
	}
	service := opt.Service
	if service == "" {
		service = getenv("GTSTORM_SERVICE")
	}
	if service == "" {
		service = name
	}
	rk := &Ranks{Name: "kubernetes", Addrs: make([]string, count)}
	for j := range rk.Addrs {
		rk.Addrs[j] = net.JoinHostPort(fmt.Sprintf("%s-%d.%s", name, j, service), strconv.Itoa(opt.BasePort))
	}
	src := fmt.Sprintf("Kubernetes: pod %s of StatefulSet %s, %s=%d, Service %s", hostname, name, countFrom, count, service)
	return &Placement{Source: src, Rank: rank, Ranks: rk}, nil
}

// envInt reads the integer environment variable name.
func envInt(getenv func(string) string, name string) (int, error) {
	v := getenv(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want an integer", name, v)
	}
	return n, nil
}
