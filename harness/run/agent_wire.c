/*
 * agent_wire.c - the lines between `run --hosts` and `lockbench agent`
 * (agent_wire.h): read bounded, written and taken back field by field.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "agent_wire.h"
#include "node.h"
#include "util.h"

/* A line of the buffer, if whole: its length (newline excluded), or -1. */
static ssize_t whole_line(const struct lb_lines *l)
{
	const char *nl = memchr(l->buf, '\n', l->len);
	return nl ? nl - l->buf : -1;
}

static int take_line(struct lb_lines *l, size_t n, char *out, size_t cap, char *why, size_t wlen)
{
	int rc = 1;

	if (n + 1 > cap || n + 1 > LB_AGENT_LINE_MAX) {
		snprintf(why, wlen, "a line of %zu bytes (at most %d)", n, LB_AGENT_LINE_MAX - 1);
		rc = LB_EPROTO;
	}
	for (size_t i = 0; rc == 1 && i < n; i++)
		if ((unsigned char)l->buf[i] < 0x20 || l->buf[i] == 0x7f) {
			snprintf(why, wlen, "a control character (0x%02x) at byte %zu of a line",
				 (unsigned char)l->buf[i], i + 1);
			rc = LB_EPROTO;
		}
	if (rc == 1) {
		memcpy(out, l->buf, n);
		out[n] = '\0';
	}
	size_t used = l->eof && n == l->len ? n : n + 1;
	memmove(l->buf, l->buf + used, l->len - used);
	l->len -= used;
	return rc;
}

int lb_lines_next(struct lb_lines *l, char *out, size_t cap, int64_t deadline, char *why,
		  size_t wlen)
{
	for (;;) {
		ssize_t n = whole_line(l);
		if (n >= 0)
			return take_line(l, (size_t)n, out, cap, why, wlen);
		if (l->len >= LB_AGENT_LINE_MAX) {
			snprintf(why, wlen, "a line longer than %d bytes", LB_AGENT_LINE_MAX - 1);
			return LB_EPROTO;
		}
		if (l->eof) {
			if (l->len == 0)
				return 0;
			snprintf(why, wlen, "the input ended inside a line (no newline)");
			l->len = 0;
			return LB_EPROTO;
		}
		struct pollfd p = { .fd = l->fd, .events = POLLIN };
		int64_t left = deadline ? deadline - lb_now_ns() : 0;
		int ms = left > 0 ? (int)((left + LB_NS_PER_MS - 1) / LB_NS_PER_MS) : 0;
		int pr = poll(&p, 1, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0)
			return LB_ETIMEOUT;
		ssize_t got = read(l->fd, l->buf + l->len, sizeof(l->buf) - l->len);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0)
			l->eof = true;
		else
			l->len += (size_t)got;
	}
}

int lb_clock_offset(struct lb_node *n, int rounds, int64_t *offset_ns, int64_t *rtt_ns,
		    char *why, size_t wlen)
{
	int64_t best = -1;

	for (int k = 0; k < rounds; k++) {
		int64_t a = lb_now_ns();
		redisReply *rep = lb_node_cmd(n, "TIME");
		int64_t b = lb_now_ns();
		int64_t s, us;
		if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
		    rep->element[0]->type != REDIS_REPLY_STRING ||
		    rep->element[1]->type != REDIS_REPLY_STRING ||
		    !lb_parse_i64(rep->element[0]->str, 0, INT64_MAX / LB_NS_PER_S - 1, &s) ||
		    !lb_parse_i64(rep->element[1]->str, 0, 999999, &us)) {
			snprintf(why, wlen, "TIME on %s:%d: %s", n->host, n->port,
				 rep ? "an answer that is not two numbers" : n->why);
			if (rep)
				freeReplyObject(rep);
			return LB_EREDIS;
		}
		freeReplyObject(rep);
		if (best < 0 || b - a < best) {
			best = b - a;
			*offset_ns = s * LB_NS_PER_S + us * 1000 - (a + (b - a) / 2);
		}
	}
	*rtt_ns = best;
	return 0;
}

