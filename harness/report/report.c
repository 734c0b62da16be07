/*
 * report.c - report.md for a run (summary, charts, and what went wrong in
 * plain words), a matrix or a sweep; `lockbench report DIR` and the end of
 * run/matrix/sweep call it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "import_dir.h"
#include "metrics.h"
#include "outfile.h"
#include "report.h"
#include "shared.h"
#include "signals.h"
#include "verify.h"

/* When a server ended each section's lease while it was inside, and when its
 * holder was told (rf->ended_ns, rf->told_ns). 0 or LB_ENOMEM. */
static int notices_of(struct lb_run_files *rf, const struct lb_foreign_result *fr)
{
	struct lb_verdict v = { .leases_lapsed_known = true };
	size_t n = rf->n ? rf->n : 1;

	rf->ended_ns = malloc(n * sizeof(int64_t));
	rf->told_ns = malloc(n * sizeof(int64_t));
	if (!rf->ended_ns || !rf->told_ns ||
	    lb_notice_verdict(&v, rf->sec, rf->n, fr, rf->ev, rf->n_ev, (int64_t)(rf->elapsed_s * 1e9),
			      true, rf->told_ns) < 0)
		return LB_ENOMEM;
	for (size_t i = 0; i < rf->n; i++) {
		rf->ended_ns[i] = fr->ended_ns[i];
		rf->told_ns[i] = rf->told_ns[i] == INT64_MIN ? -1 : fr->ended_ns[i] + rf->told_ns[i];
	}
	return 0;
}

/* A release the servers saw delete a lock another client was inside
 * (keyevents.csv, judged again: foreign.h) is told and drawn as a foreign
 * release, whatever the release itself could say (a library's cannot). */
static int mark_servers_foreign(const char *dir, struct lb_run_files *rf)
{
	const char *src = lb_summary_get(&rf->sum, "foreign_source");
	char path[PATH_MAX];
	struct lb_key_event *ke;
	struct lb_foreign_result fr;
	size_t nk;
	int rc;

	if (!src || strcmp(src, "server"))
		return 0;
	snprintf(path, sizeof(path), "%.4000s/keyevents.csv", dir);
	if ((rc = lb_key_events_read(path, rf->keys, &ke, &nk)) < 0)
		return rc;
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, rf->ttl_ms * LB_NS_PER_MS,
				     (int64_t)(rf->elapsed_s * 1e9) };
	rc = lb_foreign_judge(rf->sec, rf->n, ke, nk, &o, &fr);
	if (rc == 0 && fr.ended_ns) /* the leases the servers ended, and when each holder heard */
		rc = notices_of(rf, &fr);
	for (uint64_t i = 0; rc == 0 && i < fr.releases; i++)
		for (size_t j = 0; j < rf->n; j++)
			if (rf->sec[j].client == fr.list[i].by && rf->sec[j].seq == fr.list[i].by_seq &&
			    rf->sec[j].release_ns >= 0)
				rf->sec[j].outcome = LB_OUT_FOREIGN;
	lb_foreign_result_free(&fr);
	free(ke);
	return rc;
}

