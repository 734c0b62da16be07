/*
 * porcupine.c - a run's lock operations as Porcupine's history (porcupine.h:
 * the mapping). Written apart from the oracle: the second checker must not
 * share the first one's reading of a section.
 */
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "porcupine.h"
#include "readers.h"
#include "util.h"

/* Where a section stops holding its lock: its exit (the run's end while
 * open), never before its enter; a section of one instant holds
 * [enter, enter + 1 ns); one whose client died in its acquire holds nothing
 * (its enter is returned). */
static int64_t held_end(const struct lb_section *s, int64_t end_ns)
{
	int64_t e = s->exit_ns < 0 ? end_ns : s->exit_ns;

	if (e > s->enter_ns)
		return e;
	return s->outcome == LB_OUT_KILLED ? s->enter_ns : s->enter_ns + 1;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

size_t lb_porcupine_write(FILE *f, const struct lb_pc_run *r)
{
	size_t ops = 0;
	int keys = r->keys > 0 ? r->keys : 1;

	fprintf(f, "# lockbench's lock operations for Porcupine (porcupine.h: the mapping)\n"
		   "run,%lld\n", (long long)max64(r->end_ns, 0));
	for (size_t i = 0; i < r->n; i++) {
		const struct lb_section *s = &r->s[i];
		int64_t start = s->acquire_start_ns >= 0 && s->acquire_start_ns <= s->enter_ns ?
				s->acquire_start_ns : s->enter_ns;
		int64_t end = held_end(s, r->end_ns);
		if (end == s->enter_ns) { /* died in its acquire: it never held it */
			fprintf(f, "op,%d,%d,acquire,%lld,%lld,unknown\n", s->client, s->key,
				(long long)start, (long long)s->enter_ns);
			ops++;
			continue;
		}
		int64_t ret = s->release_ns >= 0 ? s->release_ns : r->end_ns;
		fprintf(f, "op,%d,%d,acquire,%lld,%lld,ok\n", s->client, s->key, (long long)start,
			(long long)s->enter_ns);
		fprintf(f, "op,%d,%d,release,%lld,%lld,%s\n", s->client, s->key, (long long)end,
			(long long)max64(ret, end), lb_outcome_name(s->outcome));
		ops += 2;
	}
	for (size_t i = 0; r->t && i < r->n_t; i++) {
		const struct lb_try *t = &r->t[i];
		if (t->result != LB_TRY_ERROR && t->result != LB_TRY_UNKNOWN &&
		    t->result != LB_TRY_INDETERMINATE)
			continue;
		int64_t start = max64(t->start_ns, 0);
		fprintf(f, "op,%d,%d,acquire,%lld,%lld,unknown\n", t->client, t->client % keys,
			(long long)start, (long long)max64(t->end_ns, start));
		ops++;
	}
	for (size_t i = 0; i < r->n_ev; i++) {
		const struct lb_event *e = &r->ev[i];
		fprintf(f, "event,%lld,%d,%d,%s,%lld\n", (long long)max64(e->t_ns, 0), e->client,
			e->node, lb_event_name(e->kind), (long long)e->value);
	}
	return ops;
}

struct files {
	struct lb_summary sum;
	struct lb_run_shape shape;
	struct lb_section *s;
	size_t n;
	struct lb_try *t;
	size_t n_t;
	struct lb_event *ev;
	size_t n_ev;
};

static int read_files(const char *dir, struct files *fl)
{
	char path[4200];
	int rc;

	snprintf(path, sizeof(path), "%.4000s/summary.csv", dir);
	if ((rc = lb_summary_read(path, &fl->sum)) < 0 ||
	    (rc = lb_summary_shape(&fl->sum, path, &fl->shape)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%.4000s/history.csv", dir);
	if ((rc = lb_history_read(path, fl->shape.clients, fl->shape.keys, &fl->s, &fl->n)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%.4000s/attempts.csv", dir);
	if ((rc = lb_attempts_read(path, fl->shape.clients, &fl->t, &fl->n_t)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%.4000s/events.csv", dir);
	return lb_events_read(path, fl->shape.clients, &fl->ev, &fl->n_ev);
}

int lb_porcupine_write_dir(const char *dir, bool *unwritten)
{
	struct files *fl = calloc(1, sizeof(*fl));
	struct lb_outfile o;
	int rc;

	*unwritten = false;
	if (!fl)
		return LB_ENOMEM;
	if ((rc = read_files(dir, fl)) == 0 &&
	    (rc = lb_outfile_open(&o, dir, "porcupine-ops.csv", true)) < 0)
		*unwritten = true;
	if (rc == 0) {
		/* the run's end: its length, or its last instant written if later */
		int64_t end = (int64_t)(fl->shape.elapsed_s * 1e9);
		for (size_t i = 0; i < fl->n; i++)
			end = max64(end, max64(fl->s[i].exit_ns, fl->s[i].release_ns));
		for (size_t i = 0; i < fl->n_t; i++)
			end = max64(end, fl->t[i].end_ns);
		struct lb_pc_run r = { .s = fl->s, .n = fl->n, .t = fl->t, .n_t = fl->n_t, .ev = fl->ev,
				       .n_ev = fl->n_ev, .keys = fl->shape.keys, .end_ns = end };
		lb_porcupine_write(o.f, &r);
		rc = lb_outfile_close(&o);
		*unwritten = rc < 0;
	}
	free(fl->s);
	free(fl->t);
	free(fl->ev);
	free(fl);
	return rc;
}
