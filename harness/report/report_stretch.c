/*
 * report_stretch.c - report.html of a run too large to draw one section at a
 * time (more than LB_HTML_SECTIONS_MAX): each lane's sections summed into
 * stretches of the run (bins: how many sections entered in each, how long the
 * client was inside, and how long two or more sections of its lock were
 * inside at once), and only the sections worth seeing one by one kept as
 * sections: every section intersecting a window around each step (so that the
 * step's moment, zoomed, shows every section there), then those in an
 * overlap, a foreign release, a death or a lost lease, up to a budget.
 *
 * The page's size and drawing time then follow the number of steps and
 * incidents, not the number of sections: a million sections' page is a few
 * hundred KB and draws in a second (docs/running.md, "report.html").
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define BINS_MAX 600          /* stretches of a lane: about one per 2 units of the plot */
#define CELLS_MAX 160000      /* lanes times bins: a run of many clients gets fewer bins */
#define KEEP_MAX 12000        /* sections kept one by one (with their overlaps, about
				 40,000 marks: the page draws them in about a second) */
#define NEAR_MAX 400          /* around one step, at most */
#define NEAR_MIN 8            /* around one step, at least (many steps share the budget) */
#define SPAN_SCAN_MAX 100000  /* sections looked back at for one spanning a window's start */

bool lb_report_stretched(const struct lb_run_files *rf)
{
	return rf->n > LB_HTML_SECTIONS_MAX;
}

struct edge {
	int64_t t;
	int key;
	int d; /* +1 enter, -1 exit */
};

static int edge_cmp(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->d - b->d; /* an exit before an enter at the same instant: back to back */
}

struct span {
	int key;
	int64_t a, b;
};

static int span_cmp(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->a < b->a ? -1 : a->a > b->a;
}

/* The times two or more sections of one lock were inside at once, by lock
 * then time (@*n of them, in *out, to free). */
static int overlap_spans(const struct lb_run_files *rf, const int64_t *ex, struct span **out,
			 size_t *n)
{
	struct edge *e = malloc(sizeof(*e) * 2 * rf->n);
	int *depth = calloc((size_t)(rf->keys > 0 ? rf->keys : 1), sizeof(*depth));
	int64_t *from = calloc((size_t)(rf->keys > 0 ? rf->keys : 1), sizeof(*from));
	size_t k = 0, cap = 64;
	struct span *v = malloc(sizeof(*v) * cap);

	if (!e || !depth || !from || !v) {
		free(e), free(depth), free(from), free(v);
		return LB_ENOMEM;
	}
	for (size_t i = 0; i < rf->n; i++) {
		int key = rf->sec[i].key >= 0 && rf->sec[i].key < rf->keys ? rf->sec[i].key : 0;
		e[2 * i] = (struct edge){ rf->sec[i].enter_ns, key, 1 };
		e[2 * i + 1] = (struct edge){ ex[i], key, -1 };
	}
	qsort(e, 2 * rf->n, sizeof(*e), edge_cmp);
	for (size_t i = 0; i < 2 * rf->n; i++) {
		int *d = &depth[e[i].key];
		*d += e[i].d;
		if (e[i].d > 0 && *d == 2) {
			from[e[i].key] = e[i].t;
		} else if (e[i].d < 0 && *d == 1 && e[i].t > from[e[i].key]) {
			if (k == cap) {
				struct span *nv = realloc(v, sizeof(*v) * (cap *= 2));
				if (!nv) {
					free(e), free(depth), free(from), free(v);
					return LB_ENOMEM;
				}
				v = nv;
			}
			v[k++] = (struct span){ e[i].key, from[e[i].key], e[i].t };
		}
	}
	free(e), free(depth), free(from);
	qsort(v, k, sizeof(*v), span_cmp);
	*out = v;
	*n = k;
	return 0;
}

struct bins {
	int B;
	int64_t w;       /* ns a bin */
	uint32_t *count; /* sections entered, lane * B + bin */
	int64_t *busy;   /* ns inside */
	int64_t *ovl;    /* ns inside while another section of its lock was too */
	int64_t *full;   /* bins wholly inside: a difference array (busy adds w for each) */
};

/* Add [a, b) of lane @c to @v (partial bins at its ends, the whole ones
 * between through the difference array). */
static void add_time(struct bins *bn, int64_t *v, int64_t *full, int c, int64_t a, int64_t b)
{
	if (b <= a)
		return;
	int64_t b0 = a / bn->w, b1 = (b - 1) / bn->w;
	b0 = b0 < 0 ? 0 : b0 >= bn->B ? bn->B - 1 : b0;
	b1 = b1 < 0 ? 0 : b1 >= bn->B ? bn->B - 1 : b1;
	int64_t *row = v + (size_t)c * (size_t)bn->B;
	if (b0 == b1 || !full) {
		if (b0 == b1) {
			row[b0] += b - a;
			return;
		}
		for (int64_t k = b0; k <= b1; k++) { /* (only overlaps: short spans) */
			int64_t lo = k * bn->w > a ? k * bn->w : a, hi = (k + 1) * bn->w < b ? (k + 1) * bn->w : b;
			row[k] += hi > lo ? hi - lo : 0;
		}
		return;
	}
	row[b0] += (b0 + 1) * bn->w - a;
	row[b1] += b - b1 * bn->w;
	if (b1 > b0 + 1) {
		full[(size_t)c * (size_t)(bn->B + 1) + (size_t)b0 + 1]++;
		full[(size_t)c * (size_t)(bn->B + 1) + (size_t)b1]--;
	}
}

