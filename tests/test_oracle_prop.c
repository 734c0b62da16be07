/*
 * test_oracle_prop.c - the oracle against a brute-force reference, on
 * thousands of random histories.
 *
 * The reference below is deliberately naive: quadratic loops written from
 * the definitions in docs/index.md ("How the oracle counts"), no sweep, no
 * sorting, no cleverness. Every figure of lb_oracle_judge and the class of
 * lb_classify must agree with it on every history. The histories are
 * seeded: a failure prints the seed, then shrinks the history to a minimal
 * one that still disagrees and prints it as history.csv lines.
 * LOCKBENCH_PROP_SEED=N replays one seed; LOCKBENCH_PROP_RUNS=N changes how
 * many (20000 by default).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "oracle.h"
#include "util.h"
#include "wait.h"

#define MAX_SEC 160
#define MAX_CLIENTS 8
#define MS LB_NS_PER_MS

struct hist {
	struct lb_section s[MAX_SEC];
	size_t n;
	struct lb_waiter w[MAX_CLIENTS];
	size_t n_w;
	int clients;
	int64_t end_ns;
	int64_t ttl_ns;
};

/* ---- the reference, from the definitions ---- */

/* Where a section ends: its exit (or the run's end while open), never before
 * its enter. */
static int64_t ref_end(const struct lb_section *s, int64_t run_end)
{
	int64_t e = s->exit_ns >= 0 ? s->exit_ns : run_end;
	return e > s->enter_ns ? e : s->enter_ns;
}

/* The instants a section holds: [enter, end); a section whose end is its
 * enter holds that one instant ([t, t + 1 ns)), unless its client died in
 * its acquire (killed), which never held the lock and holds nothing. */
static int64_t ref_held_end(const struct lb_section *s, int64_t run_end)
{
	int64_t e = ref_end(s, run_end);
	if (e > s->enter_ns)
		return e;
	return s->outcome == LB_OUT_KILLED ? s->enter_ns : s->enter_ns + 1;
}

static bool ref_began_before(const struct lb_section *a, const struct lb_section *b)
{
	if (a->enter_ns != b->enter_ns)
		return a->enter_ns < b->enter_ns;
	if (a->client != b->client)
		return a->client < b->client;
	return a->seq < b->seq;
}

/* Sections of @key holding instant @t. */
static int ref_holding(const struct hist *h, int key, int64_t t)
{
	int k = 0;
	for (size_t j = 0; j < h->n; j++)
		k += h->s[j].key == key && h->s[j].enter_ns <= t && t < ref_held_end(&h->s[j], h->end_ns);
	return k;
}

static int ref_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void ref_judge(const struct hist *h, struct lb_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->sections = h->n;
	uint64_t count[MAX_CLIENTS] = { 0 };
	for (size_t i = 0; i < h->n; i++) {
		const struct lb_section *a = &h->s[i];
		v->completed += a->release_ns >= 0;
		v->foreign_releases += a->outcome == LB_OUT_FOREIGN;
		v->lost_leases += a->outcome == LB_OUT_LOST;
		if (a->client >= 0 && a->client < h->clients)
			count[a->client]++;
		if (ref_held_end(a, h->end_ns) == a->enter_ns)
			continue; /* empty: overlaps nothing */
		for (size_t j = 0; j < h->n; j++) {
			const struct lb_section *b = &h->s[j];
			if (j != i && b->key == a->key && ref_held_end(b, h->end_ns) > b->enter_ns &&
			    ref_began_before(b, a) && a->enter_ns < ref_held_end(b, h->end_ns)) {
				v->overlaps++;
				break;
			}
		}
	}
	/* overlap time and max holders: every elementary interval between two
	 * boundaries, per key */
	for (int key = 0; key < MAX_CLIENTS; key++) {
		int64_t b[2 * MAX_SEC];
		size_t nb = 0;
		for (size_t i = 0; i < h->n; i++)
			if (h->s[i].key == key) {
				b[nb++] = h->s[i].enter_ns;
				b[nb++] = ref_held_end(&h->s[i], h->end_ns);
			}
		qsort(b, nb, sizeof(b[0]), ref_cmp_i64);
		for (size_t i = 0; i + 1 < nb; i++) {
			if (b[i] == b[i + 1])
				continue;
			int k = ref_holding(h, key, b[i]);
			if (k > v->max_holders)
				v->max_holders = k;
			if (k >= 2)
				v->overlap_ms += (double)(b[i + 1] - b[i]) / 1e6;
		}
	}
	/* deaths: from each killed holder's end to the next enter of its key; a
	 * death with no enter after it never came back if a waiter of its key
	 * began an attempt a TTL or more after it, else nobody can tell */
	int no = 0, unknown = 0;
	v->undecided_ns = -1;
	for (size_t i = 0; i < h->n; i++) {
		if (h->s[i].outcome != LB_OUT_KILLED)
			continue;
		v->holder_deaths++;
		int64_t death = ref_end(&h->s[i], h->end_ns), next = -1;
		for (size_t j = 0; j < h->n; j++)
			if (j != i && h->s[j].key == h->s[i].key && h->s[j].enter_ns >= death &&
			    (next < 0 || h->s[j].enter_ns < next))
				next = h->s[j].enter_ns;
		if (next < 0) {
			bool tried = false;
			for (size_t j = 0; j < h->n_w; j++)
				tried |= h->ttl_ns > 0 && h->w[j].key == h->s[i].key &&
					 h->w[j].last_try_ns >= death + h->ttl_ns;
			if (tried)
				no++;
			else if (unknown++ == 0 || death < v->undecided_ns)
				v->undecided_ns = death;
		}
		double gap = (double)((next < 0 ? h->end_ns : next) - death) / 1e6;
		if (gap > v->orphan_ms)
			v->orphan_ms = gap;
	}
	v->recovered = no ? LB_REC_NO : unknown || !v->holder_deaths ? LB_REC_NA : LB_REC_YES;
	/* hand-offs: a release, and the first enter at or after it on its key */
	int64_t gap[MAX_SEC];
	size_t k = 0;
	for (size_t i = 0; i < h->n; i++) {
		const struct lb_section *r = &h->s[i];
		if (r->release_ns < 0)
			continue;
		const struct lb_section *first = NULL;
		for (size_t j = 0; j < h->n; j++) {
			const struct lb_section *c = &h->s[j];
			if (j != i && c->key == r->key && c->enter_ns >= r->release_ns &&
			    (!first || ref_began_before(c, first)))
				first = c;
		}
		if (first && first->acquire_start_ns <= r->release_ns)
			gap[k++] = first->enter_ns - r->release_ns;
	}
	v->handoffs = k;
	if (k) {
		qsort(gap, k, sizeof(gap[0]), ref_cmp_i64);
		size_t r50 = (size_t)ceil(0.5 * (double)k), r99 = (size_t)ceil(0.99 * (double)k);
		v->handoff_p50_us = (double)gap[r50 - 1] / 1000.0;
		v->handoff_p99_us = (double)gap[r99 - 1] / 1000.0;
	}
	double sum = 0, sq = 0;
	for (int c = 0; c < h->clients; c++) {
		sum += (double)count[c];
		sq += (double)count[c] * (double)count[c];
	}
	v->fairness = sq > 0 ? sum * sum / ((double)h->clients * sq) : 1.0;
}

