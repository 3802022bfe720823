/*
 * hash.c - sha256_hex() (util.h) through Nettle's SHA-256.
 *
 * A file of its own so that the static guest agent, which links util.c but
 * hashes nothing, does not need libnettle.
 */
#include <nettle/sha2.h>
#include <stdio.h>

#include "util.h"

void sha256_hex(const void *data, size_t len, char out[65])
{
	struct sha256_ctx ctx;
	uint8_t digest[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, len, data);
	sha256_digest(&ctx, sizeof(digest), digest);
	for (size_t i = 0; i < sizeof(digest); i++)
		snprintf(out + 2 * i, 3, "%02x", digest[i]);
}
