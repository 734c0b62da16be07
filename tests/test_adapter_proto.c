/*
 * test_adapter_proto.c - the adapter protocol's pure parser: framing fed in
 * every split, and every reply against the request it answers.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "adapter_proto.h"
#include "strategy.h"

static const char *const stream = "hello 2 library=x version=1 language=sh extend=no lost=yes "
				  "extends=reported\r\nok\nlost gone\nacquired token=ab fence=7\n\n";
static const char *const lines[] = { "hello 2 library=x version=1 language=sh extend=no lost=yes "
				     "extends=reported", "ok", "lost gone",
				     "acquired token=ab fence=7", "" };

/* The same lines whatever the split: byte by byte, in pieces of k, whole. */
FX_SUITE(adapter_proto, 60);

Test(adapter_proto, framing_is_the_same_in_every_split)
{
	size_t n = strlen(stream);
	for (size_t k = 1; k <= n; k++) {
		struct lb_proto_reader r = { .len = 0 };
		char line[LB_PROTO_LINE_MAX + 1];
		size_t got = 0;
		for (size_t off = 0; off < n; off += k) {
			lb_proto_feed(&r, stream + off, off + k <= n ? k : n - off);
			while (lb_proto_next_line(&r, line) == 1) {
				cr_assert_lt(got, 5, "split %zu: too many lines", k);
				cr_assert_str_eq(line, lines[got], "split %zu, line %zu", k, got);
				got++;
			}
		}
		cr_assert_eq(got, 5, "split %zu: %zu lines", k, got);
		cr_assert_eq(r.len, 0);
	}
}

Test(adapter_proto, a_line_too_long_is_refused_not_split)
{
	struct lb_proto_reader r = { .len = 0 };
	char big[LB_PROTO_LINE_MAX + 10], line[LB_PROTO_LINE_MAX + 1];
	memset(big, 'a', sizeof(big));
	lb_proto_feed(&r, big, sizeof(big)); /* takes what fits */
	cr_assert_eq(lb_proto_room(&r), 0);
	cr_assert_eq(lb_proto_next_line(&r, line), -1);
	/* exactly the most a line may be, then its newline: a line */
	struct lb_proto_reader r2 = { .len = 0 };
	lb_proto_feed(&r2, big, LB_PROTO_LINE_MAX - 1);
	lb_proto_feed(&r2, "\n", 1);
	cr_assert_eq(lb_proto_next_line(&r2, line), 1);
	cr_assert_eq(strlen(line), LB_PROTO_LINE_MAX - 1);
}

static int parse(const char *line, enum lb_proto_req q, int version, struct lb_proto_msg *m,
		 char *why)
{
	return lb_proto_parse(line, q, version, true, m, why, 300);
}

Test(adapter_proto, hello_of_either_version)
{
	struct lb_proto_msg m;
	char why[300];
	cr_assert_eq(parse("hello 1 library=a version=2 language=py extend=yes lost=no", LB_REQ_HELLO,
			   0, &m, why), 0, "%s", why);
	cr_assert_eq(m.kind, LB_MSG_HELLO);
	cr_assert_eq(m.version, 1);
	cr_assert(m.can_extend && !m.can_lost);
	cr_assert_eq(m.extends, LB_EXTENDS_SILENTLY, "version 1: what it does to its lease is unknown");
	cr_assert_eq(parse("hello 2 extends=never", LB_REQ_HELLO, 0, &m, why), 0, "%s", why);
	cr_assert_eq(m.extends, LB_EXTENDS_NEVER);
	cr_assert_eq(parse("hello 2 extends=reported lost=yes", LB_REQ_HELLO, 0, &m, why), 0);
	cr_assert_eq(m.extends, LB_EXTENDS_REPORTED);
}