/* The classes of docs/index.md, in its order. */
static enum lb_class ref_class(const struct lb_verdict *v, const struct lb_class_input *in)
{
	if (in->interrupted)
		return LB_CLASS_INTERRUPTED;
	const struct lb_coverage *cv = in->cover; /* silent for half the run, or all before its end */
	if (cv && cv->silent && (cv->silent == cv->clients || cv->fraction < 0.5))
		return LB_CLASS_INCONCLUSIVE;
	if (v->foreign_releases)
		return LB_CLASS_FOREIGN;
	if (v->overlaps && in->lost_max <= 0 && in->stopped)
		return LB_CLASS_CONTAINED;
	if (v->overlaps || in->lost_min > 0)
		return LB_CLASS_OVERLAP;
	if (v->recovered == LB_REC_NO)
		return LB_CLASS_DEADLOCK;
	if (v->holder_deaths && v->recovered == LB_REC_NA)
		return LB_CLASS_INCONCLUSIVE;
	if (in->acquire_errors || in->acquire_timeouts)
		return LB_CLASS_UNAVAILABLE;
	if (!in->attempts || in->unfired || !v->completed)
		return LB_CLASS_INCONCLUSIVE;
	return LB_CLASS_SAFE;
}

/* ---- random histories ---- */

static uint64_t rnd(uint64_t *st, uint64_t n)
{
	return n ? lb_rand_next(st) % n : 0;
}

