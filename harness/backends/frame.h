/*
 * frame.h - shared by the qemu backend (harness/backends/qemu.c) and the
 * guest agent (harness/backends/guest/agent.c), which are built separately: the
 * checksum of a PERTURB-RESULT frame must be the same function on both ends.
 */
#ifndef PERTURB_FRAME_H
#define PERTURB_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 as in IEEE 802.3 / zlib (reflected polynomial 0xedb88320, initial
 * value and final XOR 0xffffffff), bit by bit: frames are small. */
static inline uint32_t frame_crc32(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

#endif
