#include "oracle.h"
#include "util.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *lb_outcome_name(enum lb_outcome o)
{
	static const char *const names[LB_OUT_COUNT] = {
		"released", "lost", "foreign", "error", "killed", "cut", "indeterminate",
	};
	return (unsigned)o < LB_OUT_COUNT ? names[o] : "?";
}

int lb_outcome_parse(const char *name)
{
	for (int o = 0; o < LB_OUT_COUNT; o++)
		if (!strcmp(name, lb_outcome_name((enum lb_outcome)o)))
			return o;
	return -1;
}

const char *lb_wait_end_name(enum lb_wait_end e)
{
	static const char *const names[LB_WEND_COUNT] = { "gave-up", "cut", "killed" };
	return (unsigned)e < LB_WEND_COUNT ? names[e] : "?";
}

int lb_wait_end_parse(const char *name)
{
	for (int e = 0; e < LB_WEND_COUNT; e++)
		if (!strcmp(name, lb_wait_end_name((enum lb_wait_end)e)))
			return e;
	return -1;
}

const char *lb_foreign_source_name(enum lb_foreign_source s)
{
	return s == LB_FOREIGN_SERVER ? "server" : s == LB_FOREIGN_CLIENT ? "client" : "n/a";
}

const char *lb_recovered_name(enum lb_recovered r)
{
	return r == LB_REC_YES ? "yes" : r == LB_REC_NO ? "no" : "n/a";
}

double lb_jain(const uint64_t *x, size_t n)
{
	double sum = 0, sq = 0;

	for (size_t i = 0; i < n; i++) {
		sum += (double)x[i];
		sq += (double)x[i] * (double)x[i];
	}
	return sq > 0 ? sum * sum / ((double)n * sq) : 1.0;
}

/* An edge of a section: +1 at enter, -1 at exit. */
struct edge {
	int key;
	int64_t t;
	int delta;
	int client;
	uint32_t seq;
};

static int edge_cmp(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	/* exits first at equal times: touching sections do not overlap */
	if (a->delta != b->delta)
		return a->delta - b->delta;
	/* two enters at one instant: the lower (client, seq) began first */
	if (a->client != b->client)
		return a->client < b->client ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int64_t lb_section_exit(const struct lb_section *s, int64_t end_ns)
{
	if (s->exit_ns < 0)
		return end_ns > s->enter_ns ? end_ns : s->enter_ns;
	return s->exit_ns > s->enter_ns ? s->exit_ns : s->enter_ns;
}

/* Overlaps, overlap time and max holders, in one sweep over the edges. */
static int sweep(const struct lb_section *s, size_t n, int64_t end_ns, struct lb_verdict *v)
{
	struct edge *e = malloc(sizeof(*e) * (2 * n + 1));
	int inside = 0, key = -1;
	int64_t since = 0;

	if (!e)
		return LB_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t exit = lb_section_exit(&s[i], end_ns);
		if (exit == s[i].enter_ns) {
			/* a client that died in its acquire (a failpoint's crash) never
			 * believed it held the lock; any other instant inside is one:
			 * [t, t + 1 ns), judged like any section */
			if (s[i].outcome == LB_OUT_KILLED)
				continue;
			exit = s[i].enter_ns + 1;
		}
		e[k++] = (struct edge){ s[i].key, s[i].enter_ns, +1, s[i].client, s[i].seq };
		e[k++] = (struct edge){ s[i].key, exit, -1, s[i].client, s[i].seq };
	}
	qsort(e, k, sizeof(*e), edge_cmp);
	for (size_t i = 0; i < k; i++) {
		if (e[i].key != key) {
			key = e[i].key;
			inside = 0;
		}
		if (e[i].delta > 0) {
			if (inside >= 1)
				v->overlaps++;
			if (++inside == 2)
				since = e[i].t;
			if (inside > v->max_holders)
				v->max_holders = inside;
		} else {
			if (inside-- == 2)
				v->overlap_ms += (double)(e[i].t - since) / 1e6;
		}
	}
	free(e);
	return 0;
}

/* Did a waiter of @key begin an attempt at or after @t? */
static bool tried_since(const struct lb_history *h, int key, int64_t t)
{
	for (size_t i = 0; i < h->n_w; i++)
		if (h->w[i].key == key && h->w[i].last_try_ns >= t)
			return true;
	return false;
}