static void generate(uint64_t seed, struct hist *h, struct lb_class_input *in)
{
	uint64_t st = seed;
	int keys;

	memset(h, 0, sizeof(*h));
	h->clients = 1 + (int)rnd(&st, 6);
	keys = 1 + (int)rnd(&st, (uint64_t)(h->clients < 3 ? h->clients : 3));
	int64_t unit = rnd(&st, 2) ? MS : 1; /* coarse times make ties and touching ends */
	h->end_ns = (int64_t)(60 + rnd(&st, 200)) * unit;
	for (int c = 0; c < h->clients && h->n < MAX_SEC - 30; c++) {
		int64_t t = (int64_t)rnd(&st, 10) * unit;
		int m = (int)rnd(&st, 20);
		for (int q = 0; q < m && h->n < MAX_SEC; q++) {
			struct lb_section *s = &h->s[h->n++];
			bool nested = rnd(&st, 12) == 0; /* a corrupt, overlapping own section */
			int64_t enter = nested && t > 5 * unit ? t - (int64_t)rnd(&st, 5) * unit : t;
			int64_t len = (int64_t)rnd(&st, 4) == 0 ? 0 : (int64_t)rnd(&st, 25) * unit;
			*s = (struct lb_section){
				.client = c, .key = c % keys, .seq = (uint32_t)q,
				.acquire_start_ns = enter - (int64_t)rnd(&st, 15) * unit,
				.enter_ns = enter, .exit_ns = enter + len,
				.release_ns = enter + len + (int64_t)rnd(&st, 3) * unit,
				.fence = rnd(&st, 3) ? -1 : (int64_t)rnd(&st, 50),
			};
			if (s->acquire_start_ns < 0)
				s->acquire_start_ns = 0;
			switch (rnd(&st, 10)) {
			case 0: s->outcome = LB_OUT_FOREIGN; break;
			case 1: s->outcome = LB_OUT_LOST; break;
			case 2: s->outcome = LB_OUT_ERROR; break;
			case 3: /* killed inside: a death, sometimes stamped before the enter */
				s->outcome = LB_OUT_KILLED;
				s->release_ns = -1;
				if (rnd(&st, 3) == 0)
					s->exit_ns = enter - (int64_t)rnd(&st, 3) * unit - 1;
				break;
			case 4: /* still open at the end */
				s->outcome = LB_OUT_CUT;
				s->release_ns = -1;
				if (rnd(&st, 2))
					s->exit_ns = -1;
				break;
			default: s->outcome = LB_OUT_RELEASED; break;
			}
			t = enter + len + (int64_t)rnd(&st, 12) * unit;
		}
	}
	/* waiters: a client's last calls that never entered; some tried long after */
	h->ttl_ns = rnd(&st, 6) ? (int64_t)(1 + rnd(&st, rnd(&st, 2) ? 8 : 40)) * unit : 0;
	for (int c = 0; c < h->clients; c++) {
		if (rnd(&st, 2))
			continue;
		/* mostly still waiting near the end, as a starved client is */
		int64_t start = (int64_t)rnd(&st, (uint64_t)h->end_ns / (uint64_t)unit) * unit;
		int64_t len = h->end_ns - start - (rnd(&st, 3) ? 0 : (int64_t)rnd(&st, 20) * unit);
		if (len < 0)
			len = 0;
		h->w[h->n_w++] = (struct lb_waiter){
			.client = c, .key = c % keys, .calls = 1 + (uint32_t)rnd(&st, 5), .start_ns = start,
			.last_try_ns = rnd(&st, 8) ? start + (len ? (int64_t)rnd(&st, (uint64_t)len + 1) : 0) : -1,
			.end_ns = start + len, .ended = (enum lb_wait_end)rnd(&st, LB_WEND_COUNT),
		};
	}
	in->lost_min = (long long)rnd(&st, 3);
	in->lost_max = in->lost_min + (long long)rnd(&st, 3);
	in->attempts = rnd(&st, 8) ? h->n + rnd(&st, 20) : 0;
	in->acquire_errors = rnd(&st, 4) ? 0 : rnd(&st, 5);
	in->acquire_timeouts = rnd(&st, 5) ? 0 : rnd(&st, 3);
	in->stopped = rnd(&st, 3) ? 0 : rnd(&st, 4);
	in->unfired = rnd(&st, 12) ? NULL : "[fault f]";
	in->interrupted = rnd(&st, 15) ? 0 : rnd(&st, 2) ? SIGINT : SIGTERM;
	/* clients whose adapters fell silent: sometimes none, few or all */
	static struct lb_coverage cover;
	cover = (struct lb_coverage){ .clients = h->clients, .first_ns = -1, .fraction = 1 };
	if (!rnd(&st, 6)) {
		cover.silent = 1 + (int)rnd(&st, (uint64_t)h->clients);
		cover.first_ns = (int64_t)rnd(&st, (uint64_t)h->end_ns);
		cover.fraction = (double)rnd(&st, 101) / 100;
	}
	in->cover = rnd(&st, 4) ? &cover : NULL;
}

/* ---- comparing, shrinking, printing ---- */

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-6 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* The first figure on which the oracle and the reference disagree, or NULL. */
static const char *disagreement(const struct hist *h, const struct lb_class_input *in0,
				char *detail, size_t len)
{
	struct lb_verdict got, want;
	struct lb_class_input in = *in0;

	struct lb_history hh = { .s = h->s, .n = h->n, .w = h->w, .n_w = h->n_w, .clients = h->clients,
				 .end_ns = h->end_ns, .ttl_ns = h->ttl_ns };
	if (lb_oracle_judge_history(&hh, &got, NULL) != 0)
		return "lb_oracle_judge_history failed";
	ref_judge(h, &want);
#define SAME_U(f) if (got.f != want.f) { snprintf(detail, len, "oracle %llu, reference %llu", \
	(unsigned long long)got.f, (unsigned long long)want.f); return #f; }
#define SAME_D(f) if (!near(got.f, want.f)) { snprintf(detail, len, "oracle %.9g, reference %.9g", \
	(double)got.f, (double)want.f); return #f; }
	SAME_U(sections) SAME_U(completed) SAME_U(overlaps) SAME_D(overlap_ms)
	SAME_U(max_holders) SAME_U(foreign_releases) SAME_U(lost_leases) SAME_U(holder_deaths)
	SAME_D(orphan_ms) SAME_U(recovered) SAME_U(undecided_ns) SAME_D(fairness) SAME_U(handoffs)
	SAME_D(handoff_p50_us) SAME_D(handoff_p99_us)
