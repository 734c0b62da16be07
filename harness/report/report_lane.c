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
	int dat;    /* -1: report.html's JSON; else timeline.gp's data, this lane's number */
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
	if (l->dat >= 0) { /* lane from_s length_s owner ttl_ms (? not read) */
		fprintf(f, "%d %.6f %.6f %d ", l->dat, l->from, to - l->from, l->owner);
		if (l->ttl == LB_KEY_TTL_UNKNOWN || l->owner == SPAN_NOT_KNOWN)
			fprintf(f, "?\n");
		else
			fprintf(f, "%d\n", (int)l->ttl);
		l->n++;
		l->open = false;
		return;
	}
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
	*l = (struct lane){ l->dat, true, from, owner, ttl, l->port, l->n, l->any };
}

/* One server's spans, from the events of server @sv. */
static void server_spans(FILE *f, const struct lb_run_files *rf, const struct lb_key_event *e,
			 const int64_t *owner, size_t ne, int sv, double end_s, int dat)
{
	struct lane l = { .dat = dat };

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

/* The run's key events and, for each, the section whose acquire wrote what
 * it saw (the foreign-release judge's owners): 0, or what reading failed. */
static int owned_key_events(const struct lb_run_files *rf, const char *path,
			    struct lb_key_event **e, size_t *ne, int64_t **owner)
{
	int rc;

	*owner = NULL;
	if ((rc = lb_key_events_read(path, rf->keys, e, ne)) < 0)
		return rc;
	*owner = malloc(sizeof(**owner) * (*ne ? *ne : 1));
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, rf->ttl_ms * LB_NS_PER_MS,
				     (int64_t)(rf->elapsed_s * 1e9) };
	rc = !*owner ? LB_ENOMEM : lb_foreign_owners(rf->sec, rf->n, *e, *ne, &o, *owner);
	if (rc < 0) {
		free(*owner);
		free(*e);
		*owner = NULL;
		*e = NULL;
	}
	return rc < 0 ? rc : 0;
}

/* The lanes of lb_report_redis_lane (@dat false) or lb_report_redis_dat;
 * how many lanes into *@lanes. */
static int redis_lanes(FILE *f, const struct lb_run_files *rf, double end_s, bool dat, int *lanes)
{
	char path[PATH_MAX];
	struct lb_key_event *e = NULL;
	size_t ne = 0;
	const char *nodes = lb_summary_get(&rf->sum, "nodes");
	int rc;

	*lanes = 0;
	snprintf(path, sizeof(path), "%.4000s/keyevents.csv", rf->dir);
	if (rf->imp || rf->keys != 1 || (nodes && atoi(nodes) > 1) || access(path, R_OK) != 0) {
		fputs(dat ? "" : "null", f);
		return 0;
	}
	int64_t *owner;
	if ((rc = owned_key_events(rf, path, &e, &ne, &owner)) < 0)
		return rc;
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
		fputs(dat ? "" : "null", f);
	} else {
		fprintf(f, dat ? "# lane from_s length_s owner ttl_ms (owner: a client; -1 a value "
			"no client entered with, -2 not read, -3 not known; ttl -1 none, ? not read)\n" :
			"[");
		for (int sv = 0; sv < LB_KEYWATCH_MAX_SERVERS; sv++) {
			if (!any[sv])
				continue;
			if (dat) {
				fprintf(f, "# lane %d: port %d\n", *lanes, port[sv]);
				server_spans(f, rf, e, owner, ne, sv, end_s, *lanes);
			} else {
				fprintf(f, "%s{\"server\":%d,\"port\":%d,\"from\":%.6f,\"spans\":[",
					*lanes ? "," : "", sv, port[sv],
					(double)(from[sv] > 0 ? from[sv] : 0) / 1e9);
				server_spans(f, rf, e, owner, ne, sv, end_s, -1);
				fprintf(f, "]}");
			}
			++*lanes;
		}
		if (!dat)
			fprintf(f, "]");
	}
	free(owner);
	free(e);
	return 0;
}

int lb_report_redis_lane(FILE *f, const struct lb_run_files *rf, double end_s)
{
	int lanes;
	return redis_lanes(f, rf, end_s, false, &lanes);
}

int lb_report_redis_dat(FILE *f, const struct lb_run_files *rf, double end_s)
{
	int lanes, rc = redis_lanes(f, rf, end_s, true, &lanes);
	return rc < 0 ? rc : lanes;
}