/* From each holder's death to the next enter of its key by anyone; whether
 * its lock came back, never did, or nobody can tell. */
static void orphans(const struct lb_history *h, struct lb_verdict *v)
{
	const struct lb_section *s = h->s;
	bool never = false;

	v->undecided_ns = -1;
	for (size_t i = 0; i < h->n; i++) {
		if (s[i].outcome != LB_OUT_KILLED)
			continue;
		int64_t death = lb_section_exit(&s[i], h->end_ns), next = -1;
		v->holder_deaths++;
		for (size_t j = 0; j < h->n; j++)
			if (s[j].key == s[i].key && j != i && s[j].enter_ns >= death &&
			    (next < 0 || s[j].enter_ns < next))
				next = s[j].enter_ns;
		if (next < 0) {
			if (h->ttl_ns > 0 && tried_since(h, s[i].key, death + h->ttl_ns))
				never = true;
			else if (v->undecided_ns < 0 || death < v->undecided_ns)
				v->undecided_ns = death;
			next = h->end_ns;
		}
		double gap = (double)(next - death) / 1e6;
		if (gap > v->orphan_ms)
			v->orphan_ms = gap;
	}
	v->recovered = never ? LB_REC_NO : !v->holder_deaths || v->undecided_ns >= 0 ? LB_REC_NA :
		       LB_REC_YES;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int lb_section_ix_by_enter(const void *pa, const void *pb, void *base)
{
	const struct lb_section *a = &((const struct lb_section *)base)[*(const size_t *)pa];
	const struct lb_section *b = &((const struct lb_section *)base)[*(const size_t *)pb];

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->enter_ns != b->enter_ns)
		return a->enter_ns < b->enter_ns ? -1 : 1;
	if (a->client != b->client)
		return a->client < b->client ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Hand-off latency: from a release to the next enter on that key (the
 * earliest at or after the release; ties by client, seq), when that client
 * was already waiting (its acquire began at or before the release). The
 * history may come in any order. */
static int handoffs(const struct lb_section *s, size_t n, struct lb_verdict *v)
{
	int64_t *gap = malloc(sizeof(*gap) * (n ? n : 1));
	size_t *ix = malloc(sizeof(*ix) * (n ? n : 1)), k = 0;

	if (!gap || !ix) {
		free(gap);
		free(ix);
		return LB_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof(*ix), lb_section_ix_by_enter, (void *)s);
	for (size_t i = 0; i < n; i++) {
		if (s[i].release_ns < 0)
			continue;
		/* the first index in order with this key and enter >= release */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct lb_section *m = &s[ix[mid]];
			if (m->key < s[i].key || (m->key == s[i].key && m->enter_ns < s[i].release_ns))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && ix[lo] == i) /* itself: entered as it released */
			lo++;
		if (lo >= n || s[ix[lo]].key != s[i].key)
			continue;
		if (s[ix[lo]].acquire_start_ns <= s[i].release_ns)
			gap[k++] = s[ix[lo]].enter_ns - s[i].release_ns;
	}
	free(ix);
	qsort(gap, k, sizeof(*gap), cmp_i64);
	v->handoffs = k;
	if (k) { /* nearest rank: the ceil(q k)-th smallest */
		v->handoff_p50_us = (double)gap[(size_t)ceil(0.50 * (double)k) - 1] / 1000.0;
		v->handoff_p99_us = (double)gap[(size_t)ceil(0.99 * (double)k) - 1] / 1000.0;
	}
	free(gap);
	return 0;
}

int lb_oracle_judge(const struct lb_section *s, size_t n, int clients, int64_t end_ns,
		    struct lb_verdict *v, uint64_t *per_client)
{
	struct lb_history h = { .s = s, .n = n, .clients = clients, .end_ns = end_ns, .ttl_ns = -1 };
	return lb_oracle_judge_history(&h, v, per_client);
}

