/*
 * util.h - small helpers shared by every part of perturb.
 *
 * Contract: the x* allocators never return NULL (they abort with a message
 * on out-of-memory, the only condition perturb treats as fatal inside library
 * code).  error() and warning() print "perturb: error: ..." / "perturb:
 * warning: ..." on stderr; error() returns -1 so that library code can write
 * `return error("cannot open '%s': %s", path, strerror(errno));`.
 * Library code never calls exit().
 */
#ifndef PERTURB_UTIL_H
#define PERTURB_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PERTURB_VERSION "0.1.0"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PRINTF(f, a) __attribute__((format(printf, f, a)))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) PRINTF(1, 2);
/* Free a NULL-terminated array of malloc'd strings and the array (NULL: no-op). */
void argv_free(char **v);
/* Append a copy of s to *v, a NULL-terminated array of *n malloc'd strings
 * (NULL and 0 to begin), for argv_free(). */
void argv_push(char ***v, size_t *n, const char *s);
/* A copy of the NULL-terminated array v (an environment, an argv; NULL: an
 * empty one): malloc'd, for argv_free(). */
char **argv_copy(char *const *v);
/* Set key=value in *envp, a malloc'd environment (argv_copy()): its entry
 * replaced, or appended; with sep, and a value there, value is put in
 * front of the old one, joined by sep (a list: LD_PRELOAD). */
void env_put(char ***envp, const char *key, const char *value, const char *sep);

/* Grow *arr (of *alloc elements of size elem) so that it can hold need. */
void grow_array(void **arr, size_t *alloc, size_t need, size_t elem);
#define ALLOC_GROW(arr, need, alloc) \
	grow_array((void **)&(arr), &(alloc), (need), sizeof(*(arr)))

int error(const char *fmt, ...) PRINTF(1, 2);
/* error() into a caller's buffer: the reason into why[len], returns -1. */
int why_error(char *why, size_t len, const char *fmt, ...) PRINTF(3, 4);

/*
 * Put the calling process in a mount namespace of its own whose mounts do
 * not propagate back to the machine: "/" made private (recursively), or,
 * where "/" is no mount point (a chroot: EINVAL), each of the NULL-ended
 * paths, the mounts below which the caller will mount.  -1 (errno set)
 * when that cannot be done: nothing may be mounted then.
 */
int unshare_mounts_private(const char *const *paths);
/*
 * Why unshare_mounts_private(paths) cannot be done here (why filled, 1),
 * or 0 when it can: tried in a child process, whose namespace goes with
 * it.  A minbase chroot (debootstrap), whose "/" and /run are no mount
 * points, cannot: "no private mount namespace here: '/' and '/run' are
 * no mount points (mount: /run: not mount point; ...)".
 */
int private_mounts_unavailable(const char *const *paths, char *why, size_t len);
void warning(const char *fmt, ...) PRINTF(1, 2);
/* Quiet mode: warning() and note() print nothing. */
extern int perturb_quiet;
void note(const char *fmt, ...) PRINTF(1, 2);

