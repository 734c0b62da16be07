/*
 * adapter_proto.c - the adapter protocol's pure side: framing and replies
 * (adapter_proto.h). No I/O: adapter.c reads the pipe and feeds this.
 */
#include "adapter_proto.h"
#include "strategy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

size_t lb_proto_room(const struct lb_proto_reader *r)
{
	return LB_PROTO_LINE_MAX - r->len;
}

void lb_proto_feed(struct lb_proto_reader *r, const char *bytes, size_t n)
{
	if (n > lb_proto_room(r))
		n = lb_proto_room(r);
	memcpy(r->buf + r->len, bytes, n);
	r->len += n;
}

int lb_proto_next_line(struct lb_proto_reader *r, char *line)
{
	char *nl = memchr(r->buf, '\n', r->len);

	if (!nl) {
		if (r->len < LB_PROTO_LINE_MAX)
			return 0;
		memcpy(line, r->buf, 40);
		line[40] = '\0';
		return -1;
	}
	size_t n = (size_t)(nl - r->buf);
	memcpy(line, r->buf, n);
	line[n] = '\0';
	if (n && line[n - 1] == '\r')
		line[n - 1] = '\0';
	r->len -= n + 1;
	memmove(r->buf, nl + 1, r->len);
	return 1;
}

const char *lb_proto_req_name(enum lb_proto_req q)
{
	static const char *const names[] = { "(nothing)", "hello", "config", "acquire", "release",
					     "extend", "quit" };
	return (unsigned)q < sizeof(names) / sizeof(names[0]) ? names[q] : "?";
}

void lb_proto_printable(const char *in, char *out, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	for (const unsigned char *p = (const unsigned char *)in; *p && o + 1 < len; p++) {
		if (*p >= 0x20 && *p < 0x7f) {
			out[o++] = (char)*p;
		} else {
			if (o + 5 > len)
				break;
			snprintf(out + o, 5, "\\x%02x", *p);
			o += 4;
		}
	}
	out[o] = '\0';
}

static int bad(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Every byte a printable ASCII character or a space. */
static bool plain(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return false;
	return true;
}

/* The first word of @line (up to a space) is @word. */
static bool first(const char *line, const char *word)
{
	size_t n = strlen(word);
	return !strncmp(line, word, n) && (line[n] == '\0' || line[n] == ' ');
}

/* The words after the first, one at a time: @*p walks @line. A word is
 * copied into @w (truncated to @cap). false at the end. */
static bool next_word(const char **p, char *w, size_t cap, size_t *full)
{
	while (**p == ' ')
		(*p)++;
	if (!**p)
		return false;
	size_t n = strcspn(*p, " ");
	*full = n;
	snprintf(w, cap, "%.*s", (int)(n < cap ? n : cap - 1), *p);
	*p += n;
	return true;
}

/* KEY=VALUE: @w split in place; false when it has no '=' or an empty key. */
static bool split_kv(char *w, char **value)
{
	char *eq = strchr(w, '=');
	if (!eq || eq == w)
		return false;
	*eq = '\0';
	*value = eq + 1;
	return true;
}

/* A library's version as its hello says it ("8.2.0", "5.0.0-beta.2",
 * "1.2.3+local"): kept in @out, or false when it is empty, too long or holds
 * anything else (it goes into meta.txt and a chart title). */
static bool version_word(const char *v, char *out, size_t len)
{
	size_t n = strlen(v);
	if (!n || n >= len || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "0123456789.-+_~") != n)
		return false;
	memcpy(out, v, n + 1);
	return true;
}

static int yes_no(const char *key, const char *v, bool *out, char *why, size_t len)
{
	if (!strcmp(v, "yes") || !strcmp(v, "no")) {
		*out = v[0] == 'y';
		return 0;
	}
	return bad(why, len, "hello: %s= takes yes or no, got '%.40s'", key, v);
}