/* Each lane's bins; @eventful[i] set for a section in an overlap. */
static int fill_bins(const struct lb_run_files *rf, const int64_t *ex, int64_t end_ns,
		     struct bins *bn, bool *eventful)
{
	size_t cells;
	struct span *sp = NULL;
	size_t nsp = 0;
	int rc;

	bn->B = BINS_MAX;
	if (rf->clients > 0 && (size_t)rf->clients * BINS_MAX > CELLS_MAX)
		bn->B = CELLS_MAX / rf->clients > 0 ? CELLS_MAX / rf->clients : 1;
	bn->w = end_ns / bn->B + 1;
	cells = (size_t)(rf->clients > 0 ? rf->clients : 1) * (size_t)bn->B;
	bn->count = calloc(cells, sizeof(*bn->count));
	bn->busy = calloc(cells, sizeof(*bn->busy));
	bn->ovl = calloc(cells, sizeof(*bn->ovl));
	bn->full = calloc(cells + (size_t)(rf->clients > 0 ? rf->clients : 1), sizeof(*bn->full));
	if (!bn->count || !bn->busy || !bn->ovl || !bn->full)
		return LB_ENOMEM;
	if ((rc = overlap_spans(rf, ex, &sp, &nsp)) < 0)
		return rc;
	for (size_t i = 0; i < rf->n; i++) {
		const struct lb_section *s = &rf->sec[i];
		int c = s->client >= 0 && s->client < rf->clients ? s->client : 0;
		int key = s->key >= 0 && s->key < rf->keys ? s->key : 0;
		int64_t b = s->enter_ns / bn->w;
		bn->count[(size_t)c * (size_t)bn->B + (size_t)(b < 0 ? 0 : b >= bn->B ? bn->B - 1 : b)]++;
		add_time(bn, bn->busy, bn->full, c, s->enter_ns, ex[i]);
		/* the first overlap of its lock ending after it entered, and on */
		size_t lo = 0, hi = nsp;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (sp[mid].key < key || (sp[mid].key == key && sp[mid].b <= s->enter_ns))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k < nsp && sp[k].key == key && sp[k].a < ex[i]; k++) {
			int64_t a = sp[k].a > s->enter_ns ? sp[k].a : s->enter_ns;
			int64_t z = sp[k].b < ex[i] ? sp[k].b : ex[i];
			if (z > a) {
				add_time(bn, bn->ovl, NULL, c, a, z);
				eventful[i] = true;
			}
		}
	}
	free(sp);
	for (int c = 0; c < (rf->clients > 0 ? rf->clients : 1); c++) {
		int64_t run = 0;
		for (int k = 0; k < bn->B; k++) {
			run += bn->full[(size_t)c * (size_t)(bn->B + 1) + (size_t)k];
			bn->busy[(size_t)c * (size_t)bn->B + (size_t)k] += run * bn->w;
		}
	}
	return 0;
}

/* The first section entered at or after @t (sections are in order of entry). */
static size_t first_at(const struct lb_run_files *rf, int64_t t)
{
	size_t lo = 0, hi = rf->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rf->sec[mid].enter_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return a < b ? -1 : a > b;
}

/* Keep every section intersecting a window around each step (@t, @nt of
 * them, sorted): the page's zoom window (twice the gap to the nearest other
 * step, 2 ms at least), narrowed to at most @near sections entering in it.
 * Each window whose every section is kept goes to @full as [a,b] (seconds). */
static void keep_near(FILE *full, const struct lb_run_files *rf, const int64_t *ex,
		      const int64_t *maxex, const int64_t *t, size_t nt, int64_t end_ns,
		      size_t near, bool *keep, size_t *kept)
{
	int nf = 0;
	/* (every step gets its window while the steps share half the budget; a
	 * hostile events.csv of millions stops at twice the budget) */
	for (size_t j = 0; j < nt && *kept < 2 * KEEP_MAX; j++) {
		if (j && t[j] == t[j - 1])
			continue;
		int64_t gap = INT64_MAX;
		if (j && t[j] - t[j - 1] < gap)
			gap = t[j] - t[j - 1];
		if (j + 1 < nt && t[j + 1] - t[j] < gap)
			gap = t[j + 1] - t[j];
		int64_t d = gap > end_ns ? end_ns : 2 * gap;
		d = d < 2000000 ? 2000000 : d;
		size_t lo = first_at(rf, t[j] - d), hi = first_at(rf, t[j] + d + 1);
		int64_t a = t[j] - d, b = t[j] + d;
		if (hi - lo > near) { /* the nearest @near by entry, around the step */
			size_t mid = first_at(rf, t[j]);
			lo = mid > lo + near / 2 ? mid - near / 2 : lo;
			hi = lo + near < hi ? lo + near : hi;
			a = rf->sec[lo].enter_ns;
			b = hi < rf->n ? rf->sec[hi].enter_ns - 1 : b;
		}
		for (size_t i = lo; i < hi; i++)
			*kept += !keep[i], keep[i] = true;
		/* and those entered before it, still inside at its start */
		bool whole = true;
		size_t scanned = 0;
		for (size_t i = lo; i-- > 0 && maxex[i] > a;) {
			if (++scanned > SPAN_SCAN_MAX) {
				whole = false;
				break;
			}
			if (ex[i] > a)
				*kept += !keep[i], keep[i] = true;
		}
		if (whole)
			fprintf(full, "%s[%.6f,%.6f]", nf++ ? "," : "", (double)a / 1e9, (double)b / 1e9);
	}
}

