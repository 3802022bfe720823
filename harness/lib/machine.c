/* machine.c - see machine.h */
#include "machine.h"
#include "json.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static char *or_unavailable(char *s)
{
	return s ? s : xstrdup("unavailable");
}

static char *cpu_model(void)
{
	char *info = read_file("/proc/cpuinfo", NULL);
	char *ret = NULL;
	if (!info)
		return NULL;
	for (char *line = strtok(info, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "model name", 10)) {
			char *colon = strchr(line, ':');
			if (colon) {
				colon++;
				while (*colon == ' ' || *colon == '\t')
					colon++;
				ret = xstrdup(colon);
			}
			break;
		}
	}
	free(info);
	return ret;
}

char *machine_loadavg(void)
{
	char *load = read_line_file("/proc/loadavg"), *p = load;

	/* keep the three load averages */
	for (int i = 0; i < 3 && p; i++)
		p = strchr(p + 1, ' ');
	if (p)
		*p = '\0';
	return load;
}

void machine_probe(struct machine_info *m)
{
	struct utsname u;
	char host[256];

	memset(m, 0, sizeof(*m));
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		m->hostname = xstrdup(host);
	}
	if (uname(&u) == 0) {
		m->kernel_release = xstrdup(u.release);
		m->kernel_version = xstrdup(u.version);
		m->arch = xstrdup(u.machine);
	}
	m->kernel_cmdline = read_line_file("/proc/cmdline");
	m->cpu_model = cpu_model();
	m->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m->governor = read_line_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	char *smt = read_line_file("/sys/devices/system/cpu/smt/active");
	if (smt) {
		m->smt = xstrdup(!strcmp(smt, "1") ? "on" : "off");
		free(smt);
	}
	m->aslr = read_line_file("/proc/sys/kernel/randomize_va_space");
	m->loadavg = machine_loadavg();
	m->hostname = or_unavailable(m->hostname);
	m->kernel_release = or_unavailable(m->kernel_release);
	m->kernel_version = or_unavailable(m->kernel_version);
	m->kernel_cmdline = or_unavailable(m->kernel_cmdline);
	m->arch = or_unavailable(m->arch);
	m->cpu_model = or_unavailable(m->cpu_model);
	m->governor = or_unavailable(m->governor);
	m->smt = or_unavailable(m->smt);
	m->aslr = or_unavailable(m->aslr);
	m->loadavg = or_unavailable(m->loadavg);
	m->perturb_version = xstrdup(PERTURB_VERSION);
	m->boost = read_line_file("/sys/devices/system/cpu/cpufreq/boost");
	m->no_turbo = read_line_file("/sys/devices/system/cpu/intel_pstate/no_turbo");
	m->isolated = read_line_file("/sys/devices/system/cpu/isolated");
	m->online = read_line_file("/sys/devices/system/cpu/online");
	m->cpu0_siblings = read_line_file("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list");
}

#define MAX_CPUS 4096

/* A cpulist ("0-3,8,10-11") into set[MAX_CPUS]; -1 when malformed. */
static int cpulist_parse(const char *s, unsigned char *set)
{
	long a, b;
	char *end;

	while (s && *s) {
		if (*s < '0' || *s > '9')
			return -1;
		a = b = strtol(s, &end, 10);
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				return -1;
			b = strtol(s, &end, 10);
		}
		if (a > b || b >= MAX_CPUS)
			return -1;
		for (long c = a; c <= b; c++)
			set[c] = 1;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return 0;
}

char *machine_isolation_cpus(const char *online, const char *keep)
{
	unsigned char *on = xcalloc(MAX_CPUS, 1), *kept = xcalloc(MAX_CPUS, 1);
	struct strbuf sb = STRBUF_INIT;
	char *ret = NULL;

	if (!online || cpulist_parse(online, on) < 0 || cpulist_parse(keep, kept) < 0)
		goto out;
	for (int c = 0; c < MAX_CPUS; c++) {
		int last = c;
		if (!on[c] || kept[c])
			continue;
		while (last + 1 < MAX_CPUS && on[last + 1] && !kept[last + 1])
			last++;
		strbuf_addf(&sb, "%s%d", sb.len ? "," : "", c);
		if (last > c)
			strbuf_addf(&sb, "-%d", last);
		c = last;
	}
	if (sb.len)
		ret = strbuf_detach(&sb);
out:
	strbuf_release(&sb);
	free(on);
	free(kept);
	return ret;
}

int machine_has(const char *field)
{
	return field && strcmp(field, "unavailable");
}

void machine_release(struct machine_info *m)
{
	free(m->hostname);
	free(m->kernel_release);
	free(m->kernel_version);
	free(m->kernel_cmdline);
	free(m->arch);
	free(m->cpu_model);
	free(m->governor);
	free(m->smt);
	free(m->aslr);
	free(m->loadavg);
	free(m->perturb_version);
	free(m->containment);
	free(m->boost);
	free(m->no_turbo);
	free(m->isolated);
	free(m->online);
	free(m->cpu0_siblings);
	memset(m, 0, sizeof(*m));
}

char *machine_json(const struct machine_info *m)
{
	const struct { const char *k; const char *v; } f[] = {
		{ "hostname", m->hostname },
		{ "kernel_release", m->kernel_release },
		{ "kernel_version", m->kernel_version },
		{ "kernel_cmdline", m->kernel_cmdline },
		{ "arch", m->arch },
		{ "cpu_model", m->cpu_model },
		{ "governor", m->governor },
		{ "smt", m->smt },
		{ "aslr", m->aslr },
		{ "loadavg", m->loadavg },
		{ "perturb_version", m->perturb_version },
	};
	json_t *obj = json_object();

	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		json_object_set_new(obj, f[i].k, json_text(f[i].v ? f[i].v : "unavailable"));
	if (m->containment)	/* a study's: the line is otherwise as it always was */
		json_object_set_new(obj, "containment", json_text(m->containment));
	json_object_set_new(obj, "cores", json_integer(m->cores));
	return json_line(obj);
}

void machine_load_sample(struct machine_load *l)
{
	char *line = read_line_file("/proc/loadavg"), path[96];
	int running = -1, total;

	l->load1 = NAN;
	l->running = -1;
	l->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	l->has_freq = 0;
	l->freq_min_mhz = l->freq_max_mhz = NAN;
	if (line && sscanf(line, "%lf %*f %*f %d/%d", &l->load1, &running, &total) == 3)
		l->running = running > 0 ? running - 1 : 0;	/* not the reader */
	free(line);
	for (int cpu = 0; cpu < 4096; cpu++) {
		char *f;
		double mhz;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq",
			 cpu);
		if (!(f = read_line_file(path))) {
			if (cpu >= l->cores)
				break;
			continue;
		}
		mhz = strtod(f, NULL) / 1000;
		free(f);
		if (!l->has_freq || mhz < l->freq_min_mhz)
			l->freq_min_mhz = mhz;
		if (!l->has_freq || mhz > l->freq_max_mhz)
			l->freq_max_mhz = mhz;
		l->has_freq = 1;
	}
}

int machine_overloaded(double load, int cores, int cpus_used, int ours)
{
	double others, spare;

	if (isnan(load) || cores < 1)
		return 0;
	if (cpus_used < 1)
		cpus_used = 1;
	others = ours ? load - cpus_used : load;
	spare = cores > cpus_used ? cores - cpus_used : 0;
	return others > spare + 0.5;
}
