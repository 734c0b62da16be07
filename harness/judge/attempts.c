/*
 * attempts.c - the attempts of a run, and the busy answers given while no
 * quorum of the lock's nodes was up (attempts.h).
 */
#include <stdlib.h>
#include <string.h>

#include "attempts.h"
#include "util.h"

static const char *const result_names[LB_TRY_COUNT] = {
	"acquired", "busy", "error", "refused", "unknown", "indeterminate",
};

const char *lb_try_result_name(enum lb_try_result r)
{
	return (unsigned)r < LB_TRY_COUNT ? result_names[r] : "?";
}

int lb_try_result_parse(const char *name)
{
	for (int i = 0; i < LB_TRY_COUNT; i++)
		if (!strcmp(name, result_names[i]))
			return i;
	return -1;
}

void lb_attempts_write(FILE *f, const struct lb_try *t, size_t n)
{
	fprintf(f, "%s\n", LB_ATTEMPTS_HEADER);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%d,%lld,%lld,%s\n", t[i].client, (long long)t[i].start_ns,
			(long long)t[i].end_ns, lb_try_result_name(t[i].result));
}

struct span {
	int64_t from, to;
};

static int span_cmp(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;
	return (a->from > b->from) - (a->from < b->from);
}

/* Merge @n sorted spans in place; returns how many are left. */
static size_t merge(struct span *sp, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && sp[i].from <= sp[k - 1].to) {
			if (sp[i].to > sp[k - 1].to)
				sp[k - 1].to = sp[i].to;
		} else {
			sp[k++] = sp[i];
		}
	}
	return k;
}

/* The first of the @n merged, sorted spans that ends at or after @at. */
static size_t first_after(const struct span *sp, size_t n, int64_t at)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sp[mid].to < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The spans in which fewer than a quorum of @nodes nodes were up, by the
 * node-kill/node-start and node-pause/node-resume events (in time order). */
static size_t no_quorum(const struct lb_event *ev, size_t ne, int nodes, struct span *out)
{
	bool down[LB_MAX_NODES] = { false };
	int n_down = 0, quorum = nodes / 2 + 1;
	size_t k = 0;
	int64_t since = -1;

	for (size_t i = 0; i < ne; i++) {
		int node = ev[i].node;
		if (node < 0 || node >= nodes || node >= LB_MAX_NODES)
			continue;
		bool goes = ev[i].kind == LB_EV_NODE_KILL || ev[i].kind == LB_EV_NODE_PAUSE;
		bool comes = ev[i].kind == LB_EV_NODE_START || ev[i].kind == LB_EV_NODE_RESUME;
		if ((!goes && !comes) || goes == down[node])
			continue;
		down[node] = goes;
		n_down += goes ? 1 : -1;
		if (nodes - n_down < quorum && since < 0)
			since = ev[i].t_ns;
		else if (nodes - n_down >= quorum && since >= 0) {
			out[k++] = (struct span){ since, ev[i].t_ns };
			since = -1;
		}
	}
	if (since >= 0)
		out[k++] = (struct span){ since, INT64_MAX };
	return k;
}

/* The sections' open spans, grouped by lock (a counting sort) and merged:
 * lock k's are open[at[k] .. end[k]). Returns 0, or LB_ENOMEM. */
static int open_by_key(const struct lb_section *s, size_t ns, int keys, struct span *open,
		       size_t *at, size_t *end)
{
	size_t *fill = calloc((size_t)keys, sizeof(*fill));

	if (!fill)
		return LB_ENOMEM;
	for (size_t i = 0; i < ns; i++)
		at[s[i].key % keys + 1]++;
	for (int k = 0; k < keys; k++)
		at[k + 1] += at[k];
	for (size_t i = 0; i < ns; i++) {
		int k = s[i].key % keys;
		open[at[k] + fill[k]++] = (struct span){ s[i].enter_ns, s[i].release_ns >= 0 ?
							 s[i].release_ns : s[i].exit_ns };
	}
	for (int k = 0; k < keys; k++) {
		qsort(open + at[k], fill[k], sizeof(*open), span_cmp);
		end[k] = at[k] + merge(open + at[k], fill[k]);
	}
	free(fill);
	return 0;
}

int lb_busy_down(const struct lb_try *t, size_t n, const struct lb_section *s, size_t ns,
		 const struct lb_event *ev, size_t ne, int nodes, int keys, struct lb_busy *out)
{
	int nk = keys > 0 ? keys : 1;
	struct span *open = malloc((ns + 1) * sizeof(*open));
	struct span *gone = malloc((ne + 1) * sizeof(*gone));
	size_t *at = calloc(2 * (size_t)nk + 1, sizeof(*at)), *end = at ? at + nk + 1 : NULL;

	memset(out, 0, sizeof(*out));
	if (!open || !gone || !at || open_by_key(s, ns, nk, open, at, end) < 0) {
		free(open);
		free(gone);
		free(at);
		return LB_ENOMEM;
	}
	size_t g = no_quorum(ev, ne, nodes > 0 ? nodes : 1, gone);
	for (size_t i = 0; i < n; i++) {
		if (t[i].result != LB_TRY_BUSY)
			continue;
		out->busy++;
		size_t d = first_after(gone, g, t[i].end_ns);
		if (d == g || gone[d].from > t[i].end_ns)
			continue; /* answered while a quorum was up */
		int k = t[i].client % nk; /* its lock's spans */
		const struct span *mine = open + at[k];
		size_t m = end[k] - at[k];
		size_t o = first_after(mine, m, t[i].start_ns);
		if (o < m && mine[o].from <= t[i].end_ns)
			continue; /* a section of its lock was open: the lock was held */
		out->down++;
	}
	free(open);
	free(gone);
	free(at);
	return 0;
}

size_t lb_attempts_outages(const struct lb_try *t, size_t n, int clients, struct lb_event *out,
			   size_t max)
{
	bool *down = calloc(clients > 0 ? (size_t)clients : 1, sizeof(*down));
	size_t k = 0;

	if (!down)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int c = t[i].client;
		if (c < 0 || c >= clients || t[i].result == LB_TRY_UNKNOWN)
			continue;
		bool err = t[i].result == LB_TRY_ERROR || t[i].result == LB_TRY_INDETERMINATE;
		if (err == down[c])
			continue;
		down[c] = err;
		if (k < max)
			out[k] = (struct lb_event){ .t_ns = t[i].end_ns, .client = c, .node = -1,
						    .kind = err ? LB_EV_SERVER_DOWN : LB_EV_SERVER_BACK };
		k++;
	}
	free(down);
	return k;
}
