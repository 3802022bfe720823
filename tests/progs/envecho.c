/*
 * envecho - print the environment: with no argument every NAME=value line
 * in order; else for each NAME either "NAME=value" or "NAME unset".
 */
#include <stdio.h>
#include <stdlib.h>

extern char **environ;

int main(int argc, char **argv)
{
	if (argc < 2) {
		for (char **e = environ; *e; e++)
			printf("%s\n", *e);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		const char *v = getenv(argv[i]);
		if (v)
			printf("%s=%s\n", argv[i], v);
		else
			printf("%s unset\n", argv[i]);
	}
	return 0;
}
