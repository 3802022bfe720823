/*
 * cmd_doctor.c - `perturb doctor`: what this machine can do, and the noise
 * sources it has, each with the command that removes it.
 *
 * Read-only: it reads /proc and /sys, asks PAPI, opens (and closes) one
 * perf_event counter; it changes nothing.  Every line is
 *   "ok    SECTION: what"      usable / quiet
 *   "warn  SECTION: what"      missing or noisy, followed by "      fix: COMMAND"
 *   "info  SECTION: what"      for the record
 * or, with --json, one object per line in an array
 * {"level", "section", "message", "fix"}.  Exit 0 whatever it finds.
 * The CPU and noise facts come from machine_probe() (lib/machine.h), the
 * probe whose findings `perturb run` stores: doctor judges them.
 */
#include "commands.h"
#include "options.h"
#include "backends/kbuild.h"
#include "core/cgroup.h"
#include "core/proc.h"
#include "lib/json.h"
#include "lib/machine.h"
#include "lib/util.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct doctor {
	int json, n;
	size_t warnings;
	/* the hardware counters (a PMU): probed once, pmu_probe() */
	enum { PMU_OK, PMU_DENIED, PMU_ABSENT } pmu;
	int pmu_errno;
};

static void say(struct doctor *d, const char *level, const char *section, const char *fix,
		const char *fmt, ...) PRINTF(5, 6);

static void say(struct doctor *d, const char *level, const char *section, const char *fix,
		const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (!strcmp(level, "warn"))
		d->warnings++;
	if (d->json) {
		json_t *o = json_object();
		json_object_set_new(o, "level", json_text(level));
		json_object_set_new(o, "section", json_text(section));
		json_object_set_new(o, "message", json_text(sb.buf));
		json_object_set_new(o, "fix", json_text(fix));
		char *line = json_line(o);
		printf("%s\n  %s", d->n++ ? "," : "", line);
		free(line);
	} else {
		printf("%-5s %s: %s\n", level, section, sb.buf);
		if (fix)
			printf("      fix: %s\n", fix);
	}
	strbuf_release(&sb);
}

static size_t count_lines_of(const char *path, int *ok)
{
	size_t len, n = 0;
	char *t = read_file(path, &len);

	*ok = t != NULL;
	for (size_t i = 0; t && i < len; i++)
		n += t[i] == '\n';
	free(t);
	return n;
}

static void check_root(struct doctor *d)
{
	if (geteuid() == 0)
		say(d, "ok", "root", NULL, "running as root: kernel variants can change the tracing state");
	else
		say(d, "warn", "root", "sudo perturb run ...",
		    "not root: kernel (tracing) variants and some noise fixes need root");
}

static void check_tracefs(struct doctor *d)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *dir = NULL;
	char *path, *tracers;
	size_t events;
	int ok;

	for (size_t i = 0; i < ARRAY_SIZE(dirs) && !dir; i++) {
		path = xasprintf("%s/available_tracers", dirs[i]);
		if (access(path, F_OK) == 0)
			dir = dirs[i];
		free(path);
	}
	if (!dir) {
		say(d, "warn", "tracefs", "sudo mount -t tracefs nodev /sys/kernel/tracing",
		    "not mounted (or not visible): kernel variants cannot run");
		return;
	}
	say(d, "ok", "tracefs", NULL, "mounted at %s", dir);
	path = xasprintf("%s/available_tracers", dir);
	tracers = read_line_file(path);
	free(path);
	if (tracers)
		say(d, "info", "tracefs", NULL, "tracers: %s", tracers);
	else
		say(d, "warn", "tracefs", "run perturb doctor as root",
		    "cannot read the available tracers: %s", strerror(errno));
	free(tracers);
	path = xasprintf("%s/available_events", dir);
	events = count_lines_of(path, &ok);
	free(path);
	if (ok)
		say(d, "info", "tracefs", NULL, "%zu events available", events);
}