#undef SAME_U
#undef SAME_D
	in.v = &got;
	enum lb_class c = lb_classify(&in, NULL, 0), r = ref_class(&want, &in);
	if (c != r) {
		snprintf(detail, len, "oracle %s, reference %s", lb_class_name(c), lb_class_name(r));
		return "class";
	}
	return NULL;
}

/* Remove sections and waiters while the disagreement stays: a minimal history. */
static void shrink(struct hist *h, const struct lb_class_input *in)
{
	char d[160];
	for (bool progress = true; progress;) {
		progress = false;
		for (size_t i = 0; i < h->n + h->n_w && !progress; i++) {
			static struct hist t;
			t = *h;
			if (i < h->n) {
				memmove(&t.s[i], &t.s[i + 1], (t.n - i - 1) * sizeof(t.s[0]));
				t.n--;
			} else {
				size_t j = i - h->n;
				memmove(&t.w[j], &t.w[j + 1], (t.n_w - j - 1) * sizeof(t.w[0]));
				t.n_w--;
			}
			if (disagreement(&t, in, d, sizeof(d))) {
				*h = t;
				progress = true;
			}
		}
	}
}

static void print_history(const struct hist *h)
{
	fprintf(stderr, "clients %d, end_ns %lld; history.csv:\n%s\n", h->clients,
		(long long)h->end_ns, "client,seq,acquire_start_ns,enter_ns,exit_ns,release_ns,outcome,fence");
	for (size_t i = 0; i < h->n; i++) {
		const struct lb_section *s = &h->s[i];
		fprintf(stderr, "%d,%u,%lld,%lld,%lld,%lld,%s,%lld (key %d)\n", s->client, s->seq,
			(long long)s->acquire_start_ns, (long long)s->enter_ns, (long long)s->exit_ns,
			(long long)s->release_ns, lb_outcome_name(s->outcome), (long long)s->fence, s->key);
	}
	fprintf(stderr, "ttl_ns %lld; waiters.csv:\nclient,calls,start_ns,last_try_ns,end_ns,ended\n",
		(long long)h->ttl_ns);
	for (size_t i = 0; i < h->n_w; i++) {
		const struct lb_waiter *w = &h->w[i];
		fprintf(stderr, "%d,%u,%lld,%lld,%lld,%s (key %d)\n", w->client, w->calls,
			(long long)w->start_ns, (long long)w->last_try_ns, (long long)w->end_ns,
			lb_wait_end_name(w->ended), w->key);
	}
}

Test(oracle_prop, the_oracle_agrees_with_the_brute_force_reference)
{
	fx_deadline(120);
	const char *one = getenv("LOCKBENCH_PROP_SEED"), *runs_env = getenv("LOCKBENCH_PROP_RUNS");
	uint64_t first = one ? strtoull(one, NULL, 10) : 1;
	long runs = one ? 1 : runs_env ? atol(runs_env) : 20000;
	static struct hist h;
	struct lb_class_input in;
	char detail[160];
	uint64_t overlapping = 0, deaths = 0, handoffs = 0, never = 0, undecided = 0;

	for (long r = 0; r < runs; r++) {
		uint64_t seed = first + (uint64_t)r;
		generate(seed, &h, &in);
		const char *what = disagreement(&h, &in, detail, sizeof(detail));
		if (what) {
			shrink(&h, &in);
			what = disagreement(&h, &in, detail, sizeof(detail));
			print_history(&h);
			cr_assert_fail("seed %llu (replay: LOCKBENCH_PROP_SEED=%llu): %s differs: %s; "
				       "a minimal history of %zu sections is printed above",
				       (unsigned long long)seed, (unsigned long long)seed, what, detail, h.n);
		}
		struct lb_verdict v;
		struct lb_history hh = { .s = h.s, .n = h.n, .w = h.w, .n_w = h.n_w, .clients = h.clients,
					 .end_ns = h.end_ns, .ttl_ns = h.ttl_ns };
		lb_oracle_judge_history(&hh, &v, NULL);
		overlapping += v.overlaps > 0;
		deaths += v.holder_deaths > 0;
		never += v.recovered == LB_REC_NO;
		undecided += v.holder_deaths && v.recovered == LB_REC_NA;
		handoffs += v.handoffs > 0;
	}
	/* the generator must reach the interesting cases, or agreeing means little */
	if (!one) {
		cr_assert_gt(overlapping, (uint64_t)runs / 4, "too few histories with overlaps");
		cr_assert_gt(deaths, (uint64_t)runs / 4, "too few histories with deaths");
		cr_assert_gt(handoffs, (uint64_t)runs / 4, "too few histories with hand-offs");
		cr_assert_gt(never, (uint64_t)runs / 100, "too few deaths that never came back");
		cr_assert_gt(undecided, (uint64_t)runs / 100, "too few deaths nobody could judge");
	}
}

/* The reference itself, on a history whose answer is known by hand: without
 * this the two could agree on a shared misreading. */
