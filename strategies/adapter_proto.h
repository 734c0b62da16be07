/*
 * adapter_proto.h - the adapter protocol's pure side (docs/adapters.md):
 * bytes in, lines out; a line and the request it answers in, a message out.
 * No I/O, no clock, no process: adapter.c does those. Fed byte by byte, in
 * any split, it gives the same lines (tests/test_adapter_proto.c), as
 * hiredis's reply reader is tested in its test.c.
 *
 * Version 2 adds to version 1 one hello field and one notice:
 *   hello 2 ... extends=never|reported|silently
 *       never     the library never extends its lease by itself
 *       reported  it does, and the adapter says so each time (the notice below)
 *       silently  it does, and the adapter cannot see when (the lease's end is
 *                 unknown to lockbench); a version 1 adapter is read so
 *   extended ttl_ms=N   (at any time) the library extended the lease: it now
 *                       runs out N ms from when the extension succeeded
 * A version 1 adapter is still accepted: it cannot send the notice, and what
 * its library does to the lease after the grant is unknown.
 *
 * Version 3 adds two hello fields and one message:
 *   hello 3 ... claims=LETTERS    what the lock claims, of M D F O L (lockbench
 *                                 list's letters; `lockbench audit` tests them)
 *               failpoints=A,B    the named instants its code announces
 *   at NAME    (while it answers acquire, release or extend) its code reached
 *              the failpoint NAME, one of those its hello named; it then
 *              waits for lockbench's "go" before it goes on, so that a
 *              scenario can stall or crash it there, as at a C recipe's
 */
#ifndef LB_ADAPTER_PROTO_H
#define LB_ADAPTER_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LB_ADAPTER_PROTOCOL 3       /* what lockbench speaks */
#define LB_ADAPTER_PROTOCOL_MIN 1   /* the oldest it accepts */
#define LB_PROTO_LINE_MAX 4096      /* bytes of one line, without its \n */
#define LB_PROTO_TEXT_MAX 240       /* bytes kept of a message (error, lost) */
#define LB_PROTO_TOKEN_MAX 64       /* bytes kept of a token */
/* The largest number each field may carry (docs/adapters.md); more is a
 * protocol error, so that no sum lockbench makes of them overflows:
 *   validity_ms=, ttl_ms= (the notice)  at most 365 days in ms: a deadline
 *                                       of now + N ms stays far inside int64
 *   fence=                              at most 2^53: the resource compares
 *                                       fences as Lua numbers (doubles), exact
 *                                       up to there */
#define LB_PROTO_MS_MAX INT64_C(31536000000)
#define LB_PROTO_FENCE_MAX INT64_C(9007199254740992)

/* Framing: bytes in, whole lines out. */
struct lb_proto_reader {
	char buf[LB_PROTO_LINE_MAX + 1];
	size_t len;                 /* bytes held, not yet a whole line */
};

/* Room left in the reader's buffer (what the next read may take). */
size_t lb_proto_room(const struct lb_proto_reader *r);
/* Append @n bytes (at most lb_proto_room()). */
void lb_proto_feed(struct lb_proto_reader *r, const char *bytes, size_t n);
/* The next whole line into @line (LB_PROTO_LINE_MAX + 1 bytes; its "\n" or
 * "\r\n" removed): 1 a line | 0 none yet | -1 a line longer than
 * LB_PROTO_LINE_MAX (its first bytes are in @line). */
int lb_proto_next_line(struct lb_proto_reader *r, char *line);

/* What lockbench asked, so what a line may answer. */
enum lb_proto_req {
	LB_REQ_NONE,                /* nothing outstanding: only a notice may come */
	LB_REQ_HELLO, LB_REQ_CONFIG, LB_REQ_ACQUIRE, LB_REQ_RELEASE, LB_REQ_EXTEND, LB_REQ_QUIT,
};
const char *lb_proto_req_name(enum lb_proto_req q);

enum lb_proto_kind {
	LB_MSG_HELLO, LB_MSG_OK, LB_MSG_ERROR, LB_MSG_ACQUIRED, LB_MSG_BUSY, LB_MSG_RELEASED,
	LB_MSG_NOT_OWNED, LB_MSG_EXTENDED, LB_MSG_UNSUPPORTED, LB_MSG_BYE,
	LB_MSG_LOST,                /* notice: the library says the lock is gone */
	LB_MSG_LEASE,               /* notice (v2): "extended ttl_ms=N" */
	LB_MSG_AT,                  /* (v3) "at NAME": its code is at a failpoint */
};

#define LB_PROTO_FAILPOINTS_MAX 8   /* failpoints one hello may name */
#define LB_PROTO_FAILPOINT_LEN 32   /* bytes of a failpoint's name */

enum lb_proto_extends { LB_EXTENDS_SILENTLY, LB_EXTENDS_NEVER, LB_EXTENDS_REPORTED };

struct lb_proto_msg {
	enum lb_proto_kind kind;
	bool notice;                /* LB_MSG_LOST, LB_MSG_LEASE: may come unasked */
	/* hello */
	int version;
	bool can_extend, can_lost;
	enum lb_proto_extends extends;
	char lib_version[32];       /* its version= (the library's own metadata), "" none */
	unsigned claims;            /* (v3) enum lb_claim bits; 0 when not given */
	bool claims_given;
	char failpoints[LB_PROTO_FAILPOINTS_MAX][LB_PROTO_FAILPOINT_LEN]; /* (v3) */
	int n_failpoints;
	/* at NAME */
	char at[LB_PROTO_FAILPOINT_LEN];
	/* acquired */
	char token[LB_PROTO_TOKEN_MAX + 1]; /* "" when not given */
	int64_t fence;              /* -1 when not given */
	int64_t validity_ms;        /* -1 when not given */
	/* extended ttl_ms=N (the notice) */
	int64_t ttl_ms;
	/* error, lost: the adapter's words, control bytes shown as \xNN */
	char text[LB_PROTO_TEXT_MAX + 1];
};

/* Read @line as an answer to @asked (or a notice), from an adapter speaking
 * @version (0 before its hello). 0 and @m filled | -1 and why it is not, in
 * @why (it names the request it does not answer). Strict: every word is one
 * the protocol has for that reply, each field once, numbers whole and in
 * range; only 'lost' and (version 2) 'extended ttl_ms=N' may come unasked;
 * 'lost' only from an adapter whose hello said lost=yes. @can_lost: that hello's word.
 * (version 3) 'at NAME' only while an acquire, release or extend waits for
 * its answer; whether NAME is one its hello named is the caller's to check. */
int lb_proto_parse(const char *line, enum lb_proto_req asked, int version, bool can_lost,
		   struct lb_proto_msg *m, char *why, size_t len);

/* @in with every byte outside printable ASCII shown as \xNN, cut to fit
 * @len: a line of the adapter's as it may go into a message. */
void lb_proto_printable(const char *in, char *out, size_t len);

#endif