/* A growable, always NUL-terminated string (git's strbuf, reduced). */
struct strbuf {
	char *buf;
	size_t len, alloc;
};
#define STRBUF_INIT { NULL, 0, 0 }
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) PRINTF(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_reset(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
/* Returns buf (never NULL; "" for an empty strbuf) and gives up ownership. */
char *strbuf_detach(struct strbuf *sb);
/* s as one word of a POSIX shell command line: as it is when it holds only
 * letters, digits and _ . / : = @ % + , -, else in single quotes (a quote
 * as '\'').  For commands that perturb prints for pasting. */
void strbuf_add_shell_word(struct strbuf *sb, const char *s);

/*
 * Placeholders: s with every "{name}" of table[0..n) replaced by its value;
 * any other text, unknown "{...}" included, stays as it is.  malloc'd.
 */
struct placeholder {
	const char *name;	/* with the braces: "{workdir}" */
	const char *value;
};
char *expand_placeholders(const char *s, const struct placeholder *table, size_t n);
/*
 * The same for a shell script (text a shell parses: a workload's shell:,
 * the word after sh -c): a value is never read as shell code, whatever it
 * holds (spaces, quotes, ;, $(...), newlines).  Each placeholder used
 * becomes a shell variable set at the script's start to its value, quoted
 * (strbuf_add_shell_word: "perturb_logdir='/a b'; "), and each occurrence a
 * reference to it, quoted for where it stands: "${perturb_logdir}"
 * outside quotes, ${perturb_logdir} inside double quotes, '"${...}"'
 * inside single quotes; so "{logdir}/x", {logdir}/x and '{logdir}' all
 * give the value itself (docs/experiment.md).  malloc'd.
 */
char *expand_placeholders_script(const char *s, const struct placeholder *table, size_t n);
/*
 * A command's words with placeholders expanded (n words, a NULL-terminated
 * malloc'd array for argv_free()): a word that a shell runs as its script
 * - the word after an option cluster holding c (-c, -ec) somewhere after
 * a shell's name (sh, bash, dash, ash, ksh, mksh, zsh, busybox: "sh -c S",
 * "taskset -c 0 bash -ec S") - with expand_placeholders_script(), every
 * other word with expand_placeholders() (it reaches the program as one
 * argument, never through a shell).
 */
char **expand_placeholders_argv(char *const *words, size_t nw, const struct placeholder *table,
				size_t n);

/*
 * getpid(), without a system call after the first: the one test of "is
 * this the process that opened it, or a fork's copy?" that the runner
 * makes several times a run (a system call costs about 1 us on a
 * paravirtualised VM; glibc stopped caching the pid in 2.25).  A fork()
 * (pthread_atfork's child handler) forgets it.  Never from a CLONE_VM
 * child (proc_spawn.c's CHILD_SIDE code), which shares the parent's copy.
 */
pid_t self_pid(void);

/* CLOCK_MONOTONIC in seconds / nanoseconds. */
double now_mono(void);
int64_t now_mono_ns(void);
/* Wall-clock time as "2026-11-30T10:00:00Z" into buf (>= 21 bytes). */
void now_iso8601(char *buf, size_t len);

/*
 * Durations: "250ms", "30s", "5m", "1h", "1500us", "20ns", or a bare
 * non-negative number meaning seconds.  Returns 0 and stores seconds, or -1
 * on malformed / negative / non-finite input.
 */
int parse_duration(const char *s, double *seconds);
/*
 * Percentages, the one grammar of every percentage option and experiment key
 * (docs/experiment.md, "Values"; docs/perturb.1, OPTIONS): "5%" (-> 0.05) or
 * a bare fraction below 1 in absolute value, "0.05".  A bare number of 1 or
 * more is refused as ambiguous: "5" could mean 5 % or 500 %.  Returns 0 and
 * stores the fraction; else PERCENT_AMBIGUOUS for such a bare number, -1 for
 * anything else, with why[len] (when why is not NULL) saying what was wrong
 * and showing both spellings ("write 5% for 5 %, or the fraction 0.05").
 * The sign and the range are the caller's to check.
 */
#define PERCENT_AMBIGUOUS (-2)
int parse_percent_why(const char *s, double *fraction, char *why, size_t len);
/* parse_percent_why() without the reason. */
int parse_percent(const char *s, double *fraction);
/*
 * Sizes (experiment files' memory:, perturb gen's SIZE; docs/experiment.md):
 * a decimal number of bytes with an optional suffix K, M, G or T
 * (powers of 1024, the letter in either case, optionally followed by "iB",
 * "ib", "B" or "b": 64M = 64m = 64MiB = 64mb = 67108864).  No sign, no spaces, no fractions.
 * Returns 0 and stores the size, or -1 on malformed input or a value that
 * does not fit in 64 bits (nothing printed).
 */
int parse_size(const char *s, uint64_t *out);
/* Strict decimal integer in [min, max]; -1 on anything else. */
int parse_long(const char *s, long min, long max, long *out);
/* Strict finite double; -1 otherwise. */
int parse_double(const char *s, double *out);

/* Read a whole file; returns malloc'd NUL-terminated buffer or NULL (errno).
 * For files perturb knows (/proc, its own); a file the user names is read
 * with read_user_file(). */
char *read_file(const char *path, size_t *len);
/*
 * Read a file the user named (an experiment, an include, a workload file,
 * a Kconfig fragment): opened once, without blocking (O_NONBLOCK: a FIFO
 * never hangs the open), checked on that descriptor to be a regular file,
 * read up to max bytes and no further.  Returns the malloc'd
 * NUL-terminated text (*len its length), or NULL with errno and why[len]
 * (why may be NULL) saying what was wrong: the open's error, "Is a
 * directory" (EISDIR), "not a regular file (a FIFO)" (EINVAL; a
 * character device, a block device, a socket), "larger than 16 MiB"
 * (EFBIG; max as a size).
 */
char *read_user_file(const char *path, size_t max, size_t *len, char *why, size_t whylen);
/* Read a small sysfs/procfs file, strip trailing newline; NULL if absent. */
char *read_line_file(const char *path);
/* mkdir -p; returns 0 or -errno. */
int mkdir_p(const char *path, unsigned mode);
/*
 * s (NULL: nothing) with each byte c written as subst[c] where that is set
 * (subst may be NULL: none), else as itself: the one escaping of text that
 * perturb did not write (a workload's output, a foreign database's names)
 * wherever it is shown - on stderr, in every report format (each supplies
 * its subst: reports/fmt.h).  What a terminal or a viewer would obey
 * rather than show never passes: a control byte (ESC, BEL, CR, tab,
 * newline, ..., DEL), a C1 control
 * (U+0080..U+009F) and a byte that does not start valid UTF-8 are written
 * as "\xNN", each of their bytes; valid UTF-8 as itself.
 */
void escape_bytes(FILE *out, const char *s, const char *const subst[256]);
/* escape_bytes(s) without subst as a string (malloc'd; "" for NULL). */
char *escape_bytes_str(const char *s);
/* printf to out with all it writes escaped (escape_bytes() without subst:
 * a newline or tab too, so the caller ends the line): a row of a table
 * whose cells a database gave (perturb runs, perturb status). */
void printf_shown(FILE *out, const char *fmt, ...) PRINTF(2, 3);
/* Is s valid UTF-8 (RFC 3629) throughout? */
int utf8_valid(const char *s);
/*
 * Base64 (RFC 4648, with '=' padding): what YAML's !!binary holds, so that
 * bytes that are not UTF-8 (a Latin-1 file name) travel in a YAML file.
 * base64_encode: malloc'd.  base64_decode: s[0..len) (blanks and line
 * breaks ignored) appended to out; 0, or -1 when it is not base64.
 */
char *base64_encode(const void *p, size_t n);
int base64_decode(const char *s, size_t len, struct strbuf *out);
/* text line by line, each as prefix then the line escaped by esc (NULL:
 * escape_bytes() without subst) then a newline: a program's output (its
 * newlines kept, whatever else it holds shown, not obeyed). */
void put_lines(FILE *out, const char *text, const char *prefix,
	       void (*esc)(FILE *, const char *));

/*
 * A name (a workload's, a variant's, a matrix instance's: "w[p=../x]") as
 * one safe file-name component, for every path perturb builds from a name
 * (work folders, logs, one-liner files): malloc'd, never empty, never "."
 * or "..", no '/', never starting with '.' or '-'.  Letters, digits and
 * _ + - = [ ] @ stay, '.' stays after the first byte, every other byte is
 * %XX (hex, upper case), so distinct names give distinct components.  A
 * component longer than PATH_COMPONENT_MAX bytes is cut and ends in '~'
 * and 16 hex digits of a hash (FNV-1a, 64 bits) of the whole name.
 */
#define PATH_COMPONENT_MAX 200
char *path_component(const char *name);
/* Directory part of path, malloc'd ("." when there is none). */
char *dir_name(const char *path);
/* Follow path's symbolic links to the name they end in (which may not
 * exist: st->st_mode is then 0; *st is lstat()'s of that name).
 * malloc'd, or NULL with errno (ELOOP after 40 links). */
struct stat;
char *path_follow(const char *path, struct stat *st);
/* The name path's file has or would get: its symbolic links followed, its
 * folder's name made absolute and canonical (realpath) when the folder
 * exists.  Two names of one file (but hard links) give the same.
 * malloc'd. */
char *path_canonical(const char *path);
/* Is prog (no slash) found on PATH, or (with slash) executable? */
int program_exists(const char *prog);
/* Is there something at path (stat(): a dangling symbolic link is not)? */
int file_exists(const char *path);

/* The last n lines of s, its trailing newlines left out: malloc'd ("" for
 * an empty s). */
char *last_lines(const char *s, int n);
/*
 * What a tool's output says went wrong, as one line for a sentence of the
 * caller's: the rest of its last line holding marker ("ERROR: ", "Error: "),
 * a line whose rest holds unless (may be NULL) not counting, else its last
 * line with a character other than space, tab, '~' and '^' (a compiler's
 * underlining); leading blanks and a final full stop dropped.  malloc'd;
 * NULL when it says nothing.
 */
char *said_line(const char *text, const char *marker, const char *unless);
/* The last n lines of the file at path on stderr (a log's end, after an
 * error message); nothing when it cannot be read or is empty. */
void print_file_tail(const char *path, int n);

/* Levenshtein distance, for "did you mean" suggestions. */
size_t edit_distance(const char *a, const char *b);
/* The closest of the NULL-terminated words to s when close enough to be a
 * likely typo (distance <= 2, or <= a third of s's length), else NULL. */
const char *did_you_mean(const char *s, const char *const *words);

/*
 * Hex SHA-256 (FIPS 180-4) of data into out[65], lower case, NUL-terminated.
 * Recognises an experiment text, a kernel build, a journal line; not for
 * security.  Defined in hash.c (Nettle), which the guest agent does not link.
 */
void sha256_hex(const void *data, size_t len, char out[65]);

/* Absolute path of the running perturb executable (/proc/self/exe). */
const char *perturb_self_exe(void);

/* perturb's cache (kernels, initramfs images): $PERTURB_CACHE, else
 * $XDG_CACHE_HOME/perturb, else ~/.cache/perturb.  Static storage. */
const char *perturb_cache_dir(void);
/*
 * Hold an exclusive lock on path (a file in perturb's cache, created when
 * missing) until the returned descriptor is closed, so that one perturb on
 * this machine fills a cache entry (builds a kernel, unpacks a source,
 * fetches an image) while the others wait, saying so ("another perturb is
 * WHAT; waiting for it"), then take what it made.  -1 (printed) when the
 * lock cannot be had.
 */
int perturb_cache_lock(const char *path, const char *what);

#endif