/* Is client @c dead at @t (killed holding a section that ended by then)? */
static bool dead_at(const struct lb_run_files *rf, int c, int64_t t)
{
	for (size_t i = 0; i < rf->n; i++)
		if (rf->sec[i].client == c && rf->sec[i].outcome == LB_OUT_KILLED &&
		    lb_section_exit(&rf->sec[i], (int64_t)(rf->elapsed_s * 1e9)) <= t)
			return true;
	return false;
}

/* The lock key's fate after its owner died, from the server's own account:
 * the first TTL another client gives a key left without one, and the key's
 * expiry (with how often its TTL was set again meanwhile). */
static void dead_key_steps(const struct lb_run_files *rf, const struct lb_key_event *e,
			   const int64_t *owner, size_t ne, void (*each)(void *, int64_t, const char *),
			   void *arg)
{
	char text[512];
	int who[LB_KEYWATCH_MAX_SERVERS];
	int32_t ttl[LB_KEYWATCH_MAX_SERVERS];
	int rearmed[LB_KEYWATCH_MAX_SERVERS] = { 0 };

	for (int sv = 0; sv < LB_KEYWATCH_MAX_SERVERS; sv++)
		who[sv] = -1, ttl[sv] = LB_KEY_TTL_UNKNOWN;
	for (size_t i = 0; i < ne; i++) {
		int sv = e[i].server, c = who[sv];
		double t = (double)e[i].t_ns / 1e9;
		switch (e[i].kind) {
		case LB_KEY_SET:
		case LB_KEY_FOUND:
			who[sv] = owner[i] >= 0 ? rf->sec[owner[i]].client : -1;
			ttl[sv] = e[i].ttl_ms;
			rearmed[sv] = 0;
			break;
		case LB_KEY_EXPIRE:
			if (c >= 0 && dead_at(rf, c, e[i].t_ns) && e[i].ttl_ms >= 0) {
				if (ttl[sv] == -1) {
					snprintf(text, sizeof(text), "**%.3f s: Redis: client %d's key, "
						 "left without a TTL when it died, gets one of %d ms** from "
						 "another client's EXPIRE: it will expire %d ms from now "
						 "unless it is set again.", t, c, (int)e[i].ttl_ms,
						 (int)e[i].ttl_ms);
					each(arg, e[i].t_ns, text);
				} else {
					rearmed[sv]++;
				}
			}
			ttl[sv] = e[i].ttl_ms;
			break;
		case LB_KEY_EXPIRED:
			if (c >= 0 && dead_at(rf, c, e[i].t_ns)) {
				int n = snprintf(text, sizeof(text), "**%.3f s: Redis expires client "
						 "%d's key**: the lock its dead holder kept is free again.",
						 t, c);
				if (rearmed[sv] > 0 && n > 0 && (size_t)n < sizeof(text))
					snprintf(text + n, sizeof(text) - (size_t)n, " Other clients had "
						 "set its TTL again %d time%s while they waited.", rearmed[sv],
						 rearmed[sv] == 1 ? "" : "s");
				each(arg, e[i].t_ns, text);
			}
			who[sv] = -1; /* no key now */
			ttl[sv] = LB_KEY_TTL_UNKNOWN;
			rearmed[sv] = 0;
			break;
		default:
			who[sv] = -1;
			ttl[sv] = LB_KEY_TTL_UNKNOWN;
			rearmed[sv] = 0;
			break;
		}
	}
}

int lb_report_redis_steps(const struct lb_run_files *rf, void (*each)(void *, int64_t, const char *),
			  void *arg)
{
	char path[PATH_MAX];
	struct lb_key_event *e = NULL;
	size_t ne = 0;
	bool deaths = false;
	int rc;

	for (size_t i = 0; i < rf->n; i++)
		deaths |= rf->sec[i].outcome == LB_OUT_KILLED;
	snprintf(path, sizeof(path), "%.4000s/keyevents.csv", rf->dir);
	if (!deaths || rf->imp || access(path, R_OK) != 0)
		return 0;
	int64_t *owner;
	if ((rc = owned_key_events(rf, path, &e, &ne, &owner)) < 0)
		return rc;
	dead_key_steps(rf, e, owner, ne, each, arg);
	free(owner);
	free(e);
	return 0;
}