/* Every malformed reply, each with what was wrong. */
Test(adapter_proto, malformed_replies_are_refused_with_the_reason)
{
	static const struct {
		const char *line;
		enum lb_proto_req asked;
		const char *why;
	} bad[] = {
		{ "hello 4 library=x", LB_REQ_HELLO, "speaks protocol version 4; this lockbench speaks 3" },
		{ "hello 2 claims=MD", LB_REQ_HELLO, "unknown field 'claims'" },
		{ "hello 3 claims=MX", LB_REQ_HELLO, "claims= takes letters of MDFOL" },
		{ "hello 3 claims=MM", LB_REQ_HELLO, "claims= takes letters of MDFOL, each once" },
		{ "hello 3 claims=", LB_REQ_HELLO, "claims= takes letters" },
		{ "hello 3 failpoints=", LB_REQ_HELLO, "failpoints= takes 1 to 8 names" },
		{ "hello 3 failpoints=a,,b", LB_REQ_HELLO, "failpoints= takes" },
		{ "hello 3 failpoints=Between", LB_REQ_HELLO, "failpoints= takes" },
		{ "hello 3 failpoints=a,b,a", LB_REQ_HELLO, "failpoint 'a' named twice" },
		{ "hello 3 failpoints=a,b,c,d,e,f,g,h,i", LB_REQ_HELLO, "failpoints= takes 1 to 8" },
		{ "hello", LB_REQ_HELLO, "expected 'hello VERSION" },
		{ "hello two", LB_REQ_HELLO, "expected 'hello VERSION" },
		{ "hello 1 extends=never", LB_REQ_HELLO, "unknown field 'extends'" },
		{ "hello 2 colour=red", LB_REQ_HELLO, "unknown field 'colour'" },
		{ "hello 2 lost=maybe", LB_REQ_HELLO, "lost= takes yes or no" },
		{ "hello 2 lost=yes lost=no", LB_REQ_HELLO, "given twice" },
		{ "hello 2 extends=often", LB_REQ_HELLO, "extends= takes never" },
		{ "hello 2 library", LB_REQ_HELLO, "expected KEY=VALUE" },
		{ "HELLO? is anybody there", LB_REQ_HELLO, "in answer to 'hello'" },
		{ "acquired yes please", LB_REQ_ACQUIRE, "got 'yes'" },
		{ "acquired token=", LB_REQ_ACQUIRE, "token= takes 1 to 256" },
		{ "acquired fence=-1", LB_REQ_ACQUIRE, "fence: expected a whole number from 0" },
		{ "acquired fence=12x", LB_REQ_ACQUIRE, "fence: expected" },
		{ "acquired validity_ms=99999999999999999999", LB_REQ_ACQUIRE, "validity_ms: expected" },
		{ "acquired fence=1 fence=2", LB_REQ_ACQUIRE, "given twice" },
		{ "acquiredx", LB_REQ_ACQUIRE, "in answer to 'acquire'" },
		{ "released", LB_REQ_ACQUIRE, "in answer to 'acquire'" },
		{ "busy now", LB_REQ_ACQUIRE, "'busy' takes no words" },
		{ "acquired", LB_REQ_RELEASE, "in answer to 'release'" },
		{ "extended", LB_REQ_RELEASE, "in answer to 'release'" },
		{ "ok", LB_REQ_ACQUIRE, "in answer to 'acquire'" },
		{ "error boom", LB_REQ_HELLO, "in answer to 'hello'" },
		{ "busy", LB_REQ_NONE, "nothing was asked" },
		{ "acquired", LB_REQ_NONE, "nothing was asked" },
		{ "extended ttl_ms=x", LB_REQ_NONE, "expected the notice 'extended ttl_ms=N'" },
		{ "extended ttl_ms=5 more", LB_REQ_NONE, "expected the notice" },
		{ "extended ms=5", LB_REQ_NONE, "expected the notice" },
		/* every number bounded (adapter_proto.h): no sum made of it overflows */
		{ "extended ttl_ms=9223372036854", LB_REQ_NONE, "from 0 to 31536000000" },
		{ "extended ttl_ms=31536000001", LB_REQ_NONE, "from 0 to 31536000000" },
		{ "acquired validity_ms=31536000001", LB_REQ_ACQUIRE, "from 0 to 31536000000" },
		{ "acquired fence=9007199254740993", LB_REQ_ACQUIRE, "from 0 to 9007199254740992" },
		{ "acquired fence=9223372036854775807", LB_REQ_ACQUIRE, "from 0 to 9007199254740992" },
		{ "bu\x07sy", LB_REQ_ACQUIRE, "a control or non-ASCII byte" },
		{ "", LB_REQ_ACQUIRE, "in answer to 'acquire'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct lb_proto_msg m;
		char why[300] = "";
		cr_assert_eq(parse(bad[i].line, bad[i].asked, 2, &m, why), -1, "taken: '%s'", bad[i].line);
		cr_assert(strstr(why, bad[i].why), "'%s': expected '%s' in '%s'", bad[i].line,
			  bad[i].why, why);
	}
}

Test(adapter_proto, good_replies)
{
	struct lb_proto_msg m;
	char why[300];
	cr_assert_eq(parse("acquired token=t-1 validity_ms=950 fence=12", LB_REQ_ACQUIRE, 2, &m, why), 0,
		     "%s", why);
	cr_assert_eq(m.kind, LB_MSG_ACQUIRED);
	cr_assert_str_eq(m.token, "t-1");
	cr_assert_eq(m.fence, 12);
	cr_assert_eq(m.validity_ms, 950);
	cr_assert_eq(parse("acquired", LB_REQ_ACQUIRE, 2, &m, why), 0);
	cr_assert_eq(m.fence, -1);
	cr_assert_eq(m.validity_ms, -1);
	cr_assert_eq(parse("not-owned", LB_REQ_EXTEND, 2, &m, why), 0);
	cr_assert_eq(m.kind, LB_MSG_NOT_OWNED);
	cr_assert_eq(parse("extended", LB_REQ_EXTEND, 2, &m, why), 0);
	cr_assert_eq(m.kind, LB_MSG_EXTENDED);
	cr_assert(!m.notice);
	cr_assert_eq(parse("error ECONNREFUSED \x1b[31mred\xc3\xa9", LB_REQ_RELEASE, 2, &m, why), 0);
	cr_assert_eq(m.kind, LB_MSG_ERROR);
	cr_assert_str_eq(m.text, "ECONNREFUSED \\x1b[31mred\\xc3\\xa9", "control bytes shown, not sent");
}

/* Notices come at any time, in answer to nothing, or while a request waits. */
Test(adapter_proto, notices)
{
	struct lb_proto_msg m;
	char why[300];
	for (int q = LB_REQ_NONE; q <= LB_REQ_QUIT; q++) {
		cr_assert_eq(parse("lost the lease expired", (enum lb_proto_req)q, 2, &m, why), 0);
		cr_assert(m.notice);
		cr_assert_eq(m.kind, LB_MSG_LOST);
		cr_assert_str_eq(m.text, "the lease expired");
		cr_assert_eq(parse("extended ttl_ms=3000", (enum lb_proto_req)q, 2, &m, why), 0, "%s", why);
		cr_assert(m.notice);
		cr_assert_eq(m.kind, LB_MSG_LEASE);
		cr_assert_eq(m.ttl_ms, 3000);
	}
	/* the bounds themselves are taken */
	cr_assert_eq(parse("extended ttl_ms=31536000000", LB_REQ_NONE, 2, &m, why), 0, "%s", why);
	cr_assert_eq(m.ttl_ms, INT64_C(31536000000));
	cr_assert_eq(parse("acquired fence=9007199254740992 validity_ms=31536000000", LB_REQ_ACQUIRE,
			   2, &m, why), 0, "%s", why);
	cr_assert_eq(m.fence, INT64_C(9007199254740992));
	/* the notice is version 2's; lost only from an adapter that said lost=yes */
	cr_assert_eq(parse("extended ttl_ms=3000", LB_REQ_NONE, 1, &m, why), -1);
	cr_assert(strstr(why, "version 2"), "%s", why);
	cr_assert_eq(lb_proto_parse("lost x", LB_REQ_NONE, 2, false, &m, why, sizeof(why)), -1);
	cr_assert(strstr(why, "lost=no"), "%s", why);
}

/* Version 3: a hello's claims and failpoints; "at NAME" only while an
 * acquire, release or extend is answered, and only from a version 3 hello. */
Test(adapter_proto, version_3_claims_failpoints_and_at)
{
	struct lb_proto_msg m;
	char why[300];
	cr_assert_eq(parse("hello 3 library=a version=1 language=py extend=no lost=no extends=never "
			   "claims=DO failpoints=between-get-del,after-set", LB_REQ_HELLO, 0, &m, why), 0,
		     "%s", why);
	cr_assert_eq(m.version, 3);
	cr_assert(m.claims_given);
	cr_assert_eq(m.claims, LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE);
	cr_assert_eq(m.n_failpoints, 2);
	cr_assert_str_eq(m.failpoints[0], "between-get-del");
	cr_assert_str_eq(m.failpoints[1], "after-set");
	cr_assert_eq(parse("hello 3 claims=-", LB_REQ_HELLO, 0, &m, why), 0, "%s", why);
	cr_assert(m.claims_given && m.claims == 0);
	cr_assert_eq(parse("hello 3", LB_REQ_HELLO, 0, &m, why), 0, "%s", why);
	cr_assert(!m.claims_given && m.n_failpoints == 0);
	static const enum lb_proto_req during[] = { LB_REQ_ACQUIRE, LB_REQ_RELEASE, LB_REQ_EXTEND };
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(parse("at between-get-del", during[i], 3, &m, why), 0, "%s", why);
		cr_assert_eq(m.kind, LB_MSG_AT);
		cr_assert_str_eq(m.at, "between-get-del");
		cr_assert_not(m.notice, "not a notice: it comes only inside a request");
	}
	cr_assert_eq(parse("at between-get-del", LB_REQ_RELEASE, 2, &m, why), -1);
	cr_assert(strstr(why, "protocol version 3"), "%s", why);
	cr_assert_eq(parse("at between-get-del", LB_REQ_NONE, 3, &m, why), -1, "unasked");
	cr_assert_eq(parse("at between-get-del", LB_REQ_CONFIG, 3, &m, why), -1);
	cr_assert(strstr(why, "not in answer to 'config'"), "%s", why);
	cr_assert_eq(parse("at", LB_REQ_RELEASE, 3, &m, why), -1);
	cr_assert_eq(parse("at Two Words", LB_REQ_RELEASE, 3, &m, why), -1);
	cr_assert(strstr(why, "expected 'at NAME'"), "%s", why);
}

Test(adapter_proto, printable)
{
	char out[16];
	lb_proto_printable("a\nb\x7f", out, sizeof(out));
	cr_assert_str_eq(out, "a\\x0ab\\x7f");
	lb_proto_printable("\x01\x02\x03\x04", out, 10); /* cut whole, never mid-escape */
	cr_assert_str_eq(out, "\\x01\\x02");
}
