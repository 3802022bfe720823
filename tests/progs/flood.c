/*
 * flood - write MB mebibytes of 64-byte lines to stdout as fast as it can,
 * then the line "flood done MB".  flood [MB] (default 1)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	long mb = argc > 1 ? atol(argv[1]) : 1;

	for (size_t i = 0; i < sizeof(buf); i += 64) {
		memset(buf + i, 'x', 63);
		buf[i + 63] = '\n';
	}
	for (long i = 0; i < mb * 16; i++) {
		size_t off = 0;
		while (off < sizeof(buf)) {
			ssize_t n = write(1, buf + off, sizeof(buf) - off);
			if (n <= 0)
				return 1;
			off += (size_t)n;
		}
	}
	printf("flood done %ld\n", mb);
	return 0;
}