int lb_run_files_load(const char *dir, struct lb_run_files *rf)
{
	char path[PATH_MAX];
	int rc;

	memset(rf, 0, sizeof(*rf));
	snprintf(rf->dir, sizeof(rf->dir), "%s", dir);
	snprintf(path, sizeof(path), "%.4000s/summary.csv", dir);
	struct lb_run_shape shape;
	if ((rc = lb_summary_read(path, &rf->sum)) < 0 ||
	    (rc = lb_summary_shape(&rf->sum, path, &shape)) < 0)
		return rc;
	rf->clients = shape.clients;
	rf->keys = shape.keys;
	rf->ttl_ms = shape.ttl_ms;
	rf->elapsed_s = shape.elapsed_s;
	snprintf(path, sizeof(path), "%.4000s/history.csv", dir);
	if ((rc = lb_history_read(path, rf->clients, rf->keys, &rf->sec, &rf->n)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%.4000s/events.csv", dir);
	if ((rc = lb_events_read(path, rf->clients, &rf->ev, &rf->n_ev)) < 0) {
		lb_run_files_free(rf);
		return rc;
	}
	snprintf(path, sizeof(path), "%.4000s/latency.csv", dir);
	if ((rc = lb_latency_read(path, &rf->lat)) < 0 || (rc = mark_servers_foreign(dir, rf)) < 0) {
		lb_run_files_free(rf);
		return rc;
	}
	if (!lb_summary_get(&rf->sum, "imported_from"))
		return 0;
	/* an imported history: its names and its overlaps, from the file it kept */
	rf->imp = calloc(1, sizeof(*rf->imp));
	rf->uj = calloc(1, sizeof(*rf->uj));
	rc = rf->imp && rf->uj ? lb_import_load_dir(dir, &rf->sum, rf->imp, rf->uj) : LB_ENOMEM;
	if (rc == 0 && rf->imp->lanes != rf->clients) {
		lb_errorf("%s: summary.csv says %d clients, imported.csv gives %d lanes (lockbench check "
			  "%s lists what differs)", dir, rf->clients, rf->imp->lanes, dir);
		rc = LB_EINVAL;
	}
	if (rc < 0)
		lb_run_files_free(rf);
	return rc;
}

void lb_run_files_free(struct lb_run_files *rf)
{
	free(rf->sec);
	free(rf->ev);
	free(rf->ended_ns);
	free(rf->told_ns);
	rf->sec = NULL;
	rf->ev = NULL;
	rf->ended_ns = rf->told_ns = NULL;
	if (rf->uj)
		lb_ujudgement_free(rf->uj);
	if (rf->imp)
		lb_import_free(rf->imp);
	free(rf->uj);
	free(rf->imp);
	rf->uj = NULL;
	rf->imp = NULL;
}

void lb_run_title(const struct lb_run_files *rf, char *buf, size_t len)
{
	const char *st = lb_summary_get(&rf->sum, "strategy"), *sc = lb_summary_get(&rf->sum, "scenario");
	const char *from = lb_summary_get(&rf->sum, "imported_from");

	const char *ver = lb_summary_get(&rf->sum, "library_version");
	if (from)
		snprintf(buf, len, "imported history: %s", from);
	else if (ver && strcmp(ver, "-") && (!st || !strstr(st, ver)))
		snprintf(buf, len, "%s (version %s ran) under %s", st ? st : "?", ver, sc ? sc : "?");
	else
		snprintf(buf, len, "%s under %s", st ? st : "?", sc ? sc : "?");
}

void lb_run_lane_label(const struct lb_run_files *rf, int lane, char *buf, size_t len)
{
	if (rf->imp)
		lb_import_lane_label(rf->imp, lane, buf, len);
	else
		snprintf(buf, len, "client %d", lane);
}

static double sec(int64_t ns)
{
	return (double)ns / 1e9;
}

static int64_t exit_of(const struct lb_run_files *rf, const struct lb_section *s)
{
	return lb_section_exit(s, (int64_t)(rf->elapsed_s * 1e9));
}

/* What happened to client @c (or to the lock nodes) between @from and @to. */
static void causes(FILE *f, const struct lb_run_files *rf, int c, int64_t from, int64_t to)
{
	for (size_t i = 0; i < rf->n_ev; i++) {
		const struct lb_event *e = &rf->ev[i];
		if (e->t_ns < from || e->t_ns > to)
			continue;
		if (e->client == c) {
			switch (e->kind) {
			case LB_EV_PAUSE: {
				/* told at @to: a resume after it has not happened yet */
				const char *still = " and is still frozen";
				fprintf(f, " It was paused (SIGSTOP) at %.3f s", sec(e->t_ns));
				for (size_t j = i + 1; j < rf->n_ev; j++)
					if (rf->ev[j].kind == LB_EV_RESUME && rf->ev[j].client == c) {
						if (rf->ev[j].t_ns <= to) {
							fprintf(f, " and resumed at %.3f s, %.1f s later",
								sec(rf->ev[j].t_ns), sec(rf->ev[j].t_ns - e->t_ns));
							still = "";
						}
						break;
					}
				fprintf(f, "%s.", still);
				break;
			}
			case LB_EV_SLOW:
				fprintf(f, " Its critical section was slowed to %lld ms.", (long long)e->value);
				break;
			case LB_EV_SLEEP:
				fprintf(f, " It stalled at a failpoint for %lld ms from %.3f s.",
					(long long)e->value, sec(e->t_ns));
				break;
			case LB_EV_CLOCK:
				fprintf(f, " Its clock was %+lld ms off.", (long long)e->value);
				break;
			case LB_EV_PRIMARY_SEEN:
				fprintf(f, " From %.3f s it took its locks from %s, which the "
					"%s named as the primary.", sec(e->t_ns),
					lb_topo_part_phrase((int)e->value), e->value >= LB_CLUSTER_PART0 && e->value < LB_PART_PORT0 ?
					"cluster" : "Sentinels");
				break;
			default:
				break;
			}
		} else if (e->client < 0 && e->node < 0) {
			if (e->kind == LB_EV_NET_SPLIT)
				fprintf(f, " The network was partitioned at %.3f s.", sec(e->t_ns));
			else if (e->kind == LB_EV_NET_MEND)
				fprintf(f, " The partition healed at %.3f s.", sec(e->t_ns));
		} else if (e->node >= 0) {
			switch (e->kind) {
			case LB_EV_NODE_KILL:
				fprintf(f, " Node %d was killed at %.3f s.", e->node, sec(e->t_ns));
				break;
			case LB_EV_NODE_START:
				fprintf(f, " Node %d came back empty at %.3f s.", e->node, sec(e->t_ns));
				break;
			case LB_EV_NODE_CLOCK:
				fprintf(f, " Node %d's clock jumped %+lld ms at %.3f s.", e->node,
					(long long)e->value, sec(e->t_ns));
				break;
			case LB_EV_PROMOTE:
				fprintf(f, " The replica, which never received the lock, was promoted at %.3f s.",
					sec(e->t_ns));
				break;
			case LB_EV_REPL_CUT:
				fprintf(f, " Replication to the replica had been cut at %.3f s.", sec(e->t_ns));
				break;
			case LB_EV_SWITCH_MASTER:
				fprintf(f, " %s a new primary (%s) at %.3f s.",
					e->value >= LB_CLUSTER_PART0 && e->value < LB_PART_PORT0 ? "The cluster promoted" :
					"The Sentinels announced", lb_topo_part_phrase((int)e->value),
					sec(e->t_ns));
				break;
			case LB_EV_DEMOTE:
				fprintf(f, " The Sentinels demoted %s to a replica at %.3f s: what it "
					"accepted meanwhile was dropped.", lb_topo_part_phrase((int)e->value),
					sec(e->t_ns));
				break;
			default:
				break;
			}
		}
	}
}

/* The section of another client holding @key at @t (latest enter), or NULL. */
static const struct lb_section *holder_at(const struct lb_run_files *rf, int key, int not_client,
					  int64_t t)
{
	const struct lb_section *best = NULL;
	for (size_t i = 0; i < rf->n && rf->sec[i].enter_ns <= t; i++) {
		const struct lb_section *s = &rf->sec[i];
		if (s->key == key && s->client != not_client && exit_of(rf, s) >= t)
			best = s;
	}
	return best;
}

static void release_words(FILE *f, const struct lb_run_files *rf, const struct lb_section *a)
{
	const struct lb_section *h;

	switch (a->outcome) {
	case LB_OUT_FOREIGN:
		h = holder_at(rf, a->key, a->client, a->release_ns);
		fprintf(f, " Its release at %.3f s deleted ", sec(a->release_ns));
		if (h) {
			/* did the deletion let anyone in while h was still inside? */
			const struct lb_section *in = NULL;
			int64_t hexit = exit_of(rf, h);
			for (size_t i = 0; i < rf->n && rf->sec[i].enter_ns < hexit && !in; i++)
				if (rf->sec[i].key == a->key && rf->sec[i].client != h->client &&
				    rf->sec[i].enter_ns >= a->release_ns)
					in = &rf->sec[i];
			fprintf(f, "client %d's lock (taken at %.3f s)", h->client, sec(h->enter_ns));
			if (in)
				fprintf(f, ", which let client %d in beside it at %.3f s.", in->client,
					sec(in->enter_ns));
			else
				fprintf(f, "; nobody else came in before client %d left at %.3f s.",
					h->client, sec(hexit));
		} else
			fprintf(f, "another client's lock.");
		break;
	case LB_OUT_LOST:
		fprintf(f, " Its release at %.3f s found the lock no longer its own and left it.",
			sec(a->release_ns));
		break;
	case LB_OUT_ERROR:
		fprintf(f, " Its release failed (its connection died with the server).");
		break;
	case LB_OUT_INDETERMINATE:
		fprintf(f, " Its release at %.3f s was sent and no reply came: whether it deleted "
			"the lock nobody can tell (if not, the lock stayed until its TTL).",
			sec(a->release_ns));
		break;
	case LB_OUT_KILLED:
		fprintf(f, " It was killed at %.3f s.", sec(exit_of(rf, a)));
		break;
	default:
		break;
	}
}

/* A chain of overlaps, each beginning inside the previous one's window. */
struct chain {
	int count;
	uint64_t foreign;
	int64_t from;   /* when it goes on: the first overlap it adds */
	int64_t until;
};

struct story;
static FILE *story_begin(struct story *st, int64_t t);
static void story_end(struct story *st, FILE *m);


/* The incidents of a run, each told in its own bullet, kept until all are
 * found so that they are printed in time order (they are found strategy by
 * strategy of detection: overlaps, late foreign releases, deaths). */
struct story_item {
	int64_t t;      /* when it happened: the order of the story */
	size_t seq;     /* the order found, for ties */
	char *text;
	size_t len;
};

struct story {
	struct story_item *v;
	size_t n, cap;
	FILE *direct;   /* when memory ran out: written at once, unsorted */
	bool stepwise;  /* the step-through: each step tells only what has happened by
			   its time, and every decisive moment is a step of its own */
};

/* A stream for the next bullet, told at @t; story_end files it. */
static FILE *story_begin(struct story *st, int64_t t)
{
	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 16;
		struct story_item *v = realloc(st->v, cap * sizeof(*v));
		if (!v)
			return st->direct;
		st->v = v;
		st->cap = cap;
	}
	struct story_item *it = &st->v[st->n];
	*it = (struct story_item){ .t = t, .seq = st->n };
	FILE *m = open_memstream(&it->text, &it->len);
	return m ? m : st->direct;
}

static void story_end(struct story *st, FILE *m)
{
	if (m == st->direct)
		return;
	if (fclose(m) == 0 && st->v[st->n].text)
		st->n++;
	else
		free(st->v[st->n].text);
}

static int story_cmp(const void *pa, const void *pb)
{
	const struct story_item *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void end_chain(struct story *st, struct chain *c)
{
	if (c->count > 0 && st->stepwise) {
		/* told once it is over: the first of them was a step of its own */
		if (c->count > 1) {
			FILE *f = story_begin(st, c->until);
			fprintf(f, "- **%.3f s: it went on until now:** %d more time%s a client came in "
				   "while another was still inside%s.\n", sec(c->until), c->count - 1,
				c->count == 2 ? "" : "s", c->foreign ? ", each release deleting the lock "
				"of the client that had just come in (a cascade of foreign releases)" : "");
			story_end(st, f);
		}
	} else if (c->count > 0) {
		FILE *f = story_begin(st, c->from);
		fprintf(f, "- **It went on:** %d more time%s until %.3f s a client came in while another "
			   "was still inside%s.\n", c->count, c->count == 1 ? "" : "s", sec(c->until),
			c->foreign ? ", each release deleting the lock of the client that had just come "
				     "in (a cascade of foreign releases)" : "");
		story_end(st, f);
	}
	c->count = 0;
	c->foreign = 0;
}

/* When @a's lease ran out, if the lock knew (or its TTL says), else -1. */
static int64_t lease_end(const struct lb_run_files *rf, const struct lb_section *a)
{
	if (lb_lease_known(a))
		return a->lease_end_ns;
	if (a->lease_end_ns != LB_LEASE_NEVER && rf->ttl_ms > 0 && a->nodes == 0)
		return a->enter_ns + rf->ttl_ms * LB_NS_PER_MS;
	return -1;
}

/* What @a's release did, as a step of its own at the release: a foreign
 * release, or a release that found the lock someone else's and left it. */
static void step_release(struct story *st, const struct lb_run_files *rf, const struct lb_section *a)
{
	if (a->release_ns < 0 || (a->outcome != LB_OUT_FOREIGN && a->outcome != LB_OUT_LOST))
		return;
	const struct lb_section *h = holder_at(rf, a->key, a->client, a->release_ns);
	FILE *f = story_begin(st, a->release_ns);
	if (a->outcome == LB_OUT_FOREIGN && h)
		fprintf(f, "- **%.3f s: client %d's release deletes client %d's lock.** Client %d "
			   "acquired it at %.3f s and is still inside; the lock is free for anyone "
			   "now.\n", sec(a->release_ns), a->client, h->client, h->client,
			sec(h->enter_ns));
	else if (a->outcome == LB_OUT_FOREIGN)
		fprintf(f, "- **%.3f s: client %d's release deletes another client's lock.**\n",
			sec(a->release_ns), a->client);
	else if (h)
		fprintf(f, "- **%.3f s: client %d's release finds the lock no longer its own and "
			   "leaves it.** Client %d, inside since %.3f s, keeps it.\n",
			sec(a->release_ns), a->client, h->client, sec(h->enter_ns));
	else
		fprintf(f, "- **%.3f s: client %d's release finds the lock no longer its own and "
			   "leaves it.**\n", sec(a->release_ns), a->client);
	story_end(st, f);
}

/* The step-through's overlap: client @b comes in while @a is inside, told at
 * @b's enter with only what has happened by then; @a's lease running out
 * and, for the first of an incident (@whole), @a's release are steps of
 * their own. */
static void step_overlap(struct story *st, const struct lb_run_files *rf,
			 const struct lb_section *a, const struct lb_section *b, bool whole)
{
	int64_t lend = lease_end(rf, a);
	if (whole && lend >= a->enter_ns && lend <= b->enter_ns) {
		FILE *l = story_begin(st, lend);
		fprintf(l, "- **%.3f s: client %d's lease runs out while it is still inside.**",
			sec(lend), a->client);
		if (!lb_lease_known(a))
			fprintf(l, " It acquired the lock at %.3f s with a %.1f s TTL.",
				sec(a->enter_ns), (double)rf->ttl_ms / 1000);
		fprintf(l, " From now on the lock is free for another client; client %d does not "
			   "know.", a->client);
		causes(l, rf, a->client, a->enter_ns, lend);
		fprintf(l, "\n");
		story_end(st, l);
	}
	/* a replica promoted since a's acquire: b's lock is granted there */
	bool promoted = false;
	for (size_t i = 0; i < rf->n_ev; i++)
		promoted |= (rf->ev[i].kind == LB_EV_PROMOTE || rf->ev[i].kind == LB_EV_SWITCH_MASTER) &&
			    rf->ev[i].t_ns >= a->enter_ns && rf->ev[i].t_ns <= b->enter_ns;
	FILE *o = story_begin(st, b->enter_ns);
	fprintf(o, "- **%.3f s: client %d and client %d inside at once.** Client %d acquires the "
		   "lock%s while client %d, inside since %.3f s, still believes it holds it",
		sec(b->enter_ns), a->client, b->client, b->client,
		promoted ? " on the promoted replica" : "", a->client, sec(a->enter_ns));
	if (lend >= a->enter_ns && lend <= b->enter_ns)
		fprintf(o, " (its lease ran out at %.3f s)", sec(lend));
	fprintf(o, ".");
	const struct lb_section *del = NULL; /* the release that let it in */
	for (size_t i = 0; i < rf->n; i++)
		if (rf->sec[i].key == a->key && rf->sec[i].outcome == LB_OUT_FOREIGN &&
		    rf->sec[i].client != a->client && rf->sec[i].release_ns >= a->enter_ns &&
		    rf->sec[i].release_ns <= b->enter_ns)
			del = &rf->sec[i];
	if (del)
		fprintf(o, " Client %d's release at %.3f s had deleted client %d's lock.",
			del->client, sec(del->release_ns), a->client);
	causes(o, rf, a->client, a->enter_ns, b->enter_ns);
	fprintf(o, "\n");
	story_end(st, o);
	if (whole)
		step_release(st, rf, a);
}

/* Overlaps: the first section of another client that began while one was
 * inside, told with why; a section that began inside an incident already
 * told continues it (a chain). How many incidents. */
static int tell_overlaps(struct story *st, const struct lb_run_files *rf)
{
	struct chain chain = { 0 };
	int64_t window_end = -1;
	int found = 0;

	for (size_t i = 0; i < rf->n; i++) {
		const struct lb_section *a = &rf->sec[i];
		int64_t aexit = exit_of(rf, a);
		size_t first = 0, others = 0;

		/* sections of other clients that began while a was inside */
		for (size_t j = i + 1; j < rf->n && rf->sec[j].enter_ns < aexit; j++)
			if (rf->sec[j].key == a->key && rf->sec[j].client != a->client &&
			    rf->sec[j].enter_ns > a->enter_ns && !others++)
				first = j;
		if (!others)
			continue;
		if (a->enter_ns <= window_end) {
			if (!chain.count++) { /* told at the moment it goes on */
				chain.from = rf->sec[first].enter_ns;
				if (st->stepwise)
					step_overlap(st, rf, a, &rf->sec[first], false);
			}
			chain.foreign += a->outcome == LB_OUT_FOREIGN;
			chain.until = aexit > chain.until ? aexit : chain.until;
			window_end = aexit > window_end ? aexit : window_end;
			continue;
		}
		end_chain(st, &chain);
		window_end = aexit;
		found++;
		const struct lb_section *b = &rf->sec[first];
		if (st->stepwise) {
			step_overlap(st, rf, a, b, true);
			continue;
		}
		FILE *o = story_begin(st, b->enter_ns);
		fprintf(o, "- **%.3f s: client %d and client %d inside at once.** Client %d acquired the "
			   "lock at %.3f s", sec(b->enter_ns), a->client, b->client, a->client,
			sec(a->enter_ns));
		if (rf->ttl_ms > 0 && aexit > a->enter_ns + rf->ttl_ms * LB_NS_PER_MS)
			fprintf(o, " with a %.1f s lease, which expired at %.3f s while it was still inside",
				(double)rf->ttl_ms / 1000, sec(a->enter_ns + rf->ttl_ms * LB_NS_PER_MS));
		fprintf(o, ".");
		causes(o, rf, a->client, a->enter_ns, aexit);
		fprintf(o, " Client %d acquired at %.3f s", b->client, sec(b->enter_ns));
		if (others > 1)
			fprintf(o, ", and %zu more sections of other clients began", others - 1);
		fprintf(o, " before client %d left at %.3f s.", a->client, sec(aexit));
		release_words(o, rf, a);
		fprintf(o, "\n");
		story_end(st, o);
	}
	end_chain(st, &chain);
	return found;
}

/* Foreign releases made after the releaser had left (check-then-delete). */
static int tell_foreign(struct story *st, const struct lb_run_files *rf)
{
	int found = 0;

	for (size_t i = 0; i < rf->n; i++) {
		const struct lb_section *a = &rf->sec[i];
		if (a->outcome != LB_OUT_FOREIGN)
			continue;
		const struct lb_section *h = holder_at(rf, a->key, a->client, a->release_ns);
		if (h && h->enter_ns < a->exit_ns)
			continue; /* told as an overlap */
		found++;
		FILE *o = story_begin(st, a->release_ns);
		fprintf(o, "- **%.3f s: client %d deleted another client's lock.** It left its section "
			   "at %.3f s and released at %.3f s.", sec(a->release_ns), a->client,
			sec(a->exit_ns), sec(a->release_ns));
		causes(o, rf, a->client, a->exit_ns, a->release_ns);
		if (h)
			fprintf(o, " By then client %d held the lock (since %.3f s); the release deleted it.",
				h->client, sec(h->enter_ns));
		fprintf(o, "\n");
		story_end(st, o);
	}
	return found;
}

/* An overlap that began after a server ended the holder's lease and before
 * the holder was told (or with the holder never told before it left): the
 * notice's, the library's or its adapter's, with the lag. */
static int tell_notices(struct story *st, const struct lb_run_files *rf)
{
	int found = 0;
	size_t notices = 0;

	/* a lock that never told a holder anything (a recipe with no notice, a
	 * library that stays silent) has no notice to blame: its overlaps are told
	 * as they are (notices_missed counts them) */
	for (size_t i = 0; i < rf->n_ev; i++)
		notices += rf->ev[i].kind == LB_EV_LOST_NOTICE;
	for (size_t i = 0; notices && rf->ended_ns && i < rf->n; i++) {
		const struct lb_section *a = &rf->sec[i];
		int64_t ended = rf->ended_ns[i], told = rf->told_ns[i], aexit = exit_of(rf, a);
		int64_t until = told >= 0 ? told : aexit;
		const struct lb_section *b = NULL;
		if (ended < 0)
			continue;
		/* one that entered on a's lock while a was inside: its grant came after
		 * the server ended a's lease, though the watcher may stamp that end
		 * up to its delivery slop after the grant (an expiry Redis fires when
		 * that very SET touches the key) */
		for (size_t j = 0; j < rf->n && !b; j++)
			if (rf->sec[j].key == a->key && rf->sec[j].client != a->client &&
			    rf->sec[j].enter_ns >= ended - LB_KEYWATCH_SLOP_NS &&
			    rf->sec[j].enter_ns >= a->enter_ns && rf->sec[j].enter_ns < until)
				b = &rf->sec[j];
		if (!b)
			continue;
		found++;
		/* told when it happens, and what came of it when it came (the
		 * step-through tells no later moment than its own) */
		FILE *o = story_begin(st, b->enter_ns);
		if (b->enter_ns >= ended)
			fprintf(o, "- **%.3f s: client %d entered %.1f ms after a server ended client %d's "
				   "lease (at %.3f s), while client %d, not told yet, was still inside: "
				   "this overlap is the notice's.**\n", sec(b->enter_ns), b->client,
				(double)(b->enter_ns - ended) / 1e6, a->client, sec(ended), a->client);
		else /* its grant came after the end, which reached the watcher later */
			fprintf(o, "- **%.3f s: client %d entered as a server ended client %d's lease "
				   "(the watcher heard of it %.1f ms later), while client %d, not told "
				   "yet, was still inside: this overlap is the notice's.**\n",
				sec(b->enter_ns), b->client, a->client,
				(double)(ended - b->enter_ns) / 1e6, a->client);
		story_end(st, o);
		o = story_begin(st, until);
		if (told >= 0)
			fprintf(o, "- **%.3f s: client %d's lock told it the lease was lost**, %.1f ms "
				   "after the server's end (the notice's lag: the library's or its "
				   "adapter's).\n", sec(told), a->client, (double)(told - ended) / 1e6);
		else
			fprintf(o, "- **%.3f s: client %d left, never told by its lock that its lease was "
				   "lost**, %.1f ms after the server's end.\n", sec(aexit), a->client,
				(double)(aexit - ended) / 1e6);
		story_end(st, o);
	}
	return found;
}

/* The step-through's death: told after the kill or crash that caused it (at
 * that event, when it is stamped just after the death), then what came of it
 * when it came: the next acquire, or the run's end with nobody back. */
static void step_death(struct story *st, const struct lb_run_files *rf, const struct lb_section *a,
		       int64_t death, int64_t next, int who, const char *rec)
{
	int64_t t = death;
	for (size_t i = 0; i < rf->n_ev; i++) {
		const struct lb_event *e = &rf->ev[i];
		if (e->client == a->client && (e->kind == LB_EV_KILL || e->kind == LB_EV_CRASH) &&
		    e->t_ns >= death && e->t_ns - death < 5 * LB_NS_PER_MS)
			t = e->t_ns;
	}
	FILE *o = story_begin(st, t);
	fprintf(o, "- **%.3f s: client %d died holding the lock.** It never releases it: the lock "
		   "comes back only if its key expires or someone else removes it.\n", sec(death),
		a->client);
	story_end(st, o);
	int64_t end = (int64_t)(rf->elapsed_s * 1e9);
	o = story_begin(st, next >= 0 ? next : end);
	if (next >= 0)
		fprintf(o, "- **%.3f s: client %d acquires the lock again**, %.2f s after client %d "
			   "died holding it.\n", sec(next), who, sec(next - death), a->client);
	else
		fprintf(o, "- **%.3f s: the run ends, and nobody acquired the lock after client %d "
			   "died holding it**, %.1f s before: %s.\n", sec(end), a->client,
			sec(end - death), rec && !strcmp(rec, "no") ? "the lock was orphaned "
			"(deadlock)" : "whether it came back is unknown, as nobody tried it once its "
			"lease could have run out");
	story_end(st, o);
}

/* Clients that died holding the lock, unless another came in at once; a
 * death nobody came back from is an incident. */
static int tell_deaths(struct story *st, const struct lb_run_files *rf)
{
	const char *rec = lb_summary_get(&rf->sum, "recovered");
	int found = 0;

	for (size_t i = 0; i < rf->n; i++) {
		const struct lb_section *a = &rf->sec[i];
		if (a->outcome != LB_OUT_KILLED)
			continue;
		int64_t death = exit_of(rf, a), next = -1;
		int who = -1;
		for (size_t j = 0; j < rf->n; j++)
			if (j != i && rf->sec[j].key == a->key && rf->sec[j].enter_ns >= death &&
			    (next < 0 || rf->sec[j].enter_ns < next))
				next = rf->sec[j].enter_ns, who = rf->sec[j].client;
		if (next >= 0 && (double)(next - death) < 0.25e9)
			continue; /* came back at once: nothing to tell */
		found += next < 0;
		if (st->stepwise) {
			step_death(st, rf, a, death, next, who, rec);
			continue;
		}
		FILE *o = story_begin(st, death);
		fprintf(o, "- **%.3f s: client %d died holding the lock.**", sec(death), a->client);
		if (next < 0)
			fprintf(o, " Nobody acquired it again before the run ended %.1f s later: %s.\n",
				rf->elapsed_s - sec(death), rec && !strcmp(rec, "no") ? "the lock was "
				"orphaned (deadlock)" : "whether it came back is unknown, as nobody tried "
				"it once its lease could have run out");
		else
			fprintf(o, " Client %d acquired it again at %.3f s, %.2f s later.\n", who,
				sec(next), sec(next - death));
		story_end(st, o);
	}
	return found;
}

/* What the resource says: lost updates, refused and aborted writes. */
static void tell_resource(FILE *f, const struct lb_run_files *rf)
{
	double lost = lb_summary_num(&rf->sum, "lost_updates", 0);
	double stale = lb_summary_num(&rf->sum, "stale_writes_rejected", 0);
	double aborted = lb_summary_num(&rf->sum, "writes_aborted", 0);

	if (lost > 0) {
		double ov_ms = lb_summary_num(&rf->sum, "overlap_ms", 0);
		fprintf(f, "\nThe protected counter lost **%.0f update%s**: every overlap where both "
			   "clients read before either wrote costs one.", lost, lost == 1 ? "" : "s");
		/* why a long red stretch can cost few updates */
		if (ov_ms >= 100 && lost * 50 < ov_ms)
			fprintf(f, " Few, for %.0f ms with two or more inside: a stale write costs "
				   "only what it overwrites before the next write lands, and a client "
				   "that read before the stale write and writes after it puts the "
				   "count back, less one.", ov_ms);
		fprintf(f, "\n");
	}
	if (stale > 0)
		fprintf(f, "\nThe fenced resource **refused %.0f stale read%s or write%s**: each carried a "
			   "fence below the highest the resource had accepted.\n", stale,
			stale == 1 ? "" : "s", stale == 1 ? "" : "s");
	if (aborted > 0)
		fprintf(f, "\n**%.0f section%s aborted** before writing: the lock told them their lease "
			   "was gone.\n", aborted, aborted == 1 ? "" : "s");
}

/* The incidents in time order, the first @max of them: to @each, or as a
 * list into @f with what the resource says. How many incidents. */
static int tell(FILE *f, const struct lb_run_files *rf, int max,
		void (*each)(void *arg, int64_t t_ns, const char *text), void *arg)
{
	struct story st = { .direct = f, .stepwise = each != NULL };
	int written = 0, skipped = 0;
	int found = tell_overlaps(&st, rf);

	found += tell_foreign(&st, rf);
	found += tell_notices(&st, rf);
	found += tell_deaths(&st, rf);
	if (st.n)
		qsort(st.v, st.n, sizeof(*st.v), story_cmp);
	for (size_t i = 0; i < st.n; i++) {
		if (written < max) {
			if (each)
				each(arg, st.v[i].t, st.v[i].text);
			else
				fwrite(st.v[i].text, 1, st.v[i].len, f);
			written++;
		} else {
			skipped++;
		}
		free(st.v[i].text);
	}
	free(st.v);
	if (each) /* the caller wants the incidents only */
		return found;
	if (skipped)
		fprintf(f, "- ... and %d more incident%s (see the timeline and history.csv).\n", skipped,
			skipped == 1 ? "" : "s");
	tell_resource(f, rf);
	return found;
}

int lb_report_violations(FILE *f, const struct lb_run_files *rf, int max)
{
	return tell(f, rf, max, NULL, NULL);
}

int lb_report_story(const struct lb_run_files *rf, int max,
		    void (*each)(void *arg, int64_t t_ns, const char *text), void *arg)
{
	FILE *sink = fopen("/dev/null", "w"); /* where a story item goes when memory runs out */
	if (!sink)
		return LB_ESYS;
	int found = tell(sink, rf, max, each, arg);
	fclose(sink);
	return found;
}

/* One overlap of an imported history, told (Markdown with @lang's names). */
static void pair_text(FILE *m, const struct lb_run_files *rf, enum lb_lang lang,
		      const struct lb_upair *p)
{
	const struct lb_import *imp = rf->imp;
	const struct lb_isec *a = &imp->s[p->a], *b = &imp->s[p->b];
	int64_t dur = p->to_ns - p->from_ns;
	char d[48], u[48], mg[48], utc[48];

	lb_import_ms(dur < 0 ? -dur : dur, d, sizeof(d));
	lb_import_ms(p->unc_ns, u, sizeof(u));
	lb_import_ms(p->margin_ns, mg, sizeof(mg));
	lb_import_utc(p->from_ns, utc, sizeof(utc));
	lb_esc_fprintf(m, lang, "- **%s overlap at %.3f s on lock %s: ", p->certain ? "Certain" :
		       "Possible", sec(p->from_ns - imp->first_ns), imp->keys.name[a->key]);
	lb_esc_fprintf(m, lang, "%s (client %d, line %zu) ", imp->clients.name[a->client], a->lane,
		       a->line);
	if (dur <= 0)
		lb_esc_fprintf(m, lang, "left %s ms before %s (client %d, line %zu) entered**, closer "
			       "than the clocks' uncertainty (%s ms): they may have overlapped", d,
			       imp->clients.name[b->client], b->lane, b->line, u);
	else
		lb_esc_fprintf(m, lang, "and %s (client %d, line %zu) inside at once for %s ms**%s%s%s, "
			       "%s the clocks' uncertainty (%s ms) could undo", imp->clients.name[b->client],
			       b->lane, b->line, d, p->margin_ns != dur ? " (one inside the other's "
			       "section by " : "", p->margin_ns != dur ? mg : "",
			       p->margin_ns != dur ? " ms)" : "", p->certain ? "more than" : "which", u);
	lb_esc_fprintf(m, lang, " (%s).", utc);
}

static void fence_text(FILE *m, const struct lb_run_files *rf, enum lb_lang lang,
		       const struct lb_ufence *x)
{
	const struct lb_import *imp = rf->imp;
	const struct lb_isec *s = &imp->s[x->at], *e = &imp->s[x->after];

	lb_esc_fprintf(m, lang, "- **Fence %s at %.3f s on lock %s: %s (client %d, line %zu) entered "
		       "with fence %lld after %s (client %d, line %zu) had entered with fence %lld**, %s.",
		       s->fence == e->fence ? "repeated" : "backwards", sec(s->enter_ns - imp->first_ns),
		       imp->keys.name[s->key], imp->clients.name[s->client], s->lane, s->line,
		       (long long)s->fence, imp->clients.name[e->client], e->lane, e->line,
		       (long long)e->fence, x->certain ? "certain: the order of the two enters holds "
		       "whatever the clocks' error" : "possible: the enters are closer than the clocks' "
		       "uncertainty");
}

int lb_report_imported_story(const struct lb_run_files *rf, enum lb_lang lang, int max,
			     void (*each)(void *arg, int64_t t_ns, const char *text), void *arg)
{
	const struct lb_ujudgement *j = rf->uj;
	size_t a = 0, b = 0;
	int told = 0;

	if (!rf->imp || !j)
		return 0;
	/* overlaps and fences merged in time order */
	while ((a < j->n_pairs || b < j->n_fences) && told < max) {
		int64_t ta = a < j->n_pairs ? j->pairs[a].from_ns : INT64_MAX;
		int64_t tb = b < j->n_fences ? rf->imp->s[j->fences[b].at].enter_ns : INT64_MAX;
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);
		if (!m)
			return LB_ENOMEM;
		if (ta <= tb)
			pair_text(m, rf, lang, &j->pairs[a++]);
		else
			fence_text(m, rf, lang, &j->fences[b++]);
		fclose(m);
		each(arg, (ta <= tb ? ta : tb) - rf->imp->first_ns, text ? text : "");
		free(text);
		told++;
	}
	return told;
}

static void summary_table(FILE *f, const struct lb_summary *s)
{
	static const char *const rows[][2] = {
		{ "sections", "critical sections" }, { "throughput_per_s", "per second" },
		{ "acquire_p50_us", "acquire p50 (µs)" }, { "acquire_p99_us", "acquire p99 (µs)" },
		{ "acquire_max_us", "acquire max (µs)" }, { "cmds_per_section", "Redis commands per section" },
		{ "lock_cmds_per_held_s", "lock commands per second held" },
		{ "lock_cmds_bound_per_s", "the most a recipe of its shape sends (per second held)" },
		{ "lock_commands_note", "why the commands were not counted" },
		{ "overlaps", "sections that began while another client was inside" }, { "overlap_ms", "time with two or more inside (ms)" },
		{ "max_holders", "most clients inside at once" }, { "lost_updates", "lost updates" },
		{ "foreign_releases", "releases that deleted another's lock" },
		{ "stale_writes_rejected", "stale reads/writes the fenced resource refused" },
		{ "writes_aborted", "sections aborted on a lost lease" },
		{ "lost_leases", "releases that found the lock gone" },
		{ "holder_deaths", "holders that died" }, { "orphan_ms", "longest orphaned (ms)" },
		{ "held_no_holder_ms", "held by the server with no live holder (ms)" },
		{ "recovered", "lock came back" }, { "acquire_errors", "attempts that found a node down" },
		{ "acquire_timeouts", "acquires that gave up" }, { "fairness", "fairness (Jain)" },
		{ "observed", "outcome class" }, { "expected", "expected by the scenario" },
		{ "named_clients", "clients (by name)" },
		{ "overlaps_certain", "overlaps certain, whatever the clocks' error" },
		{ "overlaps_possible", "overlaps possible within the clocks' uncertainty" },
		{ "clock_uncertainty_ms", "each clock's uncertainty unless its row says (ms)" },
		{ "fence_regressions", "fences that went backwards (certain)" },
		{ "fence_regressions_possible", "fences that went backwards (possible)" },
	};
	const char *bounds = lb_summary_get(s, "acquire_lower_bounds"); /* "p99;max" */
	fprintf(f, "| figure | value |\n|---|---|\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *v = lb_summary_get(s, rows[i][0]);
		char tag[16] = "";
		if (!strncmp(rows[i][0], "acquire_", 8) && strchr(rows[i][0] + 8, '_'))
			snprintf(tag, sizeof(tag), "%.*s", (int)(strchr(rows[i][0] + 8, '_') -
				 rows[i][0] - 8), rows[i][0] + 8);
		size_t tl = strlen(tag);
		bool lower = false;
		for (const char *p = bounds; tl && p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL)
			lower |= !strncmp(p, tag, tl) && (p[tl] == ';' || !p[tl]);
		if (v && (strcmp(rows[i][0], "lock_commands_note") || strcmp(v, "-")))
			lb_esc_fprintf(f, LB_LANG_MD, "| %s | %s%s |\n", rows[i][1],
				       lower && strcmp(v, "n/a") ? "≥ " : "", v);
	}
	const char *dropped = lb_summary_get(s, "events_dropped");
	if (dropped && strcmp(dropped, "0"))
		lb_esc_fprintf(f, LB_LANG_MD, "\n**Warning: %s events were not recorded** (the run's "
			       "table was full): events.csv and the timeline miss them.\n", dropped);
	const char *cens = lb_summary_get(s, "acquire_censored");
	if (cens && strcmp(cens, "0"))
		fprintf(f, "| acquires that never entered (in the figures as long as they waited) | %s |\n",
			cens);
	const char *rate = lb_summary_get(s, "lock_cmds_per_held_s");
	const char *bound = lb_summary_get(s, "lock_cmds_bound_per_s");
	if (rate && bound && strcmp(rate, "n/a") && strcmp(bound, "n/a") &&
	    lb_lock_cost_flagged(strtod(rate, NULL), strtod(bound, NULL)))
		fprintf(f, "\n**Warning: the lock's own traffic.** It sent %s commands per second "
			   "held, %.0f times the most a lock recipe of the run's shape sends (%s): a "
			   "spinning retry or extension (docs/running.md, \"The lock's own cost\").\n",
			rate, strtod(rate, NULL) / strtod(bound, NULL), bound);
}

/* The first lines of a run's report.md: what ran, and how to check it. */
static void run_head(FILE *f, const struct lb_run_files *rf, const char *check_cmd)
{
	char title[300];

	lb_run_title(rf, title, sizeof(title));
	lb_esc_fprintf(f, LB_LANG_MD, "# %s\n\n", title);
	lb_esc_fprintf(f, LB_LANG_MD, "%d clients on %d lock%s for %.1f s, TTL %lld ms, hold %s ms, "
		       "wait %s, seed %s. Everything below was measured in this run and is drawn from "
		       "the files beside this report (", rf->clients, rf->keys, rf->keys == 1 ? "" : "s",
		       rf->elapsed_s, (long long)rf->ttl_ms,
		       lb_summary_get(&rf->sum, "hold_ms") ? lb_summary_get(&rf->sum, "hold_ms") : "?",
		       lb_summary_get(&rf->sum, "wait") ? lb_summary_get(&rf->sum, "wait") : "?",
		       lb_summary_get(&rf->sum, "seed") ? lb_summary_get(&rf->sum, "seed") : "?");
	lb_md_code(f, check_cmd);
	fprintf(f, " recomputes the summary from `history.csv`).\n\n");
}

/* The same for an imported history, and which lane is whose. */
static void imported_head(FILE *f, const struct lb_run_files *rf, const char *check_cmd)
{
	const struct lb_import *imp = rf->imp;
	char title[300], first[48], u[48];

	lb_run_title(rf, title, sizeof(title));
	lb_import_utc(imp->first_ns, first, sizeof(first));
	lb_import_ms(imp->default_unc_ns, u, sizeof(u));
	lb_esc_fprintf(f, LB_LANG_MD, "# %s\n\n%zu critical sections of %d client%s on %d lock%s over "
		       "%.3f s from %s, as each client's own clock stamped them; each clock may be off "
		       "by %s ms unless its row says. Everything below is drawn from the file as it was "
		       "given (`imported.csv`) and the files made from it (", title, imp->n, imp->clients.n,
		       imp->clients.n == 1 ? "" : "s", imp->keys.n, imp->keys.n == 1 ? "" : "s",
		       rf->elapsed_s, first, u);
	lb_md_code(f, check_cmd);
	fprintf(f, " derives them again). Such a history holds when each section entered and exited, "
		   "nothing more: acquire latencies, the lease and the protected data are not in it "
		   "(`n/a`).\n\nOne lane (a \"client\" of `history.csv`) per client and lock:\n\n"
		   "| lane | client | lock |\n|---|---|---|\n");
	for (int l = 0; imp->lane_client && l < imp->lanes; l++)
		if (imp->lane_client[l] >= 0)
			lb_esc_fprintf(f, LB_LANG_MD, "| %d | %s | %s |\n", l,
				       imp->clients.name[imp->lane_client[l]],
				       imp->keys.name[l % imp->keys.n]);
	fprintf(f, "\n");
}

static void md_item(void *arg, int64_t t_ns, const char *text)
{
	(void)t_ns;
	fprintf(arg, "%s\n", text);
}


/* "No violation", saying only what was measured: foreign releases are n/a
 * where no server was watched (a consensus lock, the user's servers), and a
 * lock comes back only where a holder died. */
static void no_violation(FILE *f, const struct lb_summary *sum)
{
	const char *foreign = lb_summary_get(sum, "foreign_releases");
	const char *deaths = lb_summary_get(sum, "holder_deaths");
	bool watched = foreign && strcmp(foreign, "n/a");

	fprintf(f, "No violation: no two clients were ever inside at once%s%s.\n",
		watched ? ", no release deleted another client's lock" :
		" (whether a release deleted another client's lock was not measured: foreign "
		"releases n/a)", deaths && atoi(deaths) > 0 ?
		", and every lock whose holder died came back" : "");
}
/* An imported history's overlaps, each clock allowed its uncertainty, then
 * what its stamps alone show. */
static void imported_wrong(FILE *f, const struct lb_run_files *rf)
{
	const struct lb_ujudgement *j = rf->uj;
	int told = lb_report_imported_story(rf, LB_LANG_MD, 50, md_item, f);

	if (told < 0)
		return;
	if ((size_t)told < j->n_pairs + j->n_fences)
		fprintf(f, "- ... and %zu more (`overlaps.csv` and `fences.csv` list every one).\n",
			j->n_pairs + j->n_fences - (size_t)told);
	if (!j->n_pairs)
		fprintf(f, "No overlap: no two clients were inside one lock at once, even with each "
			   "clock off by its uncertainty in the worst direction.\n");
	fprintf(f, "\n%zu overlap%s certain, %zu possible.%s\n\n### As the stamps show it\n\n",
		j->certain, j->certain == 1 ? "" : "s", j->possible, !j->fenced ? "" :
		j->n_fences ? " A fence went backwards against the enters on its lock." :
		" The fences rise with the enters on every lock.");
	if (lb_report_violations(f, rf, 12) == 0)
		fprintf(f, "No two clients' stamps overlap on one lock.\n");
}

static int report_run(const char *dir)
{
	struct lb_run_files rf;
	bool drawn = false;
	char undrawn[400] = "";
	int rc;

	if ((rc = lb_run_files_load(dir, &rf)) < 0)
		return rc;
	struct lb_verify ver; /* drawn from the history: does the summary say the same? */
	if (lb_verify_run(dir, NULL, &ver) == 0 && ver.differences) {
		snprintf(rf.disagrees, sizeof(rf.disagrees), "%s", ver.which);
		lb_errorf("warning: %s/summary.csv disagrees with the run's own files on %s; the "
			  "report draws the history (`lockbench check %s` lists the differences)", dir,
			  ver.which, dir);
	}
	rc = lb_stop_work() ? LB_ECANCELED : lb_charts_run(&rf, &drawn, undrawn, sizeof(undrawn));
	if (rc == LB_ECANCELED || lb_stop_work()) { /* Ctrl-C: what was there stays */
		lb_run_files_free(&rf);
		return LB_ECANCELED;
	}
	struct lb_outfile out;
	if (lb_outfile_open(&out, dir, "report.md", true) < 0) {
		lb_run_files_free(&rf);
		return LB_ESYS;
	}
	FILE *f = out.f;
	/* names and values come from the run's files, which anyone may have
	 * written: Markdown text, never markup */
	char check_cmd[PATH_MAX + 32];
	char *dir_word[] = { (char *)dir };
	lb_sh_cmdline(check_cmd, sizeof(check_cmd), "lockbench check", 1, dir_word);
	if (rf.imp)
		imported_head(f, &rf, check_cmd);
	else
		run_head(f, &rf, check_cmd);
	if (rf.disagrees[0]) {
		lb_esc_fprintf(f, LB_LANG_MD, "**Warning: summary.csv disagrees with this run's own "
			       "files** on %s. The table below is summary.csv's; the charts and the story "
			       "are drawn from history.csv and events.csv. ", rf.disagrees);
		lb_md_code(f, check_cmd);
		fprintf(f, " lists the differences.\n\n");
	}
	summary_table(f, &rf.sum);
	fprintf(f, "\n## What went wrong\n\n");
	if (rf.imp)
		imported_wrong(f, &rf);
	else if (lb_report_violations(f, &rf, 12) == 0)
		no_violation(f, &rf.sum);
	fprintf(f, "\n## Charts\n\n");
	if (drawn && rf.imp)
		fprintf(f, "![timeline](timeline.png)\n\nOne lane per client and lock, a bar per "
			   "critical section (from its enter to its exit, as its client's clock "
			   "stamped them); red where the stamps of two or more clients overlap.\n\n"
			   "![sections per lane](fairness.png)\n");
	else if (drawn)
		fprintf(f, "![timeline](timeline.png)\n\nOne lane per client, a bar per critical "
			   "section (from acquire returning to release being sent); red where two or "
			   "more clients were inside; dashed lines are faults; × marks where a holder's "
			   "lease (enter + TTL) ran out while it was still inside.\n\n"
			   "![acquire latency](latency.png)\n\n![sections per client](fairness.png)\n");
	else
		lb_esc_fprintf(f, LB_LANG_MD, "No chart was drawn: %s. The data and the scripts "
			       "are here: `gnuplot timeline.gp` draws them.\n",
			       undrawn[0] ? undrawn : "gnuplot did not run");
	fprintf(f, "\n[report.html](report.html) steps through this %s in a browser.\n",
		rf.imp ? "history" : "run");
	if (lb_outfile_close(&out) < 0)
		rc = lb_stop_work() ? LB_ECANCELED : LB_ESYS;
	if (rc != LB_ECANCELED && lb_report_html(&rf) < 0)
		rc = lb_stop_work() ? LB_ECANCELED : LB_ESYS;
	lb_run_files_free(&rf);
	return rc;
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* From @dir/@name/report.md: its first paragraph (what it is) and, for a
 * run, the first line under "What went wrong" (the verdict in words) and
 * what stopped the damage (stale writes refused, writes aborted), so that a
 * compare of fenced and token-lua does not read the same for both. */
static void report_gist(FILE *f, const char *dir, const char *name)
{
	char path[PATH_MAX], line[4096];
	bool para = false, wrong = false, told = false;

	snprintf(path, sizeof(path), "%.3800s/%.200s/report.md", dir, name);
	const char *kind;
	int orc;
	FILE *in = lb_open_regular(path, &orc, &kind);
	if (!in)
		return;
	while (fgets(line, sizeof(line), in)) {
		if (!para && line[0] != '#' && line[0] != '\n' && line[0] != '!' && line[0] != '|') {
			fputs(line, f); /* the first paragraph, one line in our reports */
			para = true;
		} else if (!strncmp(line, "## What went wrong", 18)) {
			wrong = true;
		} else if (wrong && !strncmp(line, "## ", 3)) {
			break;
		} else if (wrong && line[0] != '\n' && !told) {
			fprintf(f, "\n%s", line[0] == '-' ? line + 2 : line);
			told = true;
		} else if (told && (strstr(line, "fenced resource **refused") ||
				    strstr(line, " aborted** before writing"))) {
			fprintf(f, "\n%s", line);
		}
	}
	fclose(in);
	if (para || told)
		fprintf(f, "\n");
}

/* One report of an index: its link, its gist and its main charts. */
/* The runs of a compare directory, in the order given: its page stacks them. */
#define MAX_STACKED 64
struct stacked {
	char name[MAX_STACKED][256];
	int n;
};

static void index_entry(FILE *f, const char *dir, const char *name, const char *const *charts,
			int *found, struct stacked *runs)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%.3800s/%.200s/report.md", dir, name);
	if (name[0] == '.' || access(path, R_OK) != 0)
		return;
	(*found)++;
	snprintf(path, sizeof(path), "%.3800s/%.200s/summary.csv", dir, name);
	if (runs && runs->n < MAX_STACKED && access(path, R_OK) == 0)
		snprintf(runs->name[runs->n++], sizeof(runs->name[0]), "%s", name);
	/* a link only to a directory with a plain name (as lockbench names
	 * them, lb_path_word): any other name is shown as text, never markup */
	char word[300];
	lb_path_word(name, word, sizeof(word));
	bool plain = !strcmp(word, name);
	if (plain)
		fprintf(f, "## [%s](%s/report.md)\n\n", name, name);
	else
		lb_esc_fprintf(f, LB_LANG_MD, "## %s\n\n", name);
	report_gist(f, dir, name);
	for (const char *const *c = charts; plain && *c; c++) {
		snprintf(path, sizeof(path), "%.3800s/%.200s/%.40s", dir, name, *c);
		if (access(path, R_OK) == 0)
			fprintf(f, "![%s](%s/%s)\n\n", *c, name, *c);
	}
}

/* A directory of reports (compare, demo): an index with what each one is,
 * what went wrong in it and its main charts. A compare directory keeps its
 * table and the order its strategies were given in (compare.txt). */
/* compare.txt of a compare's @dir, as an indented block into @f, and its
 * first column's order into @rank (1.. for the @n entries it names, @ranked
 * of them): true when there is one. */
static bool compare_table(FILE *f, const char *dir, struct dirent **ents, int n, int *rank,
			  int *ranked)
{
	char path[PATH_MAX], line[1024];

	snprintf(path, sizeof(path), "%.4000s/compare.txt", dir);
	const char *kind;
	int orc;
	FILE *cmp = lb_open_regular(path, &orc, &kind); /* a FIFO is refused, never waited on */
	if (!cmp)
		return false;
	lb_esc_fprintf(f, LB_LANG_MD, "# lockbench compare in %s\n\nThe same load, faults and "
		       "seed for each strategy, each on fresh servers, in the order given "
		       "(`compare.txt`):\n\n", dir);
	while (fgets(line, sizeof(line), cmp)) {
		/* an indented code block: no line of the table can end it */
		fputs("    ", f);
		for (const unsigned char *p = (const unsigned char *)line; *p; p++)
			fputc(*p < 0x20 && *p != '\n' ? ' ' : *p, f);
		char first[256] = "", word[72];
		if (sscanf(line, "%255s", first) != 1 || !strcmp(first, "strategy"))
			continue;
		/* a run's directory is its name as a path word (an exec: path's
		 * slashes and colon replaced, lb_path_word) */
		lb_path_word(first, word, sizeof(word));
		for (int i = 0; rank && i < n; i++)
			if ((!strcmp(ents[i]->d_name, first) || !strcmp(ents[i]->d_name, word)) &&
			    !rank[i])
				rank[i] = ++*ranked;
	}
	fclose(cmp);
	fprintf(f, "\n");
	return true;
}

/* An audit's directory: its card (audit.md, Markdown lockbench wrote, read as
 * any report.md is: the page escapes what it holds) heads the index. */
static bool copy_card(FILE *f, const char *dir)
{
	char path[PATH_MAX], line[4096];
	snprintf(path, sizeof(path), "%.4000s/audit.md", dir);
	const char *kind;
	int orc;
	FILE *card = lb_open_regular(path, &orc, &kind);
	size_t n = 0;

	if (!card)
		return false;
	while (n < 200 && fgets(line, sizeof(line), card)) {
		for (unsigned char *p = (unsigned char *)line; *p; p++)
			if (*p < 0x20 && *p != '\n')
				*p = ' ';
		fputs(line, f);
		n++;
	}
	fclose(card);
	fputc('\n', f);
	return true;
}

static int report_index(const char *dir, struct stacked *runs)
{
	static const char *const charts[] = { "matrix.png", "timeline.png", "sweep-throughput.png",
					      "sweep-p99.png", "sweep-cmds.png",
					      "sweep-violations.png", NULL };
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, name_cmp), found = 0;
	FILE *f;

	if (n < 0) { /* the input is unreadable (exit 4), not a failure of ours */
		lb_errorf("cannot read %s: %s", dir, strerror(errno));
		return LB_EINVAL;
	}
	struct lb_outfile out;
	if (lb_outfile_open(&out, dir, "report.md", true) < 0) {
		for (int i = 0; i < n; i++)
			free(ents[i]);
		free(ents);
		return LB_ESYS;
	}
	f = out.f;
	/* compare.txt: the table, and its first column is the order given */
	int *rank = calloc((size_t)n + 1, sizeof(*rank)), ranked = 0;
	bool compared = compare_table(f, dir, ents, n, rank, &ranked);
	if (!compared && !copy_card(f, dir))
		lb_esc_fprintf(f, LB_LANG_MD, "# lockbench reports in %s\n\n", dir);
	/* the ones compare.txt names first, in its order; then the rest by name */
	for (int r = 1; r <= ranked; r++)
		for (int i = 0; i < n; i++)
			if (rank[i] == r)
				index_entry(f, dir, ents[i]->d_name, charts, &found, runs);
	for (int i = 0; i < n; i++)
		if (!rank || !rank[i])
			index_entry(f, dir, ents[i]->d_name, charts, &found, compared ? runs : NULL);
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	free(rank);
	if (!found) { /* no report.md of nothing: the directory is left as it was */
		lb_outfile_abort(&out);
		lb_errorf("%s holds no summary.csv, matrix.csv, sweep.csv or reports: nothing to report",
			  dir);
		return LB_EINVAL;
	}
	if (lb_outfile_close(&out) < 0)
		return LB_ESYS;
	return 0;
}

