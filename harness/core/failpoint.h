/*
 * failpoint.h - named instants inside strategies where a pitfall bites.
 *
 * A strategy calls lb_failpoint("name") at the instant; nothing happens unless
 * the harness (a test, a scenario) armed that name with an action. Nothing is
 * compiled in or out: this is a seam, like SQLite's aSyscall[] table.
 *
 * Names used by the strategies:
 *   after-setnx        setnx-expire: SETNX succeeded, EXPIRE not yet sent
 *   between-get-del    get-del: GET matched our value, DEL not yet sent
 *   after-send         redlock: SET sent to every node, no reply read yet
 *   between-get-getset setnx-getset: saw an expired value, GETSET not yet sent
 */
#ifndef LB_FAILPOINT_H
#define LB_FAILPOINT_H

#include <stdint.h>

typedef void (*lb_failpoint_fn)(const char *name, void *arg);

/* Actions one name can carry: every fault a scenario can have (LB_MAX_FAULTS). */
#define LB_FAILPOINT_MAX_ACTIONS 16

/* Arm @name so that its next @count hits (-1: every hit) call fn(name, arg).
 * Re-arming a name replaces every action it had. */
int lb_failpoint_arm(const char *name, lb_failpoint_fn fn, void *arg, int count);
/* One more action on @name, after those it has: a hit calls each in the order
 * they were added (two scenario faults on one failpoint both act). LB_EINVAL
 * when @name already has LB_FAILPOINT_MAX_ACTIONS. */
int lb_failpoint_add(const char *name, lb_failpoint_fn fn, void *arg, int count);
void lb_failpoint_disarm_all(void);
/* The instant itself; strategies call this. */
void lb_failpoint(const char *name);
/* How many times @name was reached since the process started (armed or not). */
unsigned lb_failpoint_hits(const char *name);

/* The failpoints the strategies have, numbered from 1 in the order of the
 * list above: an event at a failpoint (crash) carries its number in events.csv's
 * value, and the story says what the instant means. 0 for a name not listed
 * (an adapter's own failpoint). */
int lb_failpoint_code(const char *name);
/* The name of failpoint @code, and where it is in words ("between SETNX and
 * EXPIRE"); NULL for 0 or a code not listed. */
const char *lb_failpoint_name(int code);
const char *lb_failpoint_where(int code);

/* Ready-made actions. */
void lb_fp_crash(const char *name, void *arg);   /* SIGKILL this process */
void lb_fp_sleep(const char *name, void *arg);   /* arg: const int64_t *ms */
void lb_fp_stop(const char *name, void *arg);    /* SIGSTOP self: the harness resumes */

#endif