/* claims=LETTERS: each of M D F O L at most once (or "-": none). */
static int hello_claims(const char *v, struct lb_proto_msg *m, char *why, size_t len)
{
	static const char letters[] = "MDFOL"; /* enum lb_claim's order */

	m->claims_given = true;
	if (!strcmp(v, "-"))
		return 0;
	for (const char *c = v; *c; c++) {
		const char *at = strchr(letters, *c);
		if (!*c || !at || (m->claims & 1u << (at - letters)))
			return bad(why, len, "hello: claims= takes letters of MDFOL, each once (or - "
				   "for none), got '%.40s'", v);
		m->claims |= 1u << (at - letters);
	}
	return *v ? 0 : bad(why, len, "hello: claims= takes letters of MDFOL (or - for none)");
}

/* A failpoint's name: 1 to 31 of a-z, 0-9 and '-'. */
static bool failpoint_name(const char *s, size_t n)
{
	if (n == 0 || n >= LB_PROTO_FAILPOINT_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* failpoints=A,B: at most LB_PROTO_FAILPOINTS_MAX names, each once. */
static int hello_failpoints(const char *v, struct lb_proto_msg *m, char *why, size_t len)
{
	for (const char *p = v;; p++) {
		size_t n = strcspn(p, ",");
		if (!failpoint_name(p, n) || m->n_failpoints == LB_PROTO_FAILPOINTS_MAX)
			return bad(why, len, "hello: failpoints= takes 1 to %d names of a-z, 0-9 and "
				   "'-' (at most %d characters), separated by commas, got '%.60s'",
				   LB_PROTO_FAILPOINTS_MAX, LB_PROTO_FAILPOINT_LEN - 1, v);
		for (int i = 0; i < m->n_failpoints; i++)
			if (strlen(m->failpoints[i]) == n && !strncmp(m->failpoints[i], p, n))
				return bad(why, len, "hello: failpoint '%.*s' named twice", (int)n, p);
		snprintf(m->failpoints[m->n_failpoints++], LB_PROTO_FAILPOINT_LEN, "%.*s", (int)n, p);
		p += n;
		if (!*p)
			return 0;
	}
}

static int parse_hello(const char *line, struct lb_proto_msg *m, char *why, size_t len)
{
	const char *p = line + 5;
	char w[LB_PROTO_LINE_MAX + 1], *v;
	size_t full;
	unsigned seen = 0;
	int64_t version;

	if (!next_word(&p, w, sizeof(w), &full) || !lb_parse_i64(w, 1, 1000000, &version))
		return bad(why, len, "expected 'hello VERSION library=... version=...'");
	m->version = (int)version;
	if (m->version < LB_ADAPTER_PROTOCOL_MIN || m->version > LB_ADAPTER_PROTOCOL)
		return bad(why, len, "speaks protocol version %d; this lockbench speaks %d (and "
			   "accepts %d)", m->version, LB_ADAPTER_PROTOCOL, LB_ADAPTER_PROTOCOL_MIN);
	static const char *const keys[] = { "library", "version", "language", "extend", "lost",
					    "extends", "claims", "failpoints" };
	static const int since[] = { 1, 1, 1, 1, 1, 2, 3, 3 };
	while (next_word(&p, w, sizeof(w), &full)) {
		if (!split_kv(w, &v))
			return bad(why, len, "hello: expected KEY=VALUE words, got '%.40s'", w);
		size_t k = 0;
		while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[k], w))
			k++;
		if (k == sizeof(keys) / sizeof(keys[0]) || m->version < since[k])
			return bad(why, len, "hello: unknown field '%.40s' (version %d has library, "
				   "version, language, extend, lost%s%s)", w, m->version,
				   m->version >= 2 ? ", extends" : "",
				   m->version >= 3 ? ", claims, failpoints" : "");
		if (seen & 1u << k)
			return bad(why, len, "hello: field '%s' given twice", w);
		seen |= 1u << k;
		if (k == 1 && !version_word(v, m->lib_version, sizeof(m->lib_version)))
			return bad(why, len, "hello: version= takes 1 to %zu letters, digits and "
				   ". - + _ ~, got '%.40s'", sizeof(m->lib_version) - 1, v);
		if (k == 3 && yes_no(w, v, &m->can_extend, why, len) < 0)
			return -1;
		if (k == 4 && yes_no(w, v, &m->can_lost, why, len) < 0)
			return -1;
		if (k == 5) {
			if (!strcmp(v, "never"))
				m->extends = LB_EXTENDS_NEVER;
			else if (!strcmp(v, "reported"))
				m->extends = LB_EXTENDS_REPORTED;
			else if (!strcmp(v, "silently"))
				m->extends = LB_EXTENDS_SILENTLY;
			else
				return bad(why, len, "hello: extends= takes never, reported or silently, "
					   "got '%.40s'", v);
		}
		if (k == 6 && hello_claims(v, m, why, len) < 0)
			return -1;
		if (k == 7 && hello_failpoints(v, m, why, len) < 0)
			return -1;
	}
	m->kind = LB_MSG_HELLO;
	return 0;
}

