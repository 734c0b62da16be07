/*
 * clockfile.h - the clock offset a redis-server's shim (fakeclock.c) adds to
 * its wall clock, shared with lockbench through a small file both map
 * MAP_SHARED: one aligned 64-bit integer, stored and loaded atomically.
 * (As decimal text rewritten in place, a reader could see half of a rewrite:
 * "0" becoming "-30000" read as "030000", a jump of +30 s for one call.)
 * Header-only: the shim links nothing but this.
 */
#ifndef LB_CLOCKFILE_H
#define LB_CLOCKFILE_H

#include <stdatomic.h>
#include <stdint.h>

struct lb_clockfile {
	_Atomic int64_t offset_ms;   /* added to CLOCK_REALTIME */
	char pad[56];                /* a cache line, so the file has a fixed size */
};

#define LB_CLOCKFILE_SIZE sizeof(struct lb_clockfile)

static inline int64_t lb_clockfile_load(const struct lb_clockfile *f)
{
	return f ? atomic_load_explicit(&((struct lb_clockfile *)f)->offset_ms,
					memory_order_relaxed) : 0;
}

#endif
