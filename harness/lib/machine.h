/*
 * machine.h - the one probe of the machine perturb runs on: what `perturb
 * run` stores with each run (provenance) and what `perturb doctor` judges.
 *
 * The provenance fields are malloc'd strings, "unavailable" when they cannot
 * be read (that word is what the store keeps); machine_has() tells them
 * apart.  The noise controls (boost, no_turbo, isolated) are raw file
 * contents, NULL when the file is absent: doctor only.
 */
#ifndef PERTURB_MACHINE_H
#define PERTURB_MACHINE_H

struct machine_info {
	char *hostname;
	char *kernel_release;	/* uname -r */
	char *kernel_version;	/* uname -v */
	char *kernel_cmdline;	/* /proc/cmdline */
	char *arch;
	char *cpu_model;	/* /proc/cpuinfo "model name" */
	int cores;		/* online CPUs */
	char *governor;		/* cpu0 scaling_governor */
	char *smt;		/* /sys/devices/system/cpu/smt/active: "on"/"off" */
	char *aslr;		/* /proc/sys/kernel/randomize_va_space */
	char *loadavg;		/* first three fields of /proc/loadavg
				   (machine_loadavg()) */
	char *perturb_version;
	/* how each run is kept in its cgroup (core/proc.h: proc_containment);
	 * set by the study, NULL elsewhere (then not in machine_json) */
	char *containment;
	/* not stored: NULL when absent */
	char *boost;		/* /sys/devices/system/cpu/cpufreq/boost */
	char *no_turbo;		/* /sys/devices/system/cpu/intel_pstate/no_turbo */
	char *isolated;		/* /sys/devices/system/cpu/isolated */
	char *online;		/* /sys/devices/system/cpu/online: "0-3" */
	char *cpu0_siblings;	/* cpu0/topology/thread_siblings_list: "0,4" */
};

void machine_probe(struct machine_info *m);
/* The three load averages of /proc/loadavg ("0.52 0.61 0.70"): malloc'd,
 * NULL when it cannot be read. */
char *machine_loadavg(void);
/*
 * The CPUs a kernel command line could isolate (isolcpus=, nohz_full=) on
 * a machine whose online CPUs are the list online ("0-3,8-11", the kernel's
 * cpulist format), keeping the CPUs of keep (CPU 0 and its SMT siblings,
 * say) for the system: online minus keep, as a cpulist ("1-3,9-11"),
 * malloc'd.  NULL when nothing is left to isolate (one core) or a list
 * cannot be read (malformed, or CPUs numbered 4096 and above).
 */
char *machine_isolation_cpus(const char *online, const char *keep);
void machine_release(struct machine_info *m);
/* Was this provenance field read (not NULL, not "unavailable")? */
int machine_has(const char *field);
/*
 * The provenance fields as one JSON object on one line, in the order of the
 * struct, "containment" only when set, "cores" last: malloc'd.  The noise controls are not in it.
 */
char *machine_json(const struct machine_info *m);

/*
 * How busy the machine is now, read in a few microseconds (for `perturb
 * run`'s warnings before and after a study): the 1-minute load average and
 * the runnable tasks of /proc/loadavg (the reader itself not counted), and
 * the lowest and highest current frequency of the online CPUs
 * (cpuN/cpufreq/scaling_cur_freq, in MHz; has_freq 0 where cpufreq is
 * absent, as in most virtual machines).  Fields that cannot be read are
 * NaN / -1.
 */
struct machine_load {
	double load1;
	int running;
	int cores;
	int has_freq;
	double freq_min_mhz, freq_max_mhz;
};
void machine_load_sample(struct machine_load *l);

/*
 * Is a load average too high for a study that keeps cpus_used CPUs busy on
 * a machine of cores CPUs?  The others' load is load minus cpus_used when
 * ours counts in it (ours: sampled while or just after the runs ran), the
 * whole load otherwise; it is too high when it is more than half a CPU
 * beyond the CPUs the study leaves free (cores - cpus_used, at least 0):
 * then other work had to share the study's CPUs.  0 for a NaN load or
 * cores < 1.
 */
int machine_overloaded(double load, int cores, int cpus_used, int ours);

#endif