static int parse_acquired(const char *line, struct lb_proto_msg *m, char *why, size_t len)
{
	const char *p = line + 8;
	char w[LB_PROTO_LINE_MAX + 1], *v;
	size_t full;
	unsigned seen = 0;

	while (next_word(&p, w, sizeof(w), &full)) {
		int k = -1;
		if (split_kv(w, &v))
			k = !strcmp(w, "token") ? 0 : !strcmp(w, "fence") ? 1 :
			    !strcmp(w, "validity_ms") ? 2 : -1;
		if (k < 0)
			return bad(why, len, "acquired: expected token=T, fence=N or validity_ms=N, "
				   "got '%.40s'", w);
		if (seen & 1u << k)
			return bad(why, len, "acquired: field '%s' given twice", w);
		seen |= 1u << k;
		if (k == 0 && (!*v || full > 256))
			return bad(why, len, "acquired: token= takes 1 to 256 characters");
		if (k == 0)
			snprintf(m->token, sizeof(m->token), "%s", v);
		if (k == 1 && !lb_parse_i64(v, 0, LB_PROTO_FENCE_MAX, &m->fence))
			return bad(why, len, "fence: expected a whole number from 0 to %lld, got '%.40s'",
				   (long long)LB_PROTO_FENCE_MAX, v);
		if (k == 2 && !lb_parse_i64(v, 0, LB_PROTO_MS_MAX, &m->validity_ms))
			return bad(why, len, "validity_ms: expected a whole number of ms from 0 to %lld "
				   "(365 days), got '%.40s'", (long long)LB_PROTO_MS_MAX, v);
	}
	m->kind = LB_MSG_ACQUIRED;
	return 0;
}

/* "lost MESSAGE" or "error MESSAGE": the rest of the line is text. */
static void take_text(const char *line, size_t word, struct lb_proto_msg *m)
{
	const char *t = line + word;
	while (*t == ' ')
		t++;
	lb_proto_printable(t, m->text, sizeof(m->text));
}

/* The one-word replies and which request each answers. */
static const struct {
	const char *word;
	enum lb_proto_kind kind;
	enum lb_proto_req answers, also;
} bare[] = {
	{ "ok", LB_MSG_OK, LB_REQ_CONFIG, LB_REQ_CONFIG },
	{ "busy", LB_MSG_BUSY, LB_REQ_ACQUIRE, LB_REQ_ACQUIRE },
	{ "released", LB_MSG_RELEASED, LB_REQ_RELEASE, LB_REQ_RELEASE },
	{ "not-owned", LB_MSG_NOT_OWNED, LB_REQ_RELEASE, LB_REQ_EXTEND },
	{ "extended", LB_MSG_EXTENDED, LB_REQ_EXTEND, LB_REQ_EXTEND },
	{ "unsupported", LB_MSG_UNSUPPORTED, LB_REQ_EXTEND, LB_REQ_EXTEND },
	{ "bye", LB_MSG_BYE, LB_REQ_QUIT, LB_REQ_QUIT },
};

static const char *expected(enum lb_proto_req q)
{
	switch (q) {
	case LB_REQ_HELLO: return "'hello VERSION library=... version=...'";
	case LB_REQ_CONFIG: return "'ok' or 'error MESSAGE'";
	case LB_REQ_ACQUIRE: return "'acquired [token=T] [fence=N] [validity_ms=N]', 'busy' or "
				    "'error MESSAGE'";
	case LB_REQ_RELEASE: return "'released', 'not-owned' or 'error MESSAGE'";
	case LB_REQ_EXTEND: return "'extended', 'not-owned', 'unsupported' or 'error MESSAGE'";
	case LB_REQ_QUIT: return "'bye'";
	default: return "nothing";
	}
}

