/*
 * clockfile.h - the clock offset a process's shim (fakeclock.c) adds to its
 * wall clock, shared with lockbench through a small file both map MAP_SHARED.
 * (As decimal text rewritten in place, a reader could see half of a rewrite:
 * "0" becoming "-30000" read as "030000", a jump of +30 s for one call.)
 *
 * A steady offset is one aligned 64-bit integer. A strobing one (strobe = MS,
 * Jepsen's strobe nemesis) is the offset, the period and the window on
 * CLOCK_MONOTONIC (one clock for every process of the host): the offset is on
 * in the window's even periods, off in its odd ones and after it. The shim
 * computes it at every read, so a flip lands on time even while lockbench is
 * busy; the four fields are read under a sequence count, never half of a
 * rewrite. Header-only: the shim links nothing but this.
 */
#ifndef LB_CLOCKFILE_H
#define LB_CLOCKFILE_H

#include <stdatomic.h>
#include <stdint.h>

struct lb_clockfile {
	_Atomic int64_t offset_ms;   /* added to CLOCK_REALTIME (while on) */
	_Atomic uint64_t seq;        /* odd while the writer rewrites the fields */
	_Atomic int64_t strobe_ms;   /* 0: steady; else on and off every strobe_ms */
	_Atomic int64_t from_ns;     /* CLOCK_MONOTONIC: the strobe's first period (on) */
	_Atomic int64_t until_ns;    /* ... and its end: off from then */
	char pad[24];                /* a cache line, so the file has a fixed size */
};

#define LB_CLOCKFILE_SIZE sizeof(struct lb_clockfile)

/* What a clock file says: a steady offset (strobe_ms 0) or a strobing one. */
struct lb_clockset {
	int64_t offset_ms, strobe_ms, from_ns, until_ns;
};

/* The offset a strobing clock shows at @now_ns (CLOCK_MONOTONIC). */
static inline int64_t lb_clockset_at(const struct lb_clockset *s, int64_t now_ns)
{
	if (s->strobe_ms <= 0)
		return s->offset_ms;
	if (now_ns < s->from_ns || now_ns >= s->until_ns)
		return 0;
	return ((now_ns - s->from_ns) / (s->strobe_ms * 1000000)) % 2 == 0 ? s->offset_ms : 0;
}

/* Read @f (NULL: no offset) whole: retried while its writer is midway. */
static inline void lb_clockfile_read(const struct lb_clockfile *f, struct lb_clockset *out)
{
	struct lb_clockfile *m = (struct lb_clockfile *)f;
	uint64_t s1, s2;

	*out = (struct lb_clockset){ 0 };
	if (!m)
		return;
	do {
		s1 = atomic_load_explicit(&m->seq, memory_order_acquire);
		out->offset_ms = atomic_load_explicit(&m->offset_ms, memory_order_relaxed);
		out->strobe_ms = atomic_load_explicit(&m->strobe_ms, memory_order_relaxed);
		out->from_ns = atomic_load_explicit(&m->from_ns, memory_order_relaxed);
		out->until_ns = atomic_load_explicit(&m->until_ns, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&m->seq, memory_order_relaxed);
	} while ((s1 & 1u) || s1 != s2);
}

/* Rewrite @f (one writer at a time: lockbench's injector, or one client). */
static inline void lb_clockfile_store(struct lb_clockfile *f, const struct lb_clockset *s)
{
	uint64_t seq = atomic_load_explicit(&f->seq, memory_order_relaxed);

	atomic_store_explicit(&f->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&f->offset_ms, s->offset_ms, memory_order_relaxed);
	atomic_store_explicit(&f->strobe_ms, s->strobe_ms, memory_order_relaxed);
	atomic_store_explicit(&f->from_ns, s->from_ns, memory_order_relaxed);
	atomic_store_explicit(&f->until_ns, s->until_ns, memory_order_relaxed);
	atomic_store_explicit(&f->seq, seq + 2, memory_order_release);
}

#endif