/* A chaos directory (chaos.csv): its rates and chart as chaos wrote them,
 * then every run, strategy by strategy, seed by seed, each with its own
 * report drawn now (chaos draws none while it runs). A run's directory is
 * found where chaos puts it, <strategy as a path word>/<seed>, not by the
 * path chaos.csv holds (the directory may have moved). */
static int report_chaos(const char *dir)
{
	char path[PATH_MAX], *line = NULL, f[12][320], word[72];
	size_t cap = 0;
	int runs = 0, bad = 0, failed = 0;
	struct lb_outfile out;

	snprintf(path, sizeof(path), "%.4000s/chaos.csv", dir);
	const char *kind;
	char text[96];
	int orc;
	FILE *in = lb_open_regular(path, &orc, &kind); /* a FIFO is refused, never waited on */
	if (!in) {
		lb_errorf("cannot read %s: %s", path, lb_open_why(kind, text, sizeof(text)));
		return orc;
	}
	if (lb_outfile_open(&out, dir, "report.md", true) < 0) {
		fclose(in);
		return LB_ESYS;
	}
	lb_esc_fprintf(out.f, LB_LANG_MD, "# lockbench chaos in %s\n\n", dir);
	snprintf(path, sizeof(path), "%.4000s/chaos.png", dir);
	if (access(path, R_OK) == 0)
		fprintf(out.f, "![share of runs with each violation](chaos.png)\n\n");
	fprintf(out.f, "The rates and their intervals are in [chaos.md](chaos.md); the figures of "
		       "every run in `chaos.csv`.\n\n## Every run\n\n");
	int at = 1, next = 1, first_bad = 0; /* lines: a record may span several */
	const char *why = "";
	for (bool header = true; (at = next, lb_csv_record_at(&line, &cap, in, &next)) >= 0;
	     header = false) {
		size_t pos = 0;
		int k = 0;
		for (; k < 12 && line[pos]; k++)
			if (lb_csv_field(line, &pos, f[k], sizeof(f[k])) < 0)
				break;
		int64_t seed;
		if (header)
			continue;
		const char *w = k < 3 ? "fewer than 3 fields, or a quote not closed" :
				!lb_parse_i64(f[1], 0, INT64_MAX, &seed) ? "seed: expected a number" : NULL;
		if (w) {
			if (!bad++) {
				first_bad = at;
				why = w;
			}
			continue;
		}
		lb_path_word(f[0], word, sizeof(word));
		snprintf(path, sizeof(path), "%.3800s/%s/%lld/summary.csv", dir, word, (long long)seed);
		bool has_run = access(path, R_OK) == 0;
		lb_esc_fprintf(out.f, LB_LANG_MD, "- %s, seed %lld: %s", f[0], (long long)seed, f[2]);
		if (has_run) {
			snprintf(path, sizeof(path), "%.3800s/%s/%lld", dir, word, (long long)seed);
			if (report_run(path) < 0)
				failed++;
			fprintf(out.f, " ([report](%s/%lld/report.md))", word, (long long)seed);
		}
		fprintf(out.f, "\n");
		runs++;
	}
	fclose(in);
	free(line);
	if (bad)
		lb_errorf("%s/chaos.csv:%d: %s (%d malformed row%s left out)", dir, first_bad, why, bad,
			  bad == 1 ? "" : "s");
	if (lb_outfile_close(&out) < 0)
		return LB_ESYS;
	if (!runs) {
		lb_errorf("%s/chaos.csv holds no run: nothing to report", dir);
		return LB_EINVAL;
	}
	return failed ? LB_EINVAL : 0;
}

