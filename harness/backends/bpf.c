/* bpf.c - the bpf: block: bpftrace as a managed daemon; see bpf.h */
#include "bpf.h"
#include "core/proc.h"
#include "core/packages.h"
#include "lib/util.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define READY_MARK "perturb: bpf probes attached"
#define MEMLOCK_BYTES (8192UL * 1024)

/* Where text holds word at a probe's start, followed by one of after. */
static const char *find_word(const char *text, const char *word, const char *after)
{
	size_t n = strlen(word);
	for (const char *p = text; (p = strstr(p, word)); p += n) {
		int start = p == text || isspace((unsigned char)p[-1]) || p[-1] == ',';
		if (start && p[n] && strchr(after, p[n]))
			return p;
	}
	return NULL;
}

/* A probe of type word ("kprobe" in "kprobe:f"). */
static const char *find_type(const char *text, const char *word)
{
	return find_word(text, word, ":");
}

int bpf_parse(struct yn_ctx *y, const struct ynode *block, void *cfg)
{
	static const char *const keys[] = { "program", "file", "probes", NULL };
	struct bpf_cfg *c = cfg;
	const struct ynode *prog = NULL, *file = NULL, *probes = NULL;
	const char *s;
	int n;

	if (yn_want_map(y, block, "bpf") || yn_check_keys(y, block, "bpf", keys))
		return -1;
	prog = yn_get(block, "program");
	file = yn_get(block, "file");
	probes = yn_get(block, "probes");
	n = !!prog + !!file + !!probes;
	if (n != 1)
		return yn_fail(y, block, "bpf: needs exactly one of program, file or probes, "
			       "got %d", n);
	if (prog) {
		if (yn_want_str(y, prog, "program", &s))
			return -1;
		c->text = xstrdup(s);
	} else if (file) {
		if (yn_want_str(y, file, "file", &s))
			return -1;
		if (!(c->text = read_file(s, NULL)))
			return yn_fail(y, file, "cannot read the bpftrace program '%s'", s);
	} else {
		char **v = NULL;
		size_t nv = 0;
		struct strbuf sb = STRBUF_INIT;
		if (yn_want_strv(y, probes, "probes", 1, &v, &nv)) {
			yn_strv_free(v, nv);
			return -1;
		}
		/* each probe counts its hits, by probe */
		for (size_t i = 0; i < nv; i++)
			strbuf_addf(&sb, "%s%s", i ? ",\n" : "", v[i]);
		strbuf_addstr(&sb, "\n{ @hits[probe] = count(); }\n");
		yn_strv_free(v, nv);
		c->text = strbuf_detach(&sb);
	}
	c->has_begin = find_word(c->text, "BEGIN", " \t\n{,") != NULL;
	return 0;
}

void bpf_release(void *cfg)
{
	struct bpf_cfg *c = cfg;
	free(c->text);
	c->text = NULL;
}

/* Each tracepoint:CAT:NAME without wildcards must be an event of tracefs. */
static int check_tracepoints(const char *text, const char *tracefs, char *why, size_t len)
{
	const char *types[] = { "tracepoint", "t" };

	for (size_t t = 0; t < ARRAY_SIZE(types); t++) {
		size_t n = strlen(types[t]);
		for (const char *p = text; (p = find_type(p, types[t])); p += n) {
			const char *q = p + n + 1;
			size_t m = strcspn(q, " \t\n,{/");
			char *name = xstrndup(q, m), *colon = strchr(name, ':'), *path;
			int ok = 1;
			if (colon && !strpbrk(name, "*?[")) {
				*colon = '/';
				path = xasprintf("%s/events/%s", tracefs, name);
				ok = file_exists(path);
				free(path);
				*colon = ':';
			}
			if (!ok) {
				why_error(why, len, "tracepoint:%s: no such event in %s/events", name,
					  tracefs);
				free(name);
				return -1;
			}
			free(name);
		}
	}
	return 0;
}

int bpf_check_attach(const struct bpf_cfg *c, const char *tracefs, char *why, size_t len)
{
	static const struct {
		const char *type;
		const char *needs;	/* under tracefs, or absolute */
		const char *reason;
	} types[] = {
		{ "kprobe", "kprobe_events", "kprobes need kprobe_events in tracefs (absent: "
		  "kernel lockdown or CONFIG_KPROBE_EVENTS off)" },
		{ "kretprobe", "kprobe_events", "kretprobes need kprobe_events in tracefs "
		  "(absent: kernel lockdown or CONFIG_KPROBE_EVENTS off)" },
		{ "k", "kprobe_events", "kprobes need kprobe_events in tracefs (absent: kernel "
		  "lockdown or CONFIG_KPROBE_EVENTS off)" },
		{ "kr", "kprobe_events", "kretprobes need kprobe_events in tracefs (absent: "
		  "kernel lockdown or CONFIG_KPROBE_EVENTS off)" },
		{ "uprobe", "uprobe_events", "uprobes need uprobe_events in tracefs "
		  "(CONFIG_UPROBE_EVENTS)" },
		{ "uretprobe", "uprobe_events", "uretprobes need uprobe_events in tracefs "
		  "(CONFIG_UPROBE_EVENTS)" },
		{ "kfunc", "/sys/kernel/btf/vmlinux", "kfunc (fentry) probes need the kernel's "
		  "BTF, /sys/kernel/btf/vmlinux" },
		{ "kretfunc", "/sys/kernel/btf/vmlinux", "kretfunc (fexit) probes need the "
		  "kernel's BTF, /sys/kernel/btf/vmlinux" },
		{ "fentry", "/sys/kernel/btf/vmlinux", "fentry probes need the kernel's BTF, "
		  "/sys/kernel/btf/vmlinux" },
		{ "fexit", "/sys/kernel/btf/vmlinux", "fexit probes need the kernel's BTF, "
		  "/sys/kernel/btf/vmlinux" },
	};

	if (!program_exists("bpftrace"))
		return why_error(why, len, "bpf: needs the program 'bpftrace' (Debian package: "
				 "bpftrace)");
	if (!file_exists(BPF_STATS_SYSCTL))
		return why_error(why, len, "bpf: this kernel has no %s: no BPF run statistics",
				 BPF_STATS_SYSCTL);
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		char *path;
		int ok;
		if (!find_type(c->text, types[i].type))
			continue;
		path = types[i].needs[0] == '/' ? xstrdup(types[i].needs) :
		       xasprintf("%s/%s", tracefs, types[i].needs);
		ok = file_exists(path);
		free(path);
		if (!ok)
			return why_error(why, len, "%s: refused on this kernel: %s", types[i].type,
					 types[i].reason);
	}
	return check_tracepoints(c->text, tracefs, why, len);
}