int lb_oracle_judge_history(const struct lb_history *h, struct lb_verdict *v, uint64_t *per_client)
{
	const struct lb_section *s = h->s;
	size_t n = h->n;
	int clients = h->clients;
	int64_t end_ns = h->end_ns;
	uint64_t *counts = calloc((size_t)(clients > 0 ? clients : 1), sizeof(*counts));
	int rc;

	memset(v, 0, sizeof(*v));
	if (!counts)
		return LB_ENOMEM;
	v->sections = n;
	for (size_t i = 0; i < n; i++) {
		v->completed += s[i].release_ns >= 0;
		if (s[i].outcome == LB_OUT_FOREIGN)
			v->foreign_releases++, v->foreign_client++;
		else if (s[i].outcome == LB_OUT_LOST)
			v->lost_leases++;
		if (s[i].client >= 0 && s[i].client < clients)
			counts[s[i].client]++;
	}
	rc = sweep(s, n, end_ns, v);
	if (rc == 0)
		orphans(h, v);
	if (rc == 0)
		rc = handoffs(s, n, v);
	v->fairness = lb_jain(counts, (size_t)clients);
	if (per_client)
		memcpy(per_client, counts, sizeof(*counts) * (size_t)clients);
	free(counts);
	return rc;
}

static const char *const class_names[LB_CLASS_COUNT] = {
	"safe", "overlap", "foreign-release", "deadlock", "unavailable", "contained", "inconclusive",
	"interrupted",
};

const char *lb_class_name(enum lb_class c)
{
	return (unsigned)c < LB_CLASS_COUNT ? class_names[c] : "?";
}

int lb_class_parse(const char *s)
{
	for (int i = 0; i < LB_CLASS_COUNT; i++)
		if (!strcmp(s, class_names[i]))
			return i;
	return -1;
}

