/*
 * uncertain.c - overlaps and fence order of a history whose clocks may each
 * be off by a bound (uncertain.h has the rules). Each key's sections are
 * taken in enter order; a section is compared only with the ones that enter
 * before its exit plus the largest uncertainty two of them can have, so the
 * work grows with the overlaps, not with the square of the history.
 */
#include "uncertain.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* qsort_r comparators of indexes into the sections. */
static int by_key_enter(const void *pa, const void *pb, void *base)
{
	const struct lb_usec *s = base;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct lb_usec *a = &s[ia], *b = &s[ib];

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->enter_ns != b->enter_ns)
		return a->enter_ns < b->enter_ns ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* By key, then the latest its enter can have been (enter + uncertainty). */
static int by_key_latest(const void *pa, const void *pb, void *base)
{
	const struct lb_usec *s = base;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct lb_usec *a = &s[ia], *b = &s[ib];
	int64_t ta = a->enter_ns + a->unc_ns, tb = b->enter_ns + b->unc_ns;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* By key, then the earliest its enter can have been (enter - uncertainty). */
static int by_key_earliest(const void *pa, const void *pb, void *base)
{
	const struct lb_usec *s = base;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct lb_usec *a = &s[ia], *b = &s[ib];
	int64_t ta = a->enter_ns - a->unc_ns, tb = b->enter_ns - b->unc_ns;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* By key, client, then enter. */
static int by_key_client_enter(const void *pa, const void *pb, void *base)
{
	const struct lb_usec *s = base;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct lb_usec *a = &s[ia], *b = &s[ib];

	if (a->key != b->key || a->client != b->client)
		return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->client < b->client ? -1 : 1);
	return by_key_enter(pa, pb, base);
}

static int pair_cmp(const void *pa, const void *pb)
{
	const struct lb_upair *a = pa, *b = pb;

	if (a->from_ns != b->from_ns)
		return a->from_ns < b->from_ns ? -1 : 1;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

static int add_pair(struct lb_ujudgement *j, size_t *cap, const struct lb_upair *p)
{
	if (j->n_pairs == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct lb_upair *v = realloc(j->pairs, c * sizeof(*v));
		if (!v)
			return LB_ENOMEM;
		j->pairs = v;
		*cap = c;
	}
	j->pairs[j->n_pairs++] = *p;
	return 0;
}

/* The end of the instants a section held: its exit, or for a section whose
 * exit is its enter (a stamp at the clock's resolution: it was inside at
 * that instant) one nanosecond after, so it is judged like any other. */
static int64_t held_to(const struct lb_usec *s)
{
	return s->exit_ns > s->enter_ns ? s->exit_ns : s->enter_ns + 1;
}

/* The pairs of one key: ix[from..to) in enter order, @umax its largest
 * uncertainty. */
static int key_pairs(const struct lb_usec *s, const size_t *ix, size_t from, size_t to,
		     int64_t umax, size_t max_pairs, size_t budget, struct lb_ujudgement *j,
		     size_t *cap)
{
	for (size_t p = from; p < to; p++) {
		const struct lb_usec *a = &s[ix[p]];
		int64_t ax = held_to(a);
		for (size_t q = p + 1; q < to && s[ix[q]].enter_ns < ax + a->unc_ns + umax; q++) {
			const struct lb_usec *b = &s[ix[q]];
			if (++j->work > budget) {
				j->limit = "comparisons";
				return LB_EINVAL;
			}
			if (b->client == a->client)
				continue;
			int64_t u = a->unc_ns + b->unc_ns;
			int64_t m1 = ax - b->enter_ns, m2 = held_to(b) - a->enter_ns;
			int64_t margin = m1 < m2 ? m1 : m2;
			if (margin <= -u)
				continue;
			if (j->n_pairs >= max_pairs) {
				j->limit = "overlapping pairs";
				return LB_EINVAL;
			}
			struct lb_upair pr = {
				.a = ix[p], .b = ix[q], .from_ns = b->enter_ns,
				.to_ns = ax < held_to(b) ? ax : held_to(b),
				.margin_ns = margin, .unc_ns = u, .certain = margin > u,
			};
			if (add_pair(j, cap, &pr) < 0)
				return LB_ENOMEM;
			if (pr.certain)
				j->certain++;
			else
				j->possible++;
		}
	}
	return 0;
}

static int all_pairs(const struct lb_usec *s, size_t n, const size_t *ix, size_t max_pairs,
		     size_t budget, struct lb_ujudgement *j)
{
	size_t cap = 0;

	for (size_t from = 0, to; from < n; from = to) {
		int64_t umax = 0;
		for (to = from; to < n && s[ix[to]].key == s[ix[from]].key; to++)
			if (s[ix[to]].unc_ns > umax)
				umax = s[ix[to]].unc_ns;
		int rc = key_pairs(s, ix, from, to, umax, max_pairs, budget, j, &cap);
		if (rc < 0)
			return rc;
	}
	if (j->n_pairs > 1)
		qsort(j->pairs, j->n_pairs, sizeof(*j->pairs), pair_cmp);
	return 0;
}

/* What each section's fence is found to be: @stamps the highest-fenced
 * earlier section by the stamps, @sure one whose order is certain, or -1. */
struct fence_seen {
	ptrdiff_t stamps, sure;
};

/* By the stamps: the highest fence of the key's sections that entered
 * strictly before (ix in key and enter order). */
static void fences_by_stamps(const struct lb_usec *s, size_t n, const size_t *ix,
			     struct fence_seen *seen)
{
	ptrdiff_t best = -1;

	for (size_t g = 0, end; g < n; g = end) {
		if (g == 0 || s[ix[g]].key != s[ix[g - 1]].key)
			best = -1;
		for (end = g; end < n && s[ix[end]].key == s[ix[g]].key &&
			      s[ix[end]].enter_ns == s[ix[g]].enter_ns; end++) {
			const struct lb_usec *x = &s[ix[end]];
			if (x->fence >= 0 && best >= 0 && s[best].fence >= x->fence)
				seen[ix[end]].stamps = best;
		}
		for (size_t k = g; k < end; k++)
			if (s[ix[k]].fence >= 0 && (best < 0 || s[ix[k]].fence > s[best].fence))
				best = (ptrdiff_t)ix[k];
	}
}

/* Certain by the clocks: sections whose latest possible enter is before
 * this one's earliest (@late by key and enter + unc, @early by key and
 * enter - unc); and by one client's own clock (@own by key, client, enter). */
static void fences_certain(const struct lb_usec *s, size_t n, const size_t *late,
			   const size_t *early, const size_t *own, struct fence_seen *seen)
{
	size_t p = 0;
	ptrdiff_t best = -1;

	for (size_t q = 0; q < n; q++) {
		const struct lb_usec *x = &s[early[q]];
		if (q == 0 || x->key != s[early[q - 1]].key) {
			best = -1;
			while (p < n && s[late[p]].key < x->key)
				p++;
		}
		for (; p < n && s[late[p]].key == x->key &&
		       s[late[p]].enter_ns + s[late[p]].unc_ns < x->enter_ns - x->unc_ns; p++)
			if (s[late[p]].fence >= 0 && (best < 0 || s[late[p]].fence > s[best].fence))
				best = (ptrdiff_t)late[p];
		if (x->fence >= 0 && best >= 0 && s[best].fence >= x->fence)
			seen[early[q]].sure = best;
	}
	best = -1;
	for (size_t g = 0, end; g < n; g = end) {
		const struct lb_usec *first = &s[own[g]];
		if (g == 0 || first->key != s[own[g - 1]].key || first->client != s[own[g - 1]].client)
			best = -1;
		for (end = g; end < n && s[own[end]].key == first->key &&
			      s[own[end]].client == first->client &&
			      s[own[end]].enter_ns == first->enter_ns; end++) {
			const struct lb_usec *x = &s[own[end]];
			if (x->fence >= 0 && best >= 0 && s[best].fence >= x->fence &&
			    seen[own[end]].sure < 0)
				seen[own[end]].sure = best;
		}
		for (size_t k = g; k < end; k++)
			if (s[own[k]].fence >= 0 && (best < 0 || s[own[k]].fence > s[best].fence))
				best = (ptrdiff_t)own[k];
	}
}

/* Fences in time order: by the section's enter, then its index. */
static int fence_cmp(const void *pa, const void *pb, void *base)
{
	const struct lb_usec *s = base;
	const struct lb_ufence *a = pa, *b = pb;

	if (s[a->at].enter_ns != s[b->at].enter_ns)
		return s[a->at].enter_ns < s[b->at].enter_ns ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

static int all_fences(const struct lb_usec *s, size_t n, const size_t *ix, struct lb_ujudgement *j)
{
	size_t *late = malloc(sizeof(*late) * (n ? n : 1));
	size_t *early = malloc(sizeof(*early) * (n ? n : 1));
	size_t *own = malloc(sizeof(*own) * (n ? n : 1));
	struct fence_seen *seen = malloc(sizeof(*seen) * (n ? n : 1));
	int rc = LB_ENOMEM;

	if (!late || !early || !own || !seen)
		goto out;
	for (size_t i = 0; i < n; i++) {
		late[i] = early[i] = own[i] = i;
		seen[i] = (struct fence_seen){ -1, -1 };
		j->fenced |= s[i].fence >= 0;
	}
	qsort_r(late, n, sizeof(*late), by_key_latest, (void *)s);
	qsort_r(early, n, sizeof(*early), by_key_earliest, (void *)s);
	qsort_r(own, n, sizeof(*own), by_key_client_enter, (void *)s);
	fences_by_stamps(s, n, ix, seen);
	fences_certain(s, n, late, early, own, seen);
	for (size_t i = 0; i < n; i++)
		j->n_fences += seen[i].stamps >= 0 || seen[i].sure >= 0;
	j->fences = malloc(sizeof(*j->fences) * (j->n_fences ? j->n_fences : 1));
	if (!j->fences)
		goto out;
	j->n_fences = 0;
	for (size_t i = 0; i < n; i++) {
		bool sure = seen[i].sure >= 0;
		if (!sure && seen[i].stamps < 0)
			continue;
		j->fences[j->n_fences++] = (struct lb_ufence){
			.at = i, .after = (size_t)(sure ? seen[i].sure : seen[i].stamps), .certain = sure };
		if (sure)
			j->fence_certain++;
		else
			j->fence_possible++;
	}
	if (j->n_fences > 1)
		qsort_r(j->fences, j->n_fences, sizeof(*j->fences), fence_cmp, (void *)s);
	rc = 0;
out:
	free(late);
	free(early);
	free(own);
	free(seen);
	return rc;
}

int lb_ujudge(const struct lb_usec *s, size_t n, size_t max_pairs, size_t budget,
	      struct lb_ujudgement *j)
{
	size_t *ix = malloc(sizeof(*ix) * (n ? n : 1));
	int rc;

	memset(j, 0, sizeof(*j));
	if (!ix)
		return LB_ENOMEM;
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof(*ix), by_key_enter, (void *)s);
	rc = all_pairs(s, n, ix, max_pairs, budget, j);
	if (rc == 0)
		rc = all_fences(s, n, ix, j);
	free(ix);
	return rc;
}

void lb_ujudgement_free(struct lb_ujudgement *j)
{
	if (!j)
		return;
	free(j->pairs);
	free(j->fences);
	j->pairs = NULL;
	j->fences = NULL;
}