Test(oracle_prop, the_reference_gets_a_known_history_right)
{
	static struct hist h = { .clients = 3, .end_ns = 100 * MS, .n = 4, .ttl_ns = 20 * MS };
	h.s[0] = (struct lb_section){ 0, 0, 0, 0, 0, 50 * MS, 50 * MS, LB_OUT_RELEASED, -1, 0, 0, 0 };
	h.s[1] = (struct lb_section){ 1, 0, 0, 5 * MS, 20 * MS, 30 * MS, -1, LB_OUT_KILLED, -1, 0, 0, 0 };
	h.s[2] = (struct lb_section){ 2, 0, 0, 10 * MS, 40 * MS, 60 * MS, 60 * MS, LB_OUT_FOREIGN, -1, 0, 0, 0 };
	h.s[3] = (struct lb_section){ 1, 0, 1, 45 * MS, 70 * MS, 80 * MS, 80 * MS, LB_OUT_RELEASED, -1, 0, 0, 0 };
	struct lb_verdict v;
	ref_judge(&h, &v);
	/* [0,50) [20,30) killed, [40,60), [70,80): sections 1 and 2 began inside
	 * section 0; two were inside during 20..30 and 40..50 */
	cr_assert_eq(v.overlaps, 2);
	cr_assert(near(v.overlap_ms, 20.0), "%g", v.overlap_ms);
	cr_assert_eq(v.max_holders, 2);
	cr_assert_eq(v.holder_deaths, 1);
	cr_assert_eq(v.recovered, LB_REC_YES);  /* died at 30, section 2 entered at 40 */
	cr_assert(near(v.orphan_ms, 10.0), "%g", v.orphan_ms);
	/* releases at 50 and 60, both followed by section 3 (entered 70, waiting
	 * since 45): gaps of 20 and 10 ms; nearest rank p50 is the smaller */
	cr_assert_eq(v.handoffs, 2);
	cr_assert(near(v.handoff_p50_us, 10000.0), "%g", v.handoff_p50_us);
	cr_assert(near(v.handoff_p99_us, 20000.0), "%g", v.handoff_p99_us);
	cr_assert_eq(v.completed, 3);
	cr_assert_eq(v.foreign_releases, 1);
}

/* ---- the second checker: Porcupine (strategies/adapters/go/porcupine) on
 * the same histories, as porcupine.h maps them. On one clock the oracle's
 * notion (a section overlaps when it began while another was open) and
 * linearizability against a mutex of who is inside are one: a history is not
 * linearizable exactly when the oracle counts an overlap. ---- */

#include <sys/wait.h>
#include <unistd.h>

#include "porcupine.h"