static enum lb_class said(char *why, size_t len, enum lb_class c, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum lb_class said(char *why, size_t len, enum lb_class c, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return c;
}

enum lb_class lb_classify(const struct lb_class_input *in, char *why, size_t len)
{
	const struct lb_verdict *v = in->v;
	bool range = in->lost_max > in->lost_min;
	char lost[64];

	if (in->interrupted) { /* what ran, said; the class is the interruption */
		struct lb_class_input ran = *in;
		char what[160];
		ran.interrupted = 0;
		enum lb_class c = lb_classify(&ran, what, sizeof(what));
		return said(why, len, LB_CLASS_INTERRUPTED, "%s before the end (not compared with "
			    "an expectation); what ran: %s: %s", in->interrupted == SIGINT ?
			    "Ctrl-C (SIGINT)" : in->interrupted == SIGTERM ? "SIGTERM" : "a signal",
			    lb_class_name(c), what);
	}
	if (in->cover && !lb_coverage_enough(in->cover)) {
		const struct lb_coverage *cv = in->cover;
		struct lb_class_input ran = *in;
		ran.cover = NULL;
		enum lb_class c = lb_classify(&ran, NULL, 0);
		return said(why, len, LB_CLASS_INCONCLUSIVE, "%d of %d clients' adapters ended "
			    "before the run did (the first at %.3f s): the clients were there for "
			    "%.0f%% of it, a verdict needs %.0f%% and one to the end; what ran looked %s",
			    cv->silent, cv->clients, (double)cv->first_ns / 1e9, 100 * cv->fraction,
			    100 * LB_COVERAGE_MIN, lb_class_name(c));
	}
	if (range)
		snprintf(lost, sizeof(lost), "lost updates %lld..%lld", in->lost_min, in->lost_max);
	else
		snprintf(lost, sizeof(lost), "lost updates %lld", in->lost_min);
	if (v->foreign_releases > 0 && v->foreign_source != LB_FOREIGN_NA)
		return said(why, len, LB_CLASS_FOREIGN, "%llu release%s deleted another client's lock",
			    (unsigned long long)v->foreign_releases, v->foreign_releases == 1 ? "" : "s");
	if (v->overlaps > 0 && in->lost_max <= 0 && in->stopped > 0)
		return said(why, len, LB_CLASS_CONTAINED, "%llu overlapping sections; %s stopped; "
			    "no update can have been lost", (unsigned long long)v->overlaps,
			    in->stopped == 1 ? "1 write was" : "writes were");
	if (v->overlaps > 0 || in->lost_min > 0) {
		if (v->overlaps > 0 && in->stopped > 0 && in->lost_min <= 0)
			return said(why, len, LB_CLASS_OVERLAP, "%llu overlapping sections; writes were "
				    "stopped, but %s: contained needs the upper end 0",
				    (unsigned long long)v->overlaps, lost);
		if (v->overlaps > 0)
			return said(why, len, LB_CLASS_OVERLAP, "%llu overlapping sections, %s",
				    (unsigned long long)v->overlaps, lost);
		return said(why, len, LB_CLASS_OVERLAP, "%s%s, with no overlap the history saw", lost,
			    range ? " (the lower end, proven)" : "");
	}
	if (v->recovered == LB_REC_NO)
		return said(why, len, LB_CLASS_DEADLOCK, "a holder died and its lock never came back, "
			    "though a client tried it a TTL or more after");
	if (v->holder_deaths > 0 && v->recovered == LB_REC_NA)
		return said(why, len, LB_CLASS_INCONCLUSIVE, "a holder died at %.3f s; nobody got in "
			    "after, and nobody tried its lock a TTL or more after: whether it came "
			    "back is unknown", (double)v->undecided_ns / 1e9);
	if (in->acquire_errors > 0 || in->acquire_timeouts > 0)
		return said(why, len, LB_CLASS_UNAVAILABLE, "%llu attempts found a node down, %llu "
			    "acquires gave up", (unsigned long long)in->acquire_errors,
			    (unsigned long long)in->acquire_timeouts);
	if (in->attempts == 0)
		return said(why, len, LB_CLASS_INCONCLUSIVE, "no client attempted to acquire the lock");
	if (in->unfired)
		return said(why, len, LB_CLASS_INCONCLUSIVE, "the scenario's fault %s never fired: "
			    "the run shows nothing about it", in->unfired);
	if (v->completed == 0)
		return said(why, len, LB_CLASS_INCONCLUSIVE, "no critical section completed "
			    "(%llu entered): nothing shows the lock worked", (unsigned long long)v->sections);
	bool na = v->foreign_source == LB_FOREIGN_NA;
	if (range)
		return said(why, len, LB_CLASS_SAFE, "no overlap, %s (the lower end: none proven)%s",
			    lost, na ? ", foreign releases not measured" : "");
	return said(why, len, LB_CLASS_SAFE, "no overlap, no lost update, %s",
		    na ? "foreign releases not measured" : "no foreign release");
}

void lb_run_coverage(const struct lb_event *ev, size_t n_ev, int clients, int64_t end_ns,
		     struct lb_coverage *cv)
{
	double there = 0;

	*cv = (struct lb_coverage){ .clients = clients, .first_ns = -1, .fraction = 1 };
	if (clients <= 0 || end_ns <= 0)
		return;
	for (int c = 0; c < clients; c++) {
		int64_t gone = end_ns;
		for (size_t i = 0; i < n_ev; i++) /* its first: a client dies once */
			if (ev[i].kind == LB_EV_ADAPTER_DIED && ev[i].client == c && ev[i].t_ns < gone)
				gone = ev[i].t_ns < 0 ? 0 : ev[i].t_ns;
		if (gone < end_ns) {
			cv->silent++;
			if (cv->first_ns < 0 || gone < cv->first_ns)
				cv->first_ns = gone;
		}
		there += (double)gone / (double)end_ns;
	}
	cv->fraction = there / clients;
}

bool lb_coverage_enough(const struct lb_coverage *cv)
{
	return cv->silent == 0 || (cv->silent < cv->clients && cv->fraction >= LB_COVERAGE_MIN);
}

int lb_class_severity(enum lb_class c)
{
	static const int rank[LB_CLASS_COUNT] = {
		[LB_CLASS_SAFE] = 0, [LB_CLASS_UNAVAILABLE] = 1, [LB_CLASS_DEADLOCK] = 2,
		[LB_CLASS_CONTAINED] = 3, [LB_CLASS_OVERLAP] = 4, [LB_CLASS_FOREIGN] = 5,
		[LB_CLASS_INCONCLUSIVE] = 6, [LB_CLASS_INTERRUPTED] = 7,
	};
	return (unsigned)c < LB_CLASS_COUNT ? rank[c] : 0;
}