static int report_dir(const char *dir)
{
	char path[PATH_MAX];
	int rc;

	snprintf(path, sizeof(path), "%.4000s/summary.csv", dir);
	if (access(path, R_OK) == 0)
		return report_run(dir); /* its report.html steps through the run */
	snprintf(path, sizeof(path), "%.4000s/matrix.csv", dir);
	if (access(path, R_OK) == 0)
		rc = lb_report_matrix(dir);
	else if (snprintf(path, sizeof(path), "%.4000s/chaos.csv", dir), access(path, R_OK) == 0)
		rc = report_chaos(dir);
	else if (snprintf(path, sizeof(path), "%.4000s/sweep.csv", dir), access(path, R_OK) == 0)
		rc = lb_report_sweep(dir);
	else {
		static struct stacked runs;
		runs.n = 0;
		rc = report_index(dir, &runs);
		if (rc == 0 && runs.n > 0) { /* a compare: its runs on one time axis */
			const char *names[MAX_STACKED];
			for (int i = 0; i < runs.n; i++)
				names[i] = runs.name[i];
			return lb_report_html_stacked(dir, names, runs.n);
		}
	}
	/* the same report as a page, linking to the runs' own pages */
	return rc < 0 ? rc : lb_report_html_from_md(dir);
}

int lb_report_dir(const char *dir)
{
	int prev = lb_stop_work_begin(); /* a Ctrl-C from now on stops it (signals.h) */
	int rc = report_dir(dir);

	if (rc < 0 && lb_stop_work())
		rc = LB_ECANCELED;
	lb_stop_work_end(prev);
	return rc;
}