/*
 * Can this process count its own cycles?  PMU_OK when the counter opens;
 * PMU_DENIED when the kernel refuses it (EACCES, EPERM: perf_event_paranoid
 * or a security module), which a lower perf_event_paranoid may fix;
 * PMU_ABSENT for any other error (ENOENT, EOPNOTSUPP, ENODEV: no hardware
 * counters, as in a VM without a virtual PMU), which no setting fixes.
 */
static void pmu_probe(struct doctor *d)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.disabled = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd >= 0) {
		close((int)fd);
		d->pmu = PMU_OK;
		return;
	}
	d->pmu_errno = errno;
	d->pmu = errno == EACCES || errno == EPERM ? PMU_DENIED : PMU_ABSENT;
}

static void check_papi(struct doctor *d)
{
	int rc = PAPI_library_init(PAPI_VER_CURRENT), code, presets = 0;
	struct strbuf comps = STRBUF_INIT;

	if (rc != PAPI_VER_CURRENT) {
		say(d, "warn", "papi", "sudo apt-get install libpapi-dev (the library perturb was built with)",
		    "PAPI_library_init failed: %s", rc > 0 ? "version mismatch" : PAPI_strerror(rc));
		return;
	}
	say(d, "ok", "papi", NULL, "PAPI %d.%d.%d", PAPI_VERSION_MAJOR(rc), PAPI_VERSION_MINOR(rc),
	    PAPI_VERSION_REVISION(rc));
	for (int i = 0; i < PAPI_num_components(); i++) {
		const PAPI_component_info_t *ci = PAPI_get_component_info(i);
		if (!ci)
			continue;
		strbuf_addf(&comps, "%s%s%s", comps.len ? ", " : "", ci->name,
			    ci->disabled ? " (disabled)" : "");
	}
	say(d, "info", "papi", NULL, "components: %s", comps.len ? comps.buf : "none");
	strbuf_release(&comps);
	code = 0 | PAPI_PRESET_MASK;
	if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
		do {
			if (PAPI_query_event(code) == PAPI_OK)
				presets++;
		} while (PAPI_enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
	}
	if (presets)
		say(d, "ok", "papi", NULL, "%d preset events available", presets);
	else if (d->pmu == PMU_ABSENT)
		say(d, "info", "papi", NULL,
		    "no preset event: this machine has no hardware counters (cycles: %s), which "
		    "no setting changes; software counters (task-clock, page-faults) still work",
		    strerror(d->pmu_errno));
	else if (d->pmu == PMU_DENIED)
		say(d, "warn", "papi", "sudo sysctl kernel.perf_event_paranoid=1",
		    "no preset event available: the kernel refuses the hardware counters (%s)",
		    strerror(d->pmu_errno));
	else
		say(d, "warn", "papi", NULL,
		    "no preset event available, although the cycles counter opens: PAPI "
		    "does not know this CPU (papi_avail lists what it sees)");
	PAPI_shutdown();
}

static void check_perf(struct doctor *d)
{
	char *paranoid = read_line_file("/proc/sys/kernel/perf_event_paranoid");

	if (!paranoid) {
		say(d, "warn", "perf", NULL, "no /proc/sys/kernel/perf_event_paranoid: no perf events");
		return;
	}
	if (atoi(paranoid) > 1 && geteuid() != 0 && d->pmu == PMU_ABSENT)
		say(d, "info", "perf", NULL,
		    "perf_event_paranoid = %s; lowering it would not help: there are no hardware "
		    "counters here", paranoid);
	else if (atoi(paranoid) > 1 && geteuid() != 0)
		say(d, "warn", "perf", "sudo sysctl kernel.perf_event_paranoid=1",
		    "perf_event_paranoid = %s: user-space counting of this process is restricted",
		    paranoid);
	else
		say(d, "ok", "perf", NULL, "perf_event_paranoid = %s", paranoid);
	free(paranoid);
	if (d->pmu == PMU_OK)
		say(d, "ok", "perf", NULL, "hardware events: the cycles counter opens");
	else if (d->pmu == PMU_DENIED)
		say(d, "warn", "perf", "sudo sysctl kernel.perf_event_paranoid=1",
		    "hardware events refused (cycles: %s)", strerror(d->pmu_errno));
	else
		say(d, "info", "perf", NULL,
		    "no hardware counters (cycles: %s): a VM without a virtual PMU has none; "
		    "counters: of the experiment are then recorded as unavailable",
		    strerror(d->pmu_errno));
}