static int parse_notice(const char *line, int version, bool can_lost, struct lb_proto_msg *m,
			char *why, size_t len)
{
	m->notice = true;
	if (first(line, "lost")) {
		if (!can_lost)
			return bad(why, len, "a 'lost' notice from an adapter whose hello said lost=no");
		m->kind = LB_MSG_LOST;
		take_text(line, 4, m);
		return 0;
	}
	/* extended ttl_ms=N */
	const char *p = line + 8;
	char w[64], *v;
	size_t full;
	if (version < 2)
		return bad(why, len, "'extended ttl_ms=N' is a notice of protocol version 2; this "
			   "adapter's hello said %d", version);
	if (!next_word(&p, w, sizeof(w), &full) || full >= sizeof(w) || !split_kv(w, &v) ||
	    strcmp(w, "ttl_ms") || !lb_parse_i64(v, 0, LB_PROTO_MS_MAX, &m->ttl_ms) ||
	    next_word(&p, w, sizeof(w), &full))
		return bad(why, len, "expected the notice 'extended ttl_ms=N' (N a whole number of ms "
			   "from 0 to %lld, 365 days)", (long long)LB_PROTO_MS_MAX);
	m->kind = LB_MSG_LEASE;
	return 0;
}

/* "at NAME" (version 3), while an acquire, release or extend is answered. */
static int parse_at(const char *line, enum lb_proto_req asked, int version, struct lb_proto_msg *m,
		    char *why, size_t len)
{
	const char *name = line + 3;

	if (version < 3)
		return bad(why, len, "'at NAME' is a message of protocol version 3; this adapter's "
			   "hello said %d", version);
	if (asked != LB_REQ_ACQUIRE && asked != LB_REQ_RELEASE && asked != LB_REQ_EXTEND)
		return bad(why, len, "'at NAME' comes only while an acquire, release or extend is "
			   "answered, not in answer to '%s'", lb_proto_req_name(asked));
	if (line[2] != ' ' || !failpoint_name(name, strlen(name)))
		return bad(why, len, "expected 'at NAME' (a failpoint's name: a-z, 0-9 and '-', at "
			   "most %d characters)", LB_PROTO_FAILPOINT_LEN - 1);
	snprintf(m->at, sizeof(m->at), "%s", name);
	m->kind = LB_MSG_AT;
	return 0;
}

int lb_proto_parse(const char *line, enum lb_proto_req asked, int version, bool can_lost,
		   struct lb_proto_msg *m, char *why, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->fence = m->validity_ms = m->ttl_ms = -1;
	m->extends = LB_EXTENDS_SILENTLY;
	/* the notices first: they may come at any moment */
	if (first(line, "lost") || (first(line, "extended") && line[8] == ' '))
		return parse_notice(line, version, can_lost, m, why, len);
	if (asked == LB_REQ_NONE)
		return bad(why, len, "nothing was asked: only 'lost MESSAGE'%s come unasked",
			   version >= 2 ? " and 'extended ttl_ms=N'" : "");
	if (first(line, "error")) {
		if (asked == LB_REQ_HELLO || asked == LB_REQ_QUIT)
			return bad(why, len, "expected %s in answer to '%s'", expected(asked),
				   lb_proto_req_name(asked));
		m->kind = LB_MSG_ERROR;
		take_text(line, 5, m);
		return 0;
	}
	if (!plain(line))
		return bad(why, len, "a control or non-ASCII byte in a reply (only an error or lost "
			   "message may hold any text)");
	if (asked == LB_REQ_HELLO && first(line, "hello"))
		return parse_hello(line, m, why, len);
	if (first(line, "at"))
		return parse_at(line, asked, version, m, why, len);
	if (asked == LB_REQ_ACQUIRE && first(line, "acquired"))
		return parse_acquired(line, m, why, len);
	for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++) {
		if (!first(line, bare[i].word))
			continue;
		if (asked != bare[i].answers && asked != bare[i].also)
			break;
		if (line[strlen(bare[i].word)])
			return bad(why, len, "'%s' takes no words after it in answer to '%s'",
				   bare[i].word, lb_proto_req_name(asked));
		m->kind = bare[i].kind;
		return 0;
	}
	return bad(why, len, "expected %s in answer to '%s'", expected(asked),
		   lb_proto_req_name(asked));
}