/* lockbench-porcupine on @ops: its exit status (0 linearizable, 1 not). */
static int porcupine_on(const char *prog, const char *ops)
{
	int status;
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		execl(prog, prog, "-timeout-ms", "20000", ops, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

Test(oracle_prop, porcupine_finds_not_linearizable_exactly_the_overlapping_histories)
{
	fx_deadline(120);
	const char *adapters = getenv("LOCKBENCH_ADAPTERS");
	char prog[4096], ops[] = "/tmp/lbtest-pc-XXXXXX";
	cr_assert(adapters && *adapters, "LOCKBENCH_ADAPTERS is not set (run through make test)");
	snprintf(prog, sizeof(prog), "%s/go/bin/lockbench-porcupine", adapters);
	cr_assert(access(prog, X_OK) == 0, "no %s: bash harness/deps.sh etcd builds it (with Go)", prog);
	int fd = mkstemp(ops);
	cr_assert_geq(fd, 0);
	close(fd);
	static struct hist h;
	struct lb_class_input in;
	long runs = getenv("LOCKBENCH_PC_RUNS") ? atol(getenv("LOCKBENCH_PC_RUNS")) : 300;
	uint64_t illegal = 0;
	for (long r = 0; r < runs; r++) {
		uint64_t seed = 1 + (uint64_t)r;
		generate(seed, &h, &in);
		struct lb_verdict v;
		struct lb_history hh = { .s = h.s, .n = h.n, .w = h.w, .n_w = h.n_w, .clients = h.clients,
					 .end_ns = h.end_ns, .ttl_ns = h.ttl_ns };
		cr_assert_eq(lb_oracle_judge_history(&hh, &v, NULL), 0);
		FILE *f = fopen(ops, "w");
		cr_assert_not_null(f);
		struct lb_pc_run pr = { .s = h.s, .n = h.n, .keys = 1, .end_ns = h.end_ns };
		lb_porcupine_write(f, &pr);
		cr_assert_eq(fclose(f), 0);
		int rc = porcupine_on(prog, ops);
		cr_assert(rc == 0 || rc == 1, "seed %llu: lockbench-porcupine exit %d",
			  (unsigned long long)seed, rc);
		illegal += rc == 1;
		if ((rc == 1) != (v.overlaps > 0)) {
			print_history(&h);
			cr_assert_fail("seed %llu (the history above): the oracle counts %llu overlaps, "
				       "Porcupine says %s", (unsigned long long)seed,
				       (unsigned long long)v.overlaps, rc ? "not linearizable" : "linearizable");
		}
	}
	unlink(ops);
	/* both answers reached, or agreeing means little (the generator makes
	 * mostly overlapping histories) */
	cr_assert_gt(illegal, (uint64_t)runs / 5, "too few overlapping histories (%llu of %ld)",
		     (unsigned long long)illegal, runs);
	cr_assert_gt((uint64_t)runs - illegal, (uint64_t)runs / 20, "too few histories without an "
		     "overlap (%llu of %ld)", (unsigned long long)((uint64_t)runs - illegal), runs);
}

/* ---- foreign releases from the servers' key events (foreign.h), against a
 * reference written from docs/index.md's definitions: for each event, the
 * latest event of its server and key before it, and plain loops over every
 * section; no sorting, no index. ---- */

#include "foreign.h"

#define MAX_KEV 200

struct khist {
	struct hist h;
	struct lb_key_event e[MAX_KEV];
	size_t ne;
	struct lb_foreign_opts o;
};

static bool ref_on_node(const struct lb_section *s, int node)
{
	return s->nodes == 0 || (s->nodes >> node & 1);
}

/* Does (a) come before (b) in (enter, client, seq) order? */
static bool ref_first(const struct lb_section *a, const struct lb_section *b)
{
	return !b || ref_began_before(a, b);
}

static void ref_foreign(const struct khist *k, struct lb_foreign_result *r,
			struct lb_foreign_release *list)
{
	const struct hist *h = &k->h;
	int owner[MAX_KEV];         /* for each set: the section it belongs to, or -1 */
	bool by_time[MAX_KEV];      /* ... matched by time, not by its token */
	bool claimed[MAX_KEV][MAX_SEC];
	bool seen[MAX_KEV][MAX_SEC]; /* a set of its token was read on that server */
	bool one_node = true;
	int64_t first_acquire = INT64_MAX;

	memset(r, 0, sizeof(*r));
	memset(claimed, 0, sizeof(claimed));
	memset(seen, 0, sizeof(seen));
	for (size_t j = 0; j < h->n; j++)
		if (h->s[j].acquire_start_ns < first_acquire)
			first_acquire = h->s[j].acquire_start_ns;
	for (size_t i = 0; i < k->ne; i++) {
		const struct lb_key_event *e = &k->e[i];
		const struct lb_section *best = NULL;
		for (size_t j = 0; e->kind == LB_KEY_SET && j < h->n; j++)
			if (e->value && h->s[j].key == e->key && h->s[j].token == e->value &&
			    ref_first(&h->s[j], best))
				best = &h->s[j];
		if (best)
			seen[e->server][best - h->s] = true;
	}
	for (size_t i = 0; i < k->ne; i++)
		one_node = one_node && k->e[i].node == 0;
	/* several nodes and a section without a token: not judged */
	for (size_t i = 0; i < h->n; i++)
		if (!one_node && !h->s[i].token)
			r->unjudged = true;
	for (size_t i = 0; i < k->ne; i++) {
		const struct lb_key_event *e = &k->e[i];
		owner[i] = -1;
		by_time[i] = false;
		if (e->kind == LB_KEY_SET) {
			r->sets++;
			/* the section whose token is its value (the first to enter) */
			const struct lb_section *best = NULL;
			for (size_t j = 0; j < h->n; j++)
				if (e->value && h->s[j].key == e->key && h->s[j].token == e->value &&
				    ref_first(&h->s[j], best))
					best = &h->s[j];
			if (!best) { /* by time: the first to enter, not given one on this server */
				bool any = !e->value && one_node;
				/* when the watcher last lost this server, before this set */
				int64_t lost = -1;
				for (size_t q = 0; q < i; q++)
					if (k->e[q].kind == LB_KEY_UNWATCH && k->e[q].server == e->server)
						lost = k->e[q].t_ns;
				/* from the enter of the section given this key's previous set
				 * on this server; from the start when none came since a watch
				 * that was the server's first event and began before every
				 * acquire; else from the set's time minus the slop */
				int64_t from = e->t_ns - k->o.slop_ns;
				for (size_t q = i; q-- > 0;) {
					const struct lb_key_event *p = &k->e[q];
					if (p->server != e->server)
						continue;
					if (p->kind == LB_KEY_WATCH || p->kind == LB_KEY_UNWATCH) {
						bool first = true;
						for (size_t z = 0; z < q; z++)
							first &= k->e[z].server != e->server;
						if (p->kind == LB_KEY_WATCH && first && p->t_ns <= first_acquire)
							from = INT64_MIN;
						break;
					}
					if (p->kind == LB_KEY_SET && p->key == e->key && owner[q] >= 0) {
						from = h->s[owner[q]].enter_ns;
						break;
					}
				}
				by_time[i] = true;
				for (size_t j = 0; j < h->n; j++) {
					const struct lb_section *c = &h->s[j];
					/* value unknown: not a section already set on another server */
					bool elsewhere = false;
					for (int sv = 0; any && sv < MAX_KEV; sv++)
						elsewhere |= sv != e->server && claimed[sv][j];
					if (elsewhere)
						continue;
					if (c->key == e->key && (!c->token || any) && ref_on_node(c, e->node) &&
					    c->acquire_start_ns <= e->t_ns &&
					    c->enter_ns >= from && !seen[e->server][j] &&
					    c->enter_ns <= e->t_ns + k->o.ttl_ns && !claimed[e->server][j] &&
					    c->enter_ns >= lost && ref_first(c, best))
						best = c;
				}
			}
			if (best) {
				owner[i] = (int)(best - h->s);
				claimed[e->server][best - h->s] = true;
				r->sets_owned++;
			}
			continue;
		}
		if (e->kind != LB_KEY_DEL)
			continue;
		r->dels++;
		/* what the key held: the latest event of this server and key before it */
		size_t j = i;
		while (j-- > 0)
			if (k->e[j].server == e->server &&
			    (k->e[j].key == e->key || k->e[j].kind == LB_KEY_WATCH ||
			     k->e[j].kind == LB_KEY_UNWATCH))
				break;
		if (j == (size_t)-1 || k->e[j].kind != LB_KEY_SET || owner[j] < 0)
			continue;
		const struct lb_section *b = &h->s[owner[j]];
		/* inside; on one node, by its token, from its set on; and there, past
		 * its exit while its own release, which said lost or foreign, was in
		 * flight (that release deleted nothing of its own) */
		bool by_token = one_node && !by_time[j];
		bool racing = by_token && b->release_ns >= 0 && e->t_ns <= b->release_ns + k->o.slop_ns &&
			      (b->outcome == LB_OUT_LOST || b->outcome == LB_OUT_FOREIGN);
		if ((!by_token && e->t_ns < b->enter_ns) || (e->t_ns >= ref_end(b, h->end_ns) && !racing))
			continue;
		/* whose release was in flight: outcome foreign first, then the latest exit */
		const struct lb_section *by = NULL;
		for (size_t q = 0; q < h->n; q++) {
			const struct lb_section *a = &h->s[q];
			if (a->client == b->client || a->key != e->key || !ref_on_node(a, e->node) ||
			    a->exit_ns < 0 || a->exit_ns > e->t_ns ||
			    (a->release_ns >= 0 && e->t_ns > a->release_ns + k->o.slop_ns))
				continue;
			bool af = a->outcome == LB_OUT_FOREIGN, bf = by && by->outcome == LB_OUT_FOREIGN;
			if (!by || (af && !bf) ||
			    (af == bf && (a->exit_ns > by->exit_ns ||
					  (a->exit_ns == by->exit_ns &&
					   (a->client < by->client ||
					    (a->client == by->client && a->seq < by->seq))))))
				by = a;
		}
		list[r->releases++] = (struct lb_foreign_release){
			.t_ns = e->t_ns, .server = e->server, .node = e->node, .key = e->key,
			.owner = b->client, .owner_seq = b->seq, .by = by ? by->client : -1,
			.by_seq = by ? by->seq : 0 };
		r->unattributed += !by;
	}
}

/* A history (as the oracle's generator makes it) with tokens and nodes, and
 * what 1 to 3 servers did: sets of the sections' tokens, of unknown values,
 * of values not read, dels, expiries and watches, at times near the sections'. */
static void generate_keys(uint64_t seed, struct khist *k)
{
	struct lb_class_input in;
	uint64_t st = seed * 7919 + 1;
	struct hist *h = &k->h;

	generate(seed, h, &in);
	int servers = 1 + (int)rnd(&st, 3);
	bool multi = servers > 1 && rnd(&st, 2);
	for (size_t i = 0; i < h->n; i++) {
		h->s[i].token = rnd(&st, 4) ? 1 + rnd(&st, 40) : 0; /* some shared: a reused token */
		h->s[i].nodes = multi && rnd(&st, 2) ? (uint32_t)rnd(&st, 8) : 0;
	}
	k->o = (struct lb_foreign_opts){ .slop_ns = (int64_t)rnd(&st, 4) * (h->end_ns / 60 + 1),
					 .ttl_ns = (int64_t)rnd(&st, 30) * (h->end_ns / 60 + 1),
					 .end_ns = h->end_ns };
	k->ne = rnd(&st, MAX_KEV);
	int64_t t = 0;
	int keys = 1;
	for (size_t i = 0; i < h->n; i++)
		if (h->s[i].key + 1 > keys)
			keys = h->s[i].key + 1;
	for (size_t i = 0; i < k->ne; i++) {
		struct lb_key_event *e = &k->e[i];
		t += (int64_t)rnd(&st, 3) * (h->end_ns / 80 + 1);
		int server = (int)rnd(&st, (uint64_t)servers);
		*e = (struct lb_key_event){ .t_ns = t, .server = (uint8_t)server,
					    .node = (uint8_t)(multi ? server : 0),
					    .key = (int32_t)rnd(&st, (uint64_t)keys) };
		switch (rnd(&st, 12)) {
		case 0: case 1: case 2: case 3: case 4:
			e->kind = LB_KEY_SET;
			e->value = rnd(&st, 5) == 0 ? 0 : rnd(&st, 4) == 0 ? 1000 + rnd(&st, 9) :
				   h->n ? h->s[rnd(&st, h->n)].token : 0;
			break;
		case 5: case 6: case 7: case 8: e->kind = LB_KEY_DEL; break;
		case 9: e->kind = LB_KEY_EXPIRED; break;
		default:
			e->kind = rnd(&st, 2) ? LB_KEY_WATCH : LB_KEY_UNWATCH;
			e->key = -1;
			break;
		}
	}
}

Test(oracle_prop, foreign_releases_agree_with_the_reference)
{
	fx_deadline(120);
	const char *one = getenv("LOCKBENCH_PROP_SEED"), *runs_env = getenv("LOCKBENCH_PROP_RUNS");
	uint64_t first = one ? strtoull(one, NULL, 10) : 1;
	long runs = one ? 1 : runs_env ? atol(runs_env) : 20000;
	static struct khist k;
	static struct lb_foreign_release want_list[MAX_KEV];
	uint64_t with_foreign = 0, attributed = 0, by_time = 0;

	for (long n = 0; n < runs; n++) {
		uint64_t seed = first + (uint64_t)n;
		struct lb_foreign_result got, want;
		generate_keys(seed, &k);
		cr_assert_eq(lb_foreign_judge(k.h.s, k.h.n, k.e, k.ne, &k.o, &got), 0);
		ref_foreign(&k, &want, want_list);
#define SAME(f) cr_assert_eq(got.f, want.f, "seed %llu (LOCKBENCH_PROP_SEED=%llu): " #f \
	": judge %llu, reference %llu", (unsigned long long)seed, (unsigned long long)seed, \
	(unsigned long long)got.f, (unsigned long long)want.f)
		SAME(releases); SAME(unattributed); SAME(sets); SAME(sets_owned); SAME(dels);
		SAME(unjudged);
#undef SAME
		for (uint64_t i = 0; i < got.releases; i++) {
			const struct lb_foreign_release *a = &got.list[i], *b = &want_list[i];
			cr_assert(a->t_ns == b->t_ns && a->owner == b->owner &&
				  a->owner_seq == b->owner_seq && a->by == b->by && a->by_seq == b->by_seq &&
				  a->server == b->server && a->key == b->key,
				  "seed %llu: foreign release %llu: judge %d/%u by %d/%u at %lld, "
				  "reference %d/%u by %d/%u at %lld", (unsigned long long)seed,
				  (unsigned long long)i, a->owner, a->owner_seq, a->by, a->by_seq,
				  (long long)a->t_ns, b->owner, b->owner_seq, b->by, b->by_seq,
				  (long long)b->t_ns);
		}
		with_foreign += got.releases > 0;
		attributed += got.releases > got.unattributed;
		for (size_t i = 0; i < k.h.n; i++)
			if (!k.h.s[i].token) {
				by_time += got.sets_owned > 0;
				break;
			}
		lb_foreign_result_free(&got);
	}
	if (!one) { /* the generator must reach the interesting cases */
		cr_assert_gt(with_foreign, (uint64_t)runs / 5, "too few histories with foreign releases");
		cr_assert_gt(attributed, (uint64_t)runs / 10, "too few attributed foreign releases");
		cr_assert_gt(by_time, (uint64_t)runs / 10, "too few sets matched by time");
	}
}

/* The reference on a history whose answer is known by hand. */
Test(oracle_prop, the_foreign_reference_gets_a_known_history_right)
{
	static struct khist k = { .h = { .clients = 3, .end_ns = 3000 * MS, .n = 3 }, .ne = 6,
				  .o = { 50 * MS, 1000 * MS, 3000 * MS } };
	k.h.s[0] = (struct lb_section){ 0, 0, 0, 0, 1 * MS, 2600 * MS, 2601 * MS, LB_OUT_RELEASED, -1, 0, 0, 0xa };
	k.h.s[1] = (struct lb_section){ 1, 0, 0, 10 * MS, 1010 * MS, 2650 * MS, 2651 * MS, LB_OUT_RELEASED, -1, 0, 0, 0xb };
	k.h.s[2] = (struct lb_section){ 2, 0, 0, 20 * MS, 2602 * MS, 2700 * MS, 2701 * MS, LB_OUT_RELEASED, -1, 0, 0, 0xc };
	int64_t t[] = { 1, 1001, 1010, 2601, 2602, 2651 };
	int kind[] = { LB_KEY_SET, LB_KEY_EXPIRED, LB_KEY_SET, LB_KEY_DEL, LB_KEY_SET, LB_KEY_DEL };
	uint64_t value[] = { 0xa, 0, 0xb, 0, 0xc, 0 };
	for (int i = 0; i < 6; i++)
		k.e[i] = (struct lb_key_event){ .t_ns = t[i] * MS, .kind = (uint8_t)kind[i], .value = value[i] };
	struct lb_foreign_result r;
	static struct lb_foreign_release list[MAX_KEV];
	ref_foreign(&k, &r, list);
	cr_assert_eq(r.releases, 2);
	cr_assert_eq(list[0].owner, 1);
	cr_assert_eq(list[0].by, 0);
	cr_assert_eq(list[1].owner, 2);
	cr_assert_eq(list[1].by, 1);
	cr_assert_eq(r.sets_owned, 3);
}
