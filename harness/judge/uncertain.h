/*
 * uncertain.h - the oracle for a history whose clocks are not one clock: a
 * production history, where each worker stamped its own enter and exit and
 * each worker's clock may be off by a known bound (docs/running.md, "Your
 * production history through the oracle"). Pure functions: no I/O, no clock.
 *
 * Two sections a and b of different clients on one key, stamped [ea, xa] and
 * [eb, xb], whose clocks may each be off by ua and ub: the true distance one
 * may have slid against the other is at most U = ua + ub (each section's
 * enter and exit come from one clock, so both move together). They overlap
 * at a slide s when ea + s < xb and eb < xa + s, so the margin
 *     m = min(xa - eb, xb - ea)
 * is how far one would have to slide to stop overlapping the other (for two
 * sections neither of which holds the other, m is the overlap's length).
 *   certain   m > U: they overlap whatever each clock's error within its bound
 *   possible  -U < m <= U: some errors within the bounds make them overlap
 *             (stamps that overlap by less than U, or that miss by less)
 * With U = 0 this is the oracle's own rule: sections that touch end to start
 * do not overlap, and a section whose exit is its enter holds no instant and
 * overlaps nothing (oracle.h).
 *
 * A fence that goes backwards: a section whose fence is not above the fence
 * of a section of the same key that entered before it by the stamps.
 * Certain when the order of the two enters holds whatever the clocks' error
 * (one client's sections share one clock; two clients' enters are more than
 * ua + ub apart); else possible (the clocks may explain it).
 */
#ifndef LB_UNCERTAIN_H
#define LB_UNCERTAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One section, as the judge needs it. */
struct lb_usec {
	int client;         /* who: an index, one per client name */
	int key;            /* which lock: an index */
	int64_t enter_ns;   /* the client's own stamps, any origin (the same for all) */
	int64_t exit_ns;    /* >= enter_ns */
	int64_t unc_ns;     /* how far this section's clock may be off, >= 0 */
	int64_t fence;      /* -1: none */
};

/* Two sections of different clients on one key that overlap, certainly or possibly. */
struct lb_upair {
	size_t a, b;        /* indexes of the sections: a entered first (a tie: the lower index) */
	int64_t from_ns;    /* the later enter */
	int64_t to_ns;      /* the earlier exit; below from_ns when the stamps miss (a gap) */
	int64_t margin_ns;  /* min(xa - eb, xb - ea) */
	int64_t unc_ns;     /* ua + ub */
	bool certain;
};

/* A section whose fence is not above that of an earlier one of its key. */
struct lb_ufence {
	size_t at;          /* the section */
	size_t after;       /* the earlier section whose fence is as high or higher */
	bool certain;
};

struct lb_ujudgement {
	struct lb_upair *pairs;     /* by from_ns, then a, then b; malloc'd */
	size_t n_pairs, certain, possible;
	struct lb_ufence *fences;   /* by the section's enter, then its index; malloc'd */
	size_t n_fences, fence_certain, fence_possible;
	bool fenced;                /* some section has a fence */
	size_t work;                /* comparisons made: what @budget bounds */
	const char *limit;          /* LB_EINVAL: the limit that was reached, in words */
};

/*
 * Judge the @n sections @s into @j (free it with lb_ujudgement_free, whatever
 * the result). 0; LB_ENOMEM; or LB_EINVAL when more than @max_pairs pairs
 * overlap or more than @budget comparisons would be needed (j->limit says
 * which, for the caller to say): a count is exact or refused, never cut.
 */
int lb_ujudge(const struct lb_usec *s, size_t n, size_t max_pairs, size_t budget,
	      struct lb_ujudgement *j);
void lb_ujudgement_free(struct lb_ujudgement *j);

#endif
