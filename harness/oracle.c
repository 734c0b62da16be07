#include "oracle.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *lb_outcome_name(enum lb_outcome o)
{
	static const char *const names[LB_OUT_COUNT] = {
		"released", "lost", "foreign", "error", "killed", "cut",
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
	size_t idx;
};

static int edge_cmp(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	/* exits first at equal times: touching sections do not overlap */
	return a->delta - b->delta;
}

int64_t lb_section_exit(const struct lb_section *s, int64_t end_ns)
{
	return s->exit_ns >= s->enter_ns ? s->exit_ns : end_ns;
}

/* Overlaps, overlap time and max holders, in one sweep over the edges. */
static int sweep(const struct lb_section *s, size_t n, int64_t end_ns, struct lb_verdict *v)
{
	struct edge *e = malloc(sizeof(*e) * (2 * n + 1));
	int inside = 0, key = -1;
	int64_t since = 0;

	if (!e)
		return LB_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		e[2 * i] = (struct edge){ s[i].key, s[i].enter_ns, +1, i };
		e[2 * i + 1] = (struct edge){ s[i].key, lb_section_exit(&s[i], end_ns), -1, i };
	}
	qsort(e, 2 * n, sizeof(*e), edge_cmp);
	for (size_t i = 0; i < 2 * n; i++) {
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

/* From each holder's death to the next acquire of its key by anyone. */
static void orphans(const struct lb_section *s, size_t n, int64_t end_ns, struct lb_verdict *v)
{
	v->recovered = LB_REC_NA;
	for (size_t i = 0; i < n; i++) {
		if (s[i].outcome != LB_OUT_KILLED)
			continue;
		int64_t death = lb_section_exit(&s[i], end_ns), next = -1;
		v->holder_deaths++;
		for (size_t j = 0; j < n; j++)
			if (s[j].key == s[i].key && j != i && s[j].enter_ns >= death &&
			    (next < 0 || s[j].enter_ns < next))
				next = s[j].enter_ns;
		if (next < 0) {
			v->recovered = LB_REC_NO;
			next = end_ns;
		} else if (v->recovered == LB_REC_NA) {
			v->recovered = LB_REC_YES;
		}
		double gap = (double)(next - death) / 1e6;
		if (gap > v->orphan_ms)
			v->orphan_ms = gap;
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Hand-off latency: from a release to the next enter on that key by a client
 * that was already waiting (its acquire began before the release). */
static int handoffs(const struct lb_section *s, size_t n, struct lb_verdict *v)
{
	int64_t *gap = malloc(sizeof(*gap) * (n ? n : 1));
	size_t k = 0;

	if (!gap)
		return LB_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (s[i].release_ns < 0)
			continue;
		int64_t next = -1;
		for (size_t j = i + 1; j < n; j++) { /* sorted by enter */
			if (s[j].key != s[i].key || s[j].enter_ns < s[i].release_ns)
				continue;
			if (s[j].acquire_start_ns <= s[i].release_ns)
				next = s[j].enter_ns;
			break;
		}
		if (next >= 0)
			gap[k++] = next - s[i].release_ns;
	}
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
	uint64_t *counts = calloc((size_t)(clients > 0 ? clients : 1), sizeof(*counts));
	int rc;

	memset(v, 0, sizeof(*v));
	if (!counts)
		return LB_ENOMEM;
	v->sections = n;
	for (size_t i = 0; i < n; i++) {
		if (s[i].outcome == LB_OUT_FOREIGN)
			v->foreign_releases++;
		else if (s[i].outcome == LB_OUT_LOST)
			v->lost_leases++;
		if (s[i].client >= 0 && s[i].client < clients)
			counts[s[i].client]++;
	}
	rc = sweep(s, n, end_ns, v);
	if (rc == 0)
		orphans(s, n, end_ns, v);
	if (rc == 0)
		rc = handoffs(s, n, v);
	v->fairness = lb_jain(counts, (size_t)clients);
	if (per_client)
		memcpy(per_client, counts, sizeof(*counts) * (size_t)clients);
	free(counts);
	return rc;
}

static const char *const class_names[LB_CLASS_COUNT] = {
	"safe", "overlap", "foreign-release", "deadlock", "unavailable", "contained",
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

enum lb_class lb_classify(const struct lb_verdict *v, long long lost_updates,
			  uint64_t acquire_errors, uint64_t acquire_timeouts, uint64_t stopped)
{
	if (v->foreign_releases > 0)
		return LB_CLASS_FOREIGN;
	if (v->overlaps > 0 && lost_updates <= 0 && stopped > 0)
		return LB_CLASS_CONTAINED;
	if (v->overlaps > 0 || lost_updates > 0)
		return LB_CLASS_OVERLAP;
	if (v->recovered == LB_REC_NO)
		return LB_CLASS_DEADLOCK;
	if (acquire_errors > 0 || acquire_timeouts > 0)
		return LB_CLASS_UNAVAILABLE;
	return LB_CLASS_SAFE;
}

int lb_class_severity(enum lb_class c)
{
	static const int rank[LB_CLASS_COUNT] = {
		[LB_CLASS_SAFE] = 0, [LB_CLASS_UNAVAILABLE] = 1, [LB_CLASS_DEADLOCK] = 2,
		[LB_CLASS_CONTAINED] = 3, [LB_CLASS_OVERLAP] = 4, [LB_CLASS_FOREIGN] = 5,
	};
	return (unsigned)c < LB_CLASS_COUNT ? rank[c] : 0;
}
