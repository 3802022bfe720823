/*
 * flood - write the line "flood begins MB", then MB mebibytes of 64-byte
 * lines to stdout as fast as it can, then the line "flood done MB".
 * flood [MB [KB]] (default 1): with KB, after the flood wait (at most 10 s,
 * polling every 10 ms) until the file stdout goes to holds at most KB
 * kibibytes (its allocated blocks), and print "flood held N" (kibibytes
 * held when it stopped waiting) before the last line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long held_kb(void)
{
	struct stat st;
	return fstat(1, &st) < 0 ? -1 : (long)(st.st_blocks / 2);
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	long mb = argc > 1 ? atol(argv[1]) : 1;

	for (size_t i = 0; i < sizeof(buf); i += 64) {
		memset(buf + i, 'x', 63);
		buf[i + 63] = '\n';
	}
	printf("flood begins %ld\n", mb);
	fflush(stdout);
	for (long i = 0; i < mb * 16; i++) {
		size_t off = 0;
		while (off < sizeof(buf)) {
			ssize_t n = write(1, buf + off, sizeof(buf) - off);
			if (n <= 0)
				return 1;
			off += (size_t)n;
		}
	}
	if (argc > 2) {
		long want = atol(argv[2]);
		struct timespec tick = { 0, 10 * 1000 * 1000 };
		for (int i = 0; i < 1000 && held_kb() > want; i++)
			nanosleep(&tick, NULL);
		printf("flood held %ld\n", held_kb());
	}
	printf("flood done %ld\n", mb);
	return 0;
}
