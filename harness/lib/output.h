/*
 * output.h - writing a file the user named (report --output, gate --junit
 * and --markdown, perturb gen FILE): one way for every command.
 *
 * What the name is decides how it is written:
 *   - a missing file or a regular file: written to a temporary file beside
 *     it, then renamed over it, so that a reader never sees a half-written
 *     file and a failed write leaves the old one as it was; an existing
 *     file keeps its permission bits;
 *   - a symbolic link is followed (to the end of its chain, a dangling one
 *     included) and its target is written as above; the link stays;
 *   - /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N: written to
 *     the descriptor perturb already holds (a shell's `>>` keeps appending);
 *   - anything else that exists (a character device such as /dev/null or
 *     /dev/full, a FIFO, a socket): opened and written in place, never
 *     replaced; a FIFO's open waits for its reader, as a shell's `>` does;
 *   - a folder: refused.
 * Every write error is an error, /dev/full's "No space left on device"
 * included: output_close() returns -1 and the command exits non-zero.
 *
 * No output may replace what the same command reads (its results database
 * with the files beside it, its experiment file and every file that
 * includes): output_check() refuses it before anything is written,
 * comparing by device and inode (symbolic links followed, a hard link is
 * the same file) and, for a file not there yet, by the name it would get.
 */
#ifndef PERTURB_OUTPUT_H
#define PERTURB_OUTPUT_H

#include <stdio.h>

struct output {
	FILE *f;		/* write here (stdio or, after fflush, fileno()) */
	char *path;		/* as named, for messages */
	char *target;		/* the file renamed over; NULL: written in place */
	char *tmp;		/* the temporary file beside target */
};

/* The files a command reads (none need exist). */
struct output_inputs {
	char **paths;
	size_t n;
};

/* Add path to in. */
void output_inputs_add(struct output_inputs *in, const char *path);
/* Add a results database: path, and the files SQLite and perturb keep
 * beside it (-wal, -shm, -journal, .lock) by the name given and by the
 * name its symbolic links end in. */
void output_inputs_add_db(struct output_inputs *in, const char *db);
void output_inputs_release(struct output_inputs *in);
/* 0 when out names none of in's files; else -1, printed as "OPTION
 * 'OUT' is 'INPUT', which this command reads: refused, nothing written"
 * (option: how the user named out, "--output"): the command exits 2. */
int output_check(const char *out, const char *option, const struct output_inputs *in);

/* Open path for writing as above.  0, or -1 (printed; nothing created). */
int output_open(struct output *o, const char *path);
/* Flush, check and close; rename the temporary file over the target.
 * 0, or -1 (printed: "cannot write 'PATH': REASON"; the temporary file is
 * removed, the target untouched).  o is released either way. */
int output_close(struct output *o);
/* Give up: close, remove the temporary file, leave the target untouched
 * (what was written in place stays written).  NULL f: no-op. */
void output_abort(struct output *o);

#endif