/* Worth seeing one by one: in an overlap (@keep's caller marked it), a
 * release that deleted another's lock, a death, a lease that ran out inside. */
static bool eventful_section(const struct lb_section *s, int64_t exit_ns)
{
	return s->outcome == LB_OUT_FOREIGN || s->outcome == LB_OUT_KILLED ||
	       (lb_lease_known(s) && exit_ns > s->lease_end_ns);
}

static void bins_json(FILE *f, const struct lb_run_files *rf, const struct bins *bn,
		      int64_t end_ns)
{
	fprintf(f, ",\n\"agg\":{\"n\":%zu,\"max\":%d,\"keep\":%d,\"bins\":%d,\"w\":%.9f,\"end\":%.6f,\"lanes\":[",
		rf->n, LB_HTML_SECTIONS_MAX, KEEP_MAX, bn->B, (double)bn->w / 1e9,
		(double)end_ns / 1e9);
	for (int c = 0; c < rf->clients; c++) {
		fprintf(f, "%s[", c ? ",\n" : "");
		bool first = true;
		for (int k = 0; k < bn->B; k++) {
			size_t i = (size_t)c * (size_t)bn->B + (size_t)k;
			if (!bn->count[i] && !bn->busy[i])
				continue;
			/* bin, sections entered, µs inside, µs overlapping */
			fprintf(f, "%s%d,%u,%lld,%lld", first ? "" : ",", k, bn->count[i],
				(long long)((bn->busy[i] + 500) / 1000), (long long)((bn->ovl[i] + 999) / 1000));
			first = false;
		}
		fprintf(f, "]");
	}
	fprintf(f, "]");
}

int lb_report_stretch_json(FILE *f, const struct lb_run_files *rf, const int64_t *steps,
			   size_t nsteps, bool *keep)
{
	int64_t end_ns = (int64_t)(rf->elapsed_s * 1e9);
	int64_t *ex = malloc(sizeof(*ex) * rf->n), *maxex = malloc(sizeof(*maxex) * rf->n);
	int64_t *t = malloc(sizeof(*t) * (nsteps ? nsteps : 1));
	bool *ovl = calloc(rf->n, sizeof(*ovl));
	struct bins bn = { 0 };
	char *fullj = NULL;
	size_t fullj_len = 0, kept = 0;
	FILE *full = NULL;
	int rc = LB_ENOMEM;

	if (!ex || !maxex || !t || !ovl || !(full = open_memstream(&fullj, &fullj_len)))
		goto out;
	for (size_t i = 0; i < rf->n; i++) {
		ex[i] = lb_section_exit(&rf->sec[i], end_ns);
		maxex[i] = i && maxex[i - 1] > ex[i] ? maxex[i - 1] : ex[i];
		if (rf->sec[i].release_ns > end_ns)
			end_ns = rf->sec[i].release_ns;
		if (ex[i] > end_ns)
			end_ns = ex[i];
	}
	if ((rc = fill_bins(rf, ex, end_ns, &bn, ovl)) < 0)
		goto out;
	memcpy(t, steps, sizeof(*t) * nsteps);
	qsort(t, nsteps, sizeof(*t), cmp_i64);
	size_t near = nsteps ? KEEP_MAX / 2 / nsteps : NEAR_MAX;
	near = near > NEAR_MAX ? NEAR_MAX : near < NEAR_MIN ? NEAR_MIN : near;
	keep_near(full, rf, ex, maxex, t, nsteps, end_ns, near, keep, &kept);
	fclose(full);
	full = NULL;
	for (size_t i = 0; i < rf->n && kept < KEEP_MAX; i++)
		if (!keep[i] && (ovl[i] || eventful_section(&rf->sec[i], ex[i])))
			keep[i] = true, kept++;
	bins_json(f, rf, &bn, end_ns);
	fprintf(f, ",\"kept\":%zu,\"full\":[%s]}", kept, fullj ? fullj : "");
	rc = 0;
out:
	if (full)
		fclose(full);
	free(fullj), free(ex), free(maxex), free(t), free(ovl);
	free(bn.count), free(bn.busy), free(bn.ovl), free(bn.full);
	return rc;
}