/* Is flag a word of /proc/cpuinfo's first "flags" line? */
static int cpu_has_flag(const char *flag)
{
	char *info = read_file("/proc/cpuinfo", NULL), *line, *end;
	int found = 0;
	size_t len = strlen(flag);

	if (info && (line = strstr(info, "\nflags"))) {
		end = strchr(line + 1, '\n');
		for (char *p = strchr(line, ':'); p && (!end || p < end); p = strchr(p + 1, ' '))
			if (!strncmp(p + 1, flag, len) && (p[1 + len] == ' ' || p[1 + len] == '\n'))
				found = 1;
	}
	free(info);
	return found;
}

static void check_qemu(struct doctor *d)
{
	if (program_exists("qemu-system-x86_64"))
		say(d, "ok", "qemu", NULL, "qemu-system-x86_64 found");
	else
		say(d, "warn", "qemu", "sudo apt-get install qemu-system-x86",
		    "qemu-system-x86_64 not on PATH: qemu variants cannot run");
	if (access("/dev/kvm", R_OK | W_OK) == 0)
		say(d, "ok", "kvm", NULL, "/dev/kvm usable");
	else if (access("/dev/kvm", F_OK) == 0)
		say(d, "warn", "kvm", "sudo usermod -aG kvm $USER", "/dev/kvm exists but is not usable: %s",
		    strerror(errno));
	else if (cpu_has_flag("vmx"))
		say(d, "warn", "kvm", "sudo modprobe kvm_intel",
		    "no /dev/kvm: qemu would emulate (slow)");
	else if (cpu_has_flag("svm"))
		say(d, "warn", "kvm", "sudo modprobe kvm_amd",
		    "no /dev/kvm: qemu would emulate (slow)");
	else
		say(d, "warn", "kvm", NULL,
		    "no /dev/kvm, and the CPU offers no hardware virtualisation (no vmx or svm "
		    "flag in /proc/cpuinfo; in a VM: nested virtualisation is off): qemu "
		    "variants are emulated (slow); enable VT-x/AMD-V in the firmware or the host");
	char why[300];
	static const char fix[] = "sudo apt-get install linux-source-6.1 flex bison bc libelf-dev";
	if (!kbuild_tools(why, sizeof(why)))
		say(d, "warn", "kernels", fix, "%s: boot: config: variants cannot be built here",
		    why);
	else if (access(KBUILD_DEFAULT_SOURCE, R_OK) < 0)
		say(d, "warn", "kernels", fix, "no %s: boot: config: needs a source: here",
		    KBUILD_DEFAULT_SOURCE);
	else
		say(d, "ok", "kernels", NULL, "boot: config: can build kernels (the tools and %s)",
		    KBUILD_DEFAULT_SOURCE);
}

/* Isolated CPUs, or the ones this machine could isolate: every online CPU
 * but CPU 0 and its SMT siblings, which stay with the system. */
static void check_isolation(struct doctor *d, const struct machine_info *m)
{
	const char *keep = m->cpu0_siblings ? m->cpu0_siblings : "0";
	char *iso, *fix;

	if (m->isolated && *m->isolated) {
		say(d, "ok", "isolcpus", NULL, "isolated CPUs %s (use them with cpus: in the experiment)",
		    m->isolated);
		return;
	}
	if (!(iso = machine_isolation_cpus(m->online, keep))) {
		say(d, "info", "isolcpus", NULL,
		    "no isolated CPUs, and none to isolate: online CPUs %s, and CPU %s stays with the "
		    "system; workloads share CPUs with it", m->online ? m->online : "unknown", keep);
		return;
	}
	fix = xasprintf("add isolcpus=%s nohz_full=%s to the kernel command line, reboot; "
			"then cpus: [%s] in the experiment", iso, iso, iso);
	say(d, "info", "isolcpus", fix,
	    "no isolated CPUs: workloads share CPUs with the system (online: %s; CPU %s stays "
	    "with the system)", m->online ? m->online : "unknown", keep);
	free(fix);
	free(iso);
}