static void put_hist(FILE *out, int id, const char *kind, const struct lb_hist *h)
{
	fprintf(out, "hist %d %s %" PRIu64 " %" PRIu64 " %" PRIu64, id, kind, h->n, h->max_ns,
		h->sum_ns);
	for (size_t i = 0; i < LB_HIST_BUCKETS; i++)
		if (h->counts[i])
			fprintf(out, " %zu:%" PRIu64, i, h->counts[i]);
	fputc('\n', out);
}

void lb_wire_put_client(FILE *out, struct lb_shared *sh, int id)
{
	struct lb_client_slot *c = &sh->client[id];
	uint32_t n = atomic_load(&c->n_records), nt = atomic_load(&c->n_tries);

	if (n > sh->cap)
		n = (uint32_t)sh->cap;
	if (nt > sh->try_cap)
		nt = (uint32_t)sh->try_cap;
	fprintf(out, "client %d %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		" %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %" PRId64 " %" PRId64 " %d %d %" PRIu64
		" %" PRIu64 " %d %" PRId64 " %u %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
		" %d %u %d %" PRId64 " %d %" PRIu64 " %" PRIu64 " %" PRId64 " %d\n",
		id, n, atomic_load(&c->attempts), atomic_load(&c->acquire_errors), c->acquires,
		c->timeouts, c->counter_writes, c->uncertain_writes, c->indeterminate_ops,
		c->writes_aborted, atomic_load(&c->calls), atomic_load(&c->first_call_ns),
		atomic_load(&c->death_ns), c->cut, atomic_load(&c->dead), c->cpu_us,
		atomic_load(&c->cpu_adapter_us), atomic_load(&c->cpu_said), atomic_load(&c->cpu_ns),
		atomic_load(&c->wait_calls), atomic_load(&c->wait_start_ns),
		atomic_load(&c->call_start_ns), atomic_load(&c->wait_try_ns),
		atomic_load(&c->wait_end_ns), atomic_load(&c->wait_cut), nt,
		atomic_load(&c->tries_full), atomic_load(&c->try_open_ns),
		atomic_load(&c->write_in_flight), atomic_load(&c->cmds_held),
		atomic_load(&c->cmds_waiting), c->first_error_ns, c->first_error_said);
	if (c->first_error_said) {
		char said[LB_SAID_MAX];
		size_t k = 0;
		for (const char *p = c->first_error; *p && k + 1 < sizeof(said); p++)
			said[k++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
		said[k] = '\0';
		fprintf(out, "said %d %s\n", id, said);
	}
	put_hist(out, id, "latency", &c->latency);
	put_hist(out, id, "censored", &c->censored);
	for (uint32_t i = 0; i < n; i++) {
		const struct lb_record *r = lb_shared_record(sh, id, i);
		fprintf(out, "rec %d %u %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
			" %" PRId64 " %u %" PRId64 " %d %d\n", id, i, r->acquire_start_ns,
			r->enter_ns, r->exit_ns, r->release_ns, r->fence, r->lease_end_ns, r->nodes,
			(int64_t)r->token, r->outcome, atomic_load(&r->state));
	}
	for (uint32_t i = 0; i < nt; i++) {
		const struct lb_try_rec *t = lb_shared_try(sh, id, i);
		fprintf(out, "try %d %u %" PRId64 " %" PRId64 " %d\n", id, i, t->start_ns, t->end_ns,
			t->result);
	}
}

int lb_wire_words(char *line, char **w, int max)
{
	int n = 0;
	char *p = line;

	while (*p && n < max) {
		w[n++] = p;
		char *sp = strchr(p, ' ');
		if (!sp)
			break;
		*sp = '\0';
		p = sp + 1;
	}
	return n;
}

/* Words @from.. of @w as numbers into @v (@n of them). */
static bool numbers(char **w, int from, int n, int64_t *v, char *why, size_t wlen)
{
	for (int i = 0; i < n; i++)
		if (!lb_parse_i64(w[from + i], INT64_MIN, INT64_MAX, &v[i])) {
			snprintf(why, wlen, "field %d ('%.40s') is not a number", from + i + 1,
				 w[from + i]);
			return false;
		}
	return true;
}

static int64_t moved(int64_t t, int64_t by)
{
	return t ? t + by : 0; /* 0: none */
}

#define CLIENT_FIELDS 32

static int take_client(struct lb_shared *sh, struct lb_client_slot *c, const int64_t *v,
		       int64_t shift, int64_t abs_ns, char *why, size_t wlen)
{
	if (v[0] < 0 || (size_t)v[0] > sh->cap || v[24] < 0 || (size_t)v[24] > sh->try_cap) {
		snprintf(why, wlen, "a client's records (%" PRId64 ") or attempts (%" PRId64
			 ") past what the run keeps", v[0], v[24]);
		return LB_EPROTO;
	}
	for (int i = 1; i < CLIENT_FIELDS; i++)
		if (v[i] < 0 && i != 10 && i != 11 && i != 17 && i != 30) {
			snprintf(why, wlen, "field %d is negative", i + 3);
			return LB_EPROTO;
		}
	atomic_store(&c->n_records, (uint32_t)v[0]);
	atomic_store(&c->attempts, (uint64_t)v[1]);
	atomic_store(&c->acquire_errors, (uint64_t)v[2]);
	c->acquires = (uint64_t)v[3];
	c->timeouts = (uint64_t)v[4];
	c->counter_writes = (uint64_t)v[5];
	c->uncertain_writes = (uint64_t)v[6];
	c->indeterminate_ops = (uint64_t)v[7];
	c->writes_aborted = (uint64_t)v[8];
	atomic_store(&c->calls, (uint32_t)v[9]);
	atomic_store(&c->first_call_ns, moved(v[10], abs_ns));
	atomic_store(&c->death_ns, moved(v[11], shift));
	c->cut = v[12] != 0;
	atomic_store(&c->dead, v[13] != 0);
	c->cpu_us = (uint64_t)v[14];
	atomic_store(&c->cpu_adapter_us, (uint64_t)v[15]);
	atomic_store(&c->cpu_said, v[16] != 0);
	atomic_store(&c->cpu_ns, v[17]);
	atomic_store(&c->wait_calls, (uint32_t)v[18]);
	atomic_store(&c->wait_start_ns, moved(v[19], abs_ns));
	atomic_store(&c->call_start_ns, moved(v[20], abs_ns));
	atomic_store(&c->wait_try_ns, moved(v[21], abs_ns));
	atomic_store(&c->wait_end_ns, moved(v[22], abs_ns));
	atomic_store(&c->wait_cut, v[23] != 0);
	atomic_store(&c->n_tries, (uint32_t)v[24]);
	atomic_store(&c->tries_full, v[25] != 0);
	atomic_store(&c->try_open_ns, moved(v[26], abs_ns));
	atomic_store(&c->write_in_flight, v[27] != 0);
	atomic_store(&c->cmds_held, (uint64_t)v[28]);
	atomic_store(&c->cmds_waiting, (uint64_t)v[29]);
	c->first_error_ns = v[30] + shift;
	c->first_error_said = v[31] != 0;
	atomic_store(&c->alive, 0);
	return 0;
}

static int take_hist(struct lb_hist *h, char **w, int n, char *why, size_t wlen)
{
	int64_t v[3];

	if (n < 6 || !numbers(w, 3, 3, v, why, wlen))
		return LB_EPROTO;
	memset(h, 0, sizeof(*h));
	h->n = (uint64_t)v[0];
	h->max_ns = (uint64_t)v[1];
	h->sum_ns = (uint64_t)v[2];
	for (int i = 6; i < n; i++) {
		char *colon = strchr(w[i], ':');
		int64_t b, k;
		if (!colon)
			goto bad;
		*colon = '\0';
		if (!lb_parse_i64(w[i], 0, LB_HIST_BUCKETS - 1, &b) ||
		    !lb_parse_i64(colon + 1, 0, INT64_MAX, &k))
			goto bad;
		h->counts[b] = (uint64_t)k;
		continue;
bad:
		snprintf(why, wlen, "field %d is not BUCKET:COUNT (bucket 0 to %d)", i + 1,
			 LB_HIST_BUCKETS - 1);
		return LB_EPROTO;
	}
	return 0;
}

static int take_rec(struct lb_shared *sh, int id, const int64_t *v, int64_t shift, char *why,
		    size_t wlen)
{
	if (v[0] < 0 || (size_t)v[0] >= sh->cap || v[10] < LB_REC_EMPTY || v[10] > LB_REC_RELEASED ||
	    v[7] < 0 || v[7] > UINT32_MAX || v[9] < INT32_MIN ||
	    v[9] > INT32_MAX) {
		snprintf(why, wlen, "a record out of range (its index, nodes, outcome or state)");
		return LB_EPROTO;
	}
	struct lb_record *r = lb_shared_record(sh, id, (size_t)v[0]);
	r->acquire_start_ns = v[1] + shift;
	r->enter_ns = v[2] + shift;
	r->exit_ns = v[3] + shift;
	r->release_ns = v[4] + shift;
	r->fence = v[5];
	r->lease_end_ns = v[6] == LB_LEASE_UNKNOWN || v[6] == LB_LEASE_NEVER ? v[6] :
			  v[6] + shift; /* relative, or the markers */
	r->nodes = (uint32_t)v[7];
	r->token = (uint64_t)v[8];
	r->outcome = (int32_t)v[9];
	atomic_store(&r->state, (int32_t)v[10]);
	return 0;
}

static int take_try(struct lb_shared *sh, int id, const int64_t *v, int64_t shift, char *why,
		    size_t wlen)
{
	if (v[0] < 0 || (size_t)v[0] >= sh->try_cap || v[3] < INT32_MIN || v[3] > INT32_MAX) {
		snprintf(why, wlen, "an attempt out of range (its index or result)");
		return LB_EPROTO;
	}
	struct lb_try_rec *t = lb_shared_try(sh, id, (size_t)v[0]);
	t->start_ns = v[1] + shift;
	t->end_ns = v[2] + shift;
	t->result = (int32_t)v[3];
	return 0;
}

int lb_wire_take(struct lb_shared *sh, const char *line, int first, int count, int64_t shift_ns,
		 int64_t abs_ns, char *why, size_t wlen)
{
	char buf[LB_AGENT_LINE_MAX], *w[LB_HIST_BUCKETS + 8];
	int64_t id, v[CLIENT_FIELDS];

	snprintf(buf, sizeof(buf), "%s", line);
	int n = lb_wire_words(buf, w, (int)(sizeof(w) / sizeof(w[0])));
	if (n < 2 || !lb_parse_i64(w[1], first, (int64_t)first + count - 1, &id)) {
		snprintf(why, wlen, "field 2 is not a client of this host (%d to %d)", first,
			 first + count - 1);
		return LB_EPROTO;
	}
	struct lb_client_slot *c = &sh->client[id];
	if (!strcmp(w[0], "said")) {
		const char *text = line + (w[1] - buf) + strlen(w[1]) + (n > 2);
		snprintf(c->first_error, sizeof(c->first_error), "%s", text);
		return 0;
	}
	if (!strcmp(w[0], "hist") && n >= 3 && (!strcmp(w[2], "latency") || !strcmp(w[2], "censored")))
		return take_hist(!strcmp(w[2], "latency") ? &c->latency : &c->censored, w, n, why,
				 wlen);
	int want = !strcmp(w[0], "client") ? CLIENT_FIELDS : !strcmp(w[0], "rec") ? 11 :
		   !strcmp(w[0], "try") ? 4 : -1;
	if (want < 0 || n != want + 2) {
		snprintf(why, wlen, want < 0 ? "an unknown line '%.20s'" :
			 "a '%.20s' line of %d fields (%d expected)", w[0], n, want + 2);
		return LB_EPROTO;
	}
	if (!numbers(w, 2, want, v, why, wlen))
		return LB_EPROTO;
	for (int i = 0; i < want; i++) /* a time moved must not overflow; a token is any */
		if ((v[i] > INT64_MAX / 4 || v[i] < INT64_MIN / 4) &&
		    !(want == 11 && (i == 8 || (i == 6 && v[i] == LB_LEASE_NEVER)))) {
			snprintf(why, wlen, "field %d is out of range", i + 3);
			return LB_EPROTO;
		}
	if (!strcmp(w[0], "client"))
		return take_client(sh, c, v, shift_ns, abs_ns, why, wlen);
	if (!strcmp(w[0], "rec"))
		return take_rec(sh, (int)id, v, shift_ns, why, wlen);
	return take_try(sh, (int)id, v, shift_ns, why, wlen);
}
