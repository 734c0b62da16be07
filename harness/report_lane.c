/*
 * report_lane.c - what the lock's server held, over time, for report.html's
 * "Redis holds" lane: the run's keyevents.csv (keywatch.h records it on the
 * servers lockbench started) turned into spans, each the lock key present on
 * one server with one owner and one TTL.
 *
 * The owner of a set is the foreign-release judge's (lb_foreign_owners): the
 * section whose token is the value the set wrote (or, failing that, its
 * time); its client is the owner. A value no section entered with has no
 * owner; a value neither read nor matched is unknown. An expire keeps the
 * owner and gives the TTL read with it; a found (what the server held when
 * its watch began: a promoted replica may hold the old primary's lock)
 * opens a span, or says there is no key. A del or an expired ends the span; a
 * watch or an unwatch (a server restarted, lost, promoted or demoted) makes
 * what the server holds unknown until its next event.
 *
 * One lane per server that held the key as a primary (a failover's old and
 * new primary each get theirs: what each held, side by side, is the lesson).
 * Not for a run on several locks (a lane per lock and server would outnumber
 * the clients') nor on several lock nodes (Redlock: its node lanes say it
 * from the sections).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers.h"
#include "report.h"

#define LANE_MAX_SPANS 50000 /* beyond it the lane is not drawn (the page would not load) */

/* owner of a span: a client, or these */
enum { SPAN_NO_OWNER = -1, SPAN_OWNER_UNKNOWN = -2, SPAN_NOT_KNOWN = -3 };

struct lane {
	bool open;
	double from;
	int owner;
	int32_t ttl;
	int port;
	size_t n;   /* spans written */
	bool any;   /* a key event of this server: it gets a lane */
};

static void span_close(FILE *f, struct lane *l, double to)
{
	if (!l->open)
		return;
	fprintf(f, "%s[%.6f,%.6f,%d,", l->n ? "," : "", l->from, to, l->owner);
	if (l->ttl == LB_KEY_TTL_UNKNOWN || l->owner == SPAN_NOT_KNOWN)
		fprintf(f, "null]");
	else
		fprintf(f, "%d]", (int)l->ttl);
	l->n++;
	l->open = false;
}

static void span_open(struct lane *l, double from, int owner, int32_t ttl)
{
	*l = (struct lane){ true, from, owner, ttl, l->port, l->n, l->any };
}

/* One server's spans, from the events of server @sv. */
static void server_spans(FILE *f, const struct lb_run_files *rf, const struct lb_key_event *e,
			 const int64_t *owner, size_t ne, int sv, double end_s)
{
	struct lane l = { 0 };

	for (size_t i = 0; i < ne; i++) {
		if (e[i].server != sv)
			continue;
		double t = (double)e[i].t_ns / 1e9;
		int who = l.open && l.owner != SPAN_NOT_KNOWN ? l.owner : SPAN_OWNER_UNKNOWN;
		span_close(f, &l, t);
		switch (e[i].kind) {
		case LB_KEY_SET:
			who = owner[i] >= 0 ? rf->sec[owner[i]].client :
			      owner[i] == LB_OWNER_NONE ? SPAN_NO_OWNER : SPAN_OWNER_UNKNOWN;
			span_open(&l, t, who, e[i].ttl_ms);
			break;
		case LB_KEY_EXPIRE: /* the value stays: the owner too */
			span_open(&l, t, who, e[i].ttl_ms);
			break;
		case LB_KEY_FOUND: /* what the server held when its watch began */
			if (e[i].ttl_ms >= -1)
				span_open(&l, t, owner[i] >= 0 ? rf->sec[owner[i]].client :
					  owner[i] == LB_OWNER_NONE ? SPAN_NO_OWNER : SPAN_OWNER_UNKNOWN,
					  e[i].ttl_ms);
			break;
		case LB_KEY_WATCH:
		case LB_KEY_UNWATCH:
			span_open(&l, t, SPAN_NOT_KNOWN, LB_KEY_TTL_UNKNOWN);
			break;
		default: /* del, expired: no key */
			break;
		}
	}
	span_close(f, &l, end_s);
}

int lb_report_redis_lane(FILE *f, const struct lb_run_files *rf, double end_s)
{
	char path[PATH_MAX];
	struct lb_key_event *e = NULL;
	size_t ne = 0;
	const char *nodes = lb_summary_get(&rf->sum, "nodes");
	int rc;

	snprintf(path, sizeof(path), "%.4000s/keyevents.csv", rf->dir);
	if (rf->imp || rf->keys != 1 || (nodes && atoi(nodes) > 1) || access(path, R_OK) != 0) {
		fprintf(f, "null");
		return 0;
	}
	if ((rc = lb_key_events_read(path, rf->keys, &e, &ne)) < 0)
		return rc;
	int64_t *owner = malloc(sizeof(*owner) * (ne ? ne : 1));
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, rf->ttl_ms * LB_NS_PER_MS,
				     (int64_t)(rf->elapsed_s * 1e9) };
	if (!owner || (rc = lb_foreign_owners(rf->sec, rf->n, e, ne, &o, owner)) < 0) {
		free(owner);
		free(e);
		return owner ? rc : LB_ENOMEM;
	}
	bool any[LB_KEYWATCH_MAX_SERVERS] = { false };
	int port[LB_KEYWATCH_MAX_SERVERS] = { 0 };
	int64_t from[LB_KEYWATCH_MAX_SERVERS]; /* its first event as a primary (not an unwatch) */
	for (int sv = 0; sv < LB_KEYWATCH_MAX_SERVERS; sv++)
		from[sv] = -1;
	for (size_t i = 0; i < ne; i++) {
		port[e[i].server] = e[i].port;
		any[e[i].server] = any[e[i].server] || e[i].key >= 0;
		if (from[e[i].server] < 0 && e[i].kind != LB_KEY_UNWATCH)
			from[e[i].server] = e[i].t_ns;
	}
	if (ne > LANE_MAX_SPANS) {
		fprintf(f, "null");
	} else {
		bool first = true;
		fprintf(f, "[");
		for (int sv = 0; sv < LB_KEYWATCH_MAX_SERVERS; sv++) {
			if (!any[sv])
				continue;
			fprintf(f, "%s{\"server\":%d,\"port\":%d,\"from\":%.6f,\"spans\":[",
				first ? "" : ",", sv, port[sv], (double)(from[sv] > 0 ? from[sv] : 0) / 1e9);
			server_spans(f, rf, e, owner, ne, sv, end_s);
			fprintf(f, "]}");
			first = false;
		}
		fprintf(f, "]");
	}
	free(owner);
	free(e);
	return 0;
}
