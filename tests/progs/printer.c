/*
 * printer - print lines, then exit with a status.
 *
 *   printer [-x STATUS] [-E | -O] [--] TEXT...
 *
 * Each TEXT is printed as one line, to stdout, or to stderr after -E (-O
 * switches back); options and texts are taken in order.  -x sets the exit
 * status (default 0).  E.g. printer 'Time in seconds = 1.25' -E warning -x 3
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	FILE *f = stdout;
	int status = 0, opts = 1;

	for (int i = 1; i < argc; i++) {
		if (opts && !strcmp(argv[i], "--"))
			opts = 0;
		else if (opts && !strcmp(argv[i], "-E"))
			f = stderr;
		else if (opts && !strcmp(argv[i], "-O"))
			f = stdout;
		else if (opts && !strcmp(argv[i], "-x") && i + 1 < argc)
			status = atoi(argv[++i]);
		else {
			fprintf(f, "%s\n", argv[i]);
			fflush(f);
		}
	}
	return status;
}