static void check_cpu(struct doctor *d, const struct machine_info *m)
{
	const char *nt = m->no_turbo, *boost = m->boost;

	say(d, "info", "cpu", NULL, "%s, %d online CPUs",
	    machine_has(m->cpu_model) ? m->cpu_model : "model unknown", m->cores);

	if (!machine_has(m->governor))
		say(d, "info", "governor", NULL, "no cpufreq (a VM, or no driver): frequency not controlled here");
	else if (!strcmp(m->governor, "performance"))
		say(d, "ok", "governor", NULL, "performance");
	else
		say(d, "warn", "governor", "sudo cpupower frequency-set -g performance",
		    "%s: the frequency follows the load", m->governor);

	if (nt && !strcmp(nt, "0"))
		say(d, "warn", "boost", "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo",
		    "turbo on (intel_pstate): the clock depends on temperature and load");
	else if (boost && !strcmp(boost, "1"))
		say(d, "warn", "boost", "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost",
		    "boost on: the clock depends on temperature and load");
	else if (boost || nt)
		say(d, "ok", "boost", NULL, "off");
	else
		say(d, "info", "boost", NULL, "no boost control here");

	if (!machine_has(m->smt))
		say(d, "info", "smt", NULL, "unknown");
	else if (!strcmp(m->smt, "on"))
		say(d, "warn", "smt", "echo off | sudo tee /sys/devices/system/cpu/smt/control",
		    "SMT on: a sibling thread shares the core");
	else
		say(d, "ok", "smt", NULL, "off");

	if (machine_has(m->aslr) && strcmp(m->aslr, "0"))
		say(d, "warn", "aslr", "sudo sysctl kernel.randomize_va_space=0",
		    "on (%s): code and data layout change from run to run", m->aslr);
	else if (machine_has(m->aslr))
		say(d, "ok", "aslr", NULL, "off");

	if (machine_has(m->loadavg)) {
		int cpus = m->cores > 0 ? m->cores : 1;
		if (atof(m->loadavg) > 0.5 * cpus)
			say(d, "warn", "load", "stop other work on this machine (top shows what runs)",
			    "load average %s on %d CPUs: runs compete for the CPUs", m->loadavg,
			    m->cores);
		else
			say(d, "ok", "load", NULL, "load average %s", m->loadavg);
	}

	check_isolation(d, m);
}

/* How runs will be kept in their cgroup (core/proc.h: proc_containment),
 * found without making one. */
static void check_containment(struct doctor *d)
{
	char why[512];

	if (cgroup_usable(why, sizeof(why)) < 0)
		say(d, "warn", "containment", "run perturb as root on a machine with cgroup v2",
		    "runs are contained by process group only (%s): a process that leaves it "
		    "(setsid) can outlive its run", why);
	else if (proc_clone_into_cgroup(why, sizeof(why)))
		say(d, "ok", "containment", NULL, "each run starts in a cgroup of its own "
		    "(clone-into-cgroup: clone3 CLONE_INTO_CGROUP)");
	else
		say(d, "info", "containment", NULL, "each run moves into a cgroup of its own "
		    "before its exec (cgroup-procs-write: %s)", why);
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = { 0 };
	struct machine_info m;
	struct opt opts[] = {
		OPT_FLAG(0, "json", &d.json, "one object per check: level, section, message, fix"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "no warnings"),
		OPT_END(),
	};
	int rc;

	if ((rc = parse_options(argc, argv, opts, "doctor")))
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (d.json)
		printf("[");
	check_root(&d);
	check_tracefs(&d);
	pmu_probe(&d);
	check_papi(&d);
	check_perf(&d);
	check_qemu(&d);
	check_containment(&d);
	machine_probe(&m);
	check_cpu(&d, &m);
	machine_release(&m);
	if (d.json)
		printf("\n]\n");
	else
		printf("\n%zu warning%s\n", d.warnings, d.warnings == 1 ? "" : "s");
	return EXIT_OK;
}
