/*
 * run_agent.c - `lockbench agent`'s run: a share of a run's clients forked
 * on this host against the run's servers (the run's own steps: run.c's fork,
 * run_supervise.c), the scenario's faults on them, and their records
 * streamed back (agent_wire.h). Its input's end stops it at once.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/prctl.h>

#include "agent_wire.h"
#include "run.h"
#include "run_ctx.h"
#include "signals.h"

void lb_scenario_slice(const struct lb_scenario *sc, bool agent, bool any_client, int first,
		       int count, struct lb_scenario *out)
{
	*out = *sc;
	out->n_faults = 0;
	for (int i = 0; i < sc->n_faults; i++) {
		const struct lb_fault *f = &sc->faults[i];
		bool on_client = lb_action_in_client(f->action) || f->action == LB_ACT_KILL ||
				 f->action == LB_ACT_PAUSE;
		bool mine = f->target == LB_TGT_CLIENT ? f->client >= first &&
							 f->client < first + count : any_client;
		if (agent ? on_client && mine : !on_client)
			out->faults[out->n_faults++] = *f;
	}
}

static int say_error(FILE *out, int rc, const char *fmt, const char *what)
{
	char msg[600];
	snprintf(msg, sizeof(msg), fmt, what);
	lb_errorf("agent: %s", msg);
	fprintf(out, "error %s\n", msg);
	fflush(out);
	return rc;
}

static int agent_nodes(struct run_ctx *r, const struct lb_agent_share *s, FILE *out)
{
	char why[256];

	r->n_lock = (size_t)s->n_lock;
	for (int i = 0; i <= s->n_lock; i++) {
		struct lb_node *n = i < s->n_lock ? &r->lock[i] : &r->resource;
		if (lb_node_parse_url(i < s->n_lock ? s->lock[i] : s->resource, n, why,
				      sizeof(why)) < 0)
			return say_error(out, LB_EINVAL, "a server's URL: %s", why);
		if (n->tls)
			return say_error(out, LB_EINVAL, "%s", "rediss:// is not served by an agent yet");
		n->probe = true;
	}
	return 0;
}

/* Its clock against the first lock node; 0, or LB_ENOTHERE when that node
 * did not answer (said as "clock WHEN n/a"). */
static int agent_clock(FILE *out, struct run_ctx *r, const char *when)
{
	int64_t off = 0, rtt = 0;
	char why[300];
	int rc = 0;

	if (lb_clock_offset(&r->lock[0], 7, &off, &rtt, why, sizeof(why)) < 0) {
		fprintf(out, "clock %s n/a\n", when);
		rc = LB_ENOTHERE;
	} else {
		fprintf(out, "clock %s %" PRId64 " %" PRId64 "\n", when, off, rtt);
	}
	lb_node_close(&r->lock[0]);
	fflush(out);
	return rc;
}

/* What its clients recorded, and the events of the run, as lines. */
static void agent_stream(FILE *out, struct run_ctx *r)
{
	static struct lb_event ev[LB_MAX_EVENTS];
	size_t n = lb_shared_events(r->sh, ev, LB_MAX_EVENTS);

	for (int i = r->first; i < r->first + r->count; i++)
		lb_wire_put_client(out, r->sh, i);
	for (size_t k = 0; k < n; k++)
		fprintf(out, "event %d %d %d %" PRId64 " %" PRId64 "\n", ev[k].kind, ev[k].client,
			ev[k].node, ev[k].value, ev[k].t_ns);
	agent_clock(out, r, "after");
	fprintf(out, "end\n");
	fflush(out);
}

/* Until "go": true; false when the input ended or said something else. */
static bool agent_wait_go(struct run_ctx *r, FILE *out)
{
	char line[LB_AGENT_LINE_MAX], why[200];
	int rc = lb_lines_next(r->agent_in, line, sizeof(line), lb_now_ns() + 300 * LB_NS_PER_S,
			       why, sizeof(why));
	if (rc == 1 && !strcmp(line, "go"))
		return true;
	if (rc != 0)
		say_error(out, LB_EPROTO, "expected 'go', got %s", rc == 1 ? "another line" :
			  rc == LB_ETIMEOUT ? "nothing in 300 s" : why);
	return false;
}

static int agent_contend(struct run_ctx *r, FILE *out)
{
	int rc;

	if ((rc = run_map_shared(r)) < 0 || (rc = run_fork_clients(r)) < 0)
		return say_error(out, rc, "%s", "its clients could not be started (above)");
	run_wait_started(r);
	fprintf(out, "ready %d\n", atomic_load(&r->sh->started));
	fflush(out);
	if (!agent_wait_go(r, out))
		return LB_ECANCELED;
	r->inj = (struct lb_injector){ .cfg = r->cfg, .sc = r->cfg->scenario, .sh = r->sh,
				       .lock = r->lock, .n_lock = r->n_lock, .theirs = true,
				       .prefix = r->prefix };
	r->sh->t0_ns = lb_now_ns();
	r->sh->end_ns = r->sh->t0_ns + (int64_t)(r->cfg->duration_s * 1e9);
	fprintf(out, "go %" PRId64 "\n", r->sh->t0_ns);
	fflush(out);
	lb_faults_tick(&r->inj, 0);
	lb_shared_go(r->sh);
	run_supervise(r);
	if (r->agent_gone)
		return LB_ECANCELED;
	agent_stream(out, r);
	return 0;
}

int lb_run_agent(const struct lb_run_cfg *cfg, const struct lb_agent_share *share,
		 struct lb_lines *in, FILE *out)
{
	struct lb_run_result res;
	struct lb_run_cfg local = *cfg;
	static struct lb_scenario slice;
	struct run_ctx r = { .cfg = &local, .res = &res, .first = share->first,
			     .count = share->count, .agent_in = in };
	int rc;

	memset(&res, 0, sizeof(res));
	if (cfg->scenario) {
		lb_scenario_slice(cfg->scenario, true, share->faults, share->first, share->count,
				  &slice);
		local.scenario = &slice;
	}
	snprintf(r.prefix, sizeof(r.prefix), "%s", share->prefix);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	lb_janitor_start();
	lb_mark_run(r.mark, sizeof(r.mark));
	r.started_ticks = lb_proc_ticks_now() + 1;
	if ((rc = agent_nodes(&r, share, out)) < 0)
		return rc;
	/* a lock server that does not answer here: refused before a client
	 * starts (it ran, streaming only failed attempts, and exited 0) */
	if (agent_clock(out, &r, "before") < 0) {
		lb_errorf("agent: the lock server %s does not answer from this host: nothing ran",
			  share->lock[0]);
		fprintf(out, "error the lock server does not answer from this host: nothing ran\n");
		fflush(out);
		rc = LB_ENOTHERE;
	} else {
		rc = agent_contend(&r, out);
	}
	run_cleanup(&r);
	lb_run_result_free(&res);
	return rc;
}
