/*
 * agent_wire.h - the lines between `lockbench run --hosts` and `lockbench
 * agent` (docs/running.md, "Clients on many hosts"): a bounded line reader
 * (every line from the other side is hostile: too long, a control
 * character, a field out of range is an error naming the line), the clock
 * offset to a Redis server by its TIME, and a client's records written and
 * read back.
 */
#ifndef LB_AGENT_WIRE_H
#define LB_AGENT_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "shared.h"

#define LB_AGENT_PROTO 1          /* the format's version, in the hello and the share */
#define LB_AGENT_LINE_MAX 4096    /* a line, its newline included */

/* A line reader on a file descriptor, bounded. */
struct lb_lines {
	int fd;
	size_t len;
	bool eof;
	char buf[2 * LB_AGENT_LINE_MAX];
};

/* The next line into @out (no newline): 1; 0 at the end of the input;
 * LB_ETIMEOUT when none came by @deadline (lb_now_ns; 0: do not wait);
 * LB_EPROTO for a line too long or with a control character (why in @why). */
int lb_lines_next(struct lb_lines *l, char *out, size_t cap, int64_t deadline, char *why,
		  size_t wlen);

/* The offset of the server's clock (TIME) to this host's CLOCK_MONOTONIC,
 * from the best of @rounds round trips: server = local + offset, within
 * ± rtt / 2. 0, or LB_EREDIS with why in @why. */
struct lb_node;
int lb_clock_offset(struct lb_node *n, int rounds, int64_t *offset_ns, int64_t *rtt_ns,
		    char *why, size_t wlen);

/* Client @id's slot and records (relative times as the agent's t0 has them)
 * as lines on @out: "client", "hist", "rec", "try". */
void lb_wire_put_client(FILE *out, struct lb_shared *sh, int id);

/* One line of those into @sh, its times moved: relative ones by @shift_ns,
 * absolute ones (CLOCK_MONOTONIC of the agent) by @abs_ns. Only the clients
 * [@first, @first + @count) are accepted. 0, or LB_EPROTO with why. */
int lb_wire_take(struct lb_shared *sh, const char *line, int first, int count, int64_t shift_ns,
		 int64_t abs_ns, char *why, size_t wlen);

/* Split @line into at most @max words (separated by one space) in place; how
 * many. */
int lb_wire_words(char *line, char **w, int max);

#endif