void bpf_attach_types(const struct bpf_cfg *c, char *buf, size_t len)
{
	/* the short forms (t:, k:, kr:) are named by their long ones */
	static const struct { const char *type, *name; } types[] = {
		{ "tracepoint", "tracepoint" }, { "t", "tracepoint" },
		{ "rawtracepoint", "rawtracepoint" }, { "rt", "rawtracepoint" },
		{ "kprobe", "kprobe" }, { "k", "kprobe" },
		{ "kretprobe", "kretprobe" }, { "kr", "kretprobe" },
		{ "kfunc", "fentry" }, { "fentry", "fentry" },
		{ "kretfunc", "fexit" }, { "fexit", "fexit" },
		{ "uprobe", "uprobe" }, { "u", "uprobe" },
		{ "uretprobe", "uretprobe" }, { "ur", "uretprobe" },
		{ "usdt", "usdt" }, { "U", "usdt" },
	};
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(types) && at < len; i++) {
		if (!find_type(c->text, types[i].type) || strstr(buf, types[i].name))
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", types[i].name);
	}
	if (!buf[0])
		snprintf(buf, len, "program");
}

const char *bpf_ready_regex(const struct bpf_cfg *c)
{
	return c->has_begin ? "^Attaching [0-9]+ probes?" : "^" READY_MARK;
}

char **bpf_argv(const struct bpf_cfg *c, const char *path)
{
	const struct placeholder ph[] = {
		{ "{micro}", perturb_micro_exe() },
		{ "{perturb}", perturb_self_exe() },
	};
	char **argv, *text;
	FILE *f = fopen(path, "w");

	if (!f)
		return NULL;
	text = expand_placeholders(c->text, ph, ARRAY_SIZE(ph));
	fputs(text, f);
	free(text);
	if (!c->has_begin)
		fputs("\nBEGIN { printf(\"" READY_MARK "\\n\"); }\n", f);
	if (fclose(f) != 0)
		return NULL;
	argv = xcalloc(3, sizeof(*argv));
	argv[0] = xstrdup("bpftrace");
	argv[1] = xstrdup(path);
	return argv;
}

char *bpf_log_error(const char *path)
{
	char *text = read_file(path, NULL), *said;

	if (!text)
		return NULL;
	/* bpftrace's own RLIMIT_MEMLOCK complaint is not why it stopped */
	said = said_line(text, "ERROR: ", "RLIMIT_MEMLOCK");
	free(text);
	return said;
}

unsigned long long bpf_log_lost(const char *path)
{
	char *text = read_file(path, NULL), *p;
	unsigned long long lost = proc_log_tally(path);	/* of the lines dropped */

	for (p = text; p && (p = strstr(p, "Lost ")); p += 5)
		if (p == text || p[-1] == '\n') {
			char *end;
			unsigned long long n = strtoull(p + 5, &end, 10);
			if (end != p + 5 && !strncmp(end, " events", 7))
				lost += n;
		}
	free(text);
	return lost;
}

int bpf_read_stats(pid_t pid, struct bpf_stats *st)
{
	char dirpath[64];
	DIR *d;
	struct dirent *e;

	memset(st, 0, sizeof(*st));
	snprintf(dirpath, sizeof(dirpath), "/proc/%d/fdinfo", (int)pid);
	if (!(d = opendir(dirpath)))
		return -1;
	while ((e = readdir(d))) {
		char *path, *text, *p;
		if (e->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", dirpath, e->d_name);
		text = read_file(path, NULL);
		free(path);
		if (!text)
			continue;
		if (strstr(text, "prog_id:")) {
			st->programs++;
			if ((p = strstr(text, "run_time_ns:")))
				st->run_time_ns += strtoull(p + 12, NULL, 10);
			if ((p = strstr(text, "run_cnt:")))
				st->run_cnt += strtoull(p + 8, NULL, 10);
		}
		free(text);
	}
	closedir(d);
	return 0;
}

void bpf_memlock_raise(struct rlimit *old)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_MEMLOCK, old) < 0)
		return;
	r = *old;
	if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < MEMLOCK_BYTES) {
		r.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max > MEMLOCK_BYTES ?
			     MEMLOCK_BYTES : r.rlim_max;
		setrlimit(RLIMIT_MEMLOCK, &r);
	}
}

void bpf_memlock_restore(const struct rlimit *old)
{
	setrlimit(RLIMIT_MEMLOCK, old);
}
