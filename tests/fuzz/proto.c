/*
 * fuzz/proto.c - libFuzzer target: the agent protocol's decoder,
 * proto_decode() (harness/backends/proto.h), what perturb runs over every
 * line the guest sends and the agent over every line the host sends.
 *
 * An input is one of two things, told by its first byte:
 *   '!' + bytes   a frame as it comes off the console, decoded as it is:
 *                 the framing (tag, SEQ, LEN, CRC32, hex);
 *   T + payload   T % 9 picks the message type; the target frames the
 *                 payload itself (length, CRC-32, hex) so that the fuzzer
 *                 reaches the fields behind the checksum it could not
 *                 forge.
 * A decode either fails with a reason or succeeds; what it accepted must
 * encode, decode again and encode to the same frame (proto.h: a message
 * encodes one way only).  Anything else aborts.  The seed corpus,
 * tests/fuzz/proto/, holds a framed payload of every message type and
 * whole frames; built and run by `make fuzz`.
 */
#include "backends/proto.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void check(const void *buf, size_t len)
{
	struct proto_msg m, again;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	char why[256] = "";

	if (proto_decode(buf, len, &m, why, sizeof(why)) < 0) {
		if (!*why)
			abort();	/* a refusal always says why */
		return;
	}
	if (proto_encode(&m, &a, why, sizeof(why)) < 0)
		abort();	/* accepted, yet cannot be sent */
	if (proto_decode(a.buf, a.len - 1, &again, why, sizeof(why)) < 0)
		abort();
	if (proto_encode(&again, &b, why, sizeof(why)) < 0 || strcmp(a.buf, b.buf))
		abort();
	proto_msg_release(&m);
	proto_msg_release(&again);
	strbuf_release(&a);
	strbuf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	struct strbuf f = STRBUF_INIT;

	if (!size)
		return 0;
	if (data[0] == '!') {
		/* an exact-size copy: ASan sees any read past the end */
		char *copy = malloc(size - 1 ? size - 1 : 1);
		if (!copy)
			abort();
		memcpy(copy, data + 1, size - 1);
		check(copy, size - 1);
		free(copy);
		return 0;
	}
	data++;
	size--;
	if (size > PROTO_PAYLOAD_MAX)
		return 0;
	strbuf_addf(&f, "%s %u %zu %08lx ", proto_tag((enum proto_type)(data[-1] % 9)),
		    data[-1] / 9u, size, (unsigned long)crc32(0, data, (uInt)size));
	for (size_t i = 0; i < size; i++) {
		char h[2] = { hex[data[i] >> 4], hex[data[i] & 15] };
		strbuf_add(&f, h, 2);
	}
	check(f.buf, f.len);
	strbuf_release(&f);
	return 0;
}
