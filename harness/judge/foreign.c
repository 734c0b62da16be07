/* foreign.c - foreign releases from the servers' key events (foreign.h). Pure. */
#include "foreign.h"
#include "oracle.h"
#include "plumbing.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[LB_KEY_COUNT] = { "set", "del", "expired", "watch", "unwatch",
							      "expire", "found" };

const char *lb_key_kind_name(int kind)
{
	return kind >= 0 && kind < LB_KEY_COUNT ? kind_names[kind] : "?";
}

int lb_key_kind_parse(const char *name)
{
	for (int k = 0; k < LB_KEY_COUNT; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

void lb_foreign_result_free(struct lb_foreign_result *r)
{
	free(r->list);
	free(r->lapsed_at);
	free(r->ended_ns);
	r->list = NULL;
	r->lapsed_at = NULL;
	r->ended_ns = NULL;
}

enum { OWN_NONE = LB_OWNER_NONE, OWN_UNKNOWN = LB_OWNER_UNKNOWN };

/* What one server's copy of one key holds, as far as its events tell: the
 * section whose set it holds (an index), OWN_NONE or OWN_UNKNOWN; and
 * whether that set was matched by time rather than by its token. */
typedef struct {
	int64_t section;
	bool by_time;
} holder;

struct judge {
	const struct lb_section *s;
	size_t n;
	const struct lb_foreign_opts *o;
	size_t *by_token;   /* sections with a token, by (key, token, enter) */
	size_t n_token;
	size_t *by_enter;   /* every section, by (key, enter, client, seq) */
	uint32_t *claimed;  /* per section: the servers whose set it was given (bit) */
	uint32_t *seen;     /* per section: the servers where a set of its token was read (bit) */
	int64_t *lost_ns;   /* per server: when the watcher last lost it (unwatch), or -1 */
	int64_t *owner;     /* per event: whose set it is (lb_foreign_owners), or NULL */
};

static int cmp_token(const void *pa, const void *pb, void *arg)
{
	const struct lb_section *s = arg, *a = &s[*(const size_t *)pa], *b = &s[*(const size_t *)pb];

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->token != b->token)
		return a->token < b->token ? -1 : 1;
	if (a->enter_ns != b->enter_ns)
		return a->enter_ns < b->enter_ns ? -1 : 1;
	if (a->client != b->client)
		return a->client < b->client ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool on_node(const struct lb_section *s, int node)
{
	return s->nodes == 0 || (node >= 0 && node < 32 && (s->nodes >> node & 1));
}

/* The section whose token is @value on @key (the earliest if a token was
 * used twice), or -1. */
static int64_t find_token(const struct judge *j, int key, uint64_t value)
{
	size_t lo = 0, hi = j->n_token;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct lb_section *m = &j->s[j->by_token[mid]];
		if (m->key < key || (m->key == key && m->token < value))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < j->n_token && j->s[j->by_token[lo]].key == key &&
	    j->s[j->by_token[lo]].token == value)
		return (int64_t)j->by_token[lo];
	return -1;
}

/* The section a set at @t on (@server, @node, @key) is matched to by time
 * (foreign.h), claimed; or -1. Only sections without a token, unless @any;
 * none whose own set this server was seen to write (its token read); none
 * that entered before @from. */
static int64_t find_by_time(struct judge *j, int server, int node, int key, int64_t t, bool any,
			    int64_t from)
{
	int64_t to = t + j->o->ttl_ns;
	size_t lo = 0, hi = j->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct lb_section *m = &j->s[j->by_enter[mid]];
		if (m->key < key || (m->key == key && m->enter_ns < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < j->n; i++) {
		size_t k = j->by_enter[i];
		const struct lb_section *c = &j->s[k];
		if (c->key != key || c->enter_ns > to)
			break;
		if ((c->token && !any) || c->acquire_start_ns > t || !on_node(c, node) ||
		    ((j->claimed[k] | j->seen[k]) >> server & 1))
			continue;
		/* a section that entered before the watcher last lost this server
		 * (it restarted, or the link broke) made its set before then: a set
		 * seen since is not its own */
		if (j->lost_ns && c->enter_ns < j->lost_ns[server])
			continue;
		/* a set whose value is unknown (@any, one lock node) is not made by a
		 * section whose own set was seen on another server of that node: its
		 * lock lives there (the primary before a failover) */
		if (any && (j->claimed[k] & ~(UINT32_C(1) << server)))
			continue;
		j->claimed[k] |= UINT32_C(1) << server;
		return (int64_t)k;
	}
	return -1;
}

/* The client other than @owner whose release of @key (on @node) was in
 * flight at @t (foreign.h), or -1. */
static int64_t releaser(const struct judge *j, int owner, int node, int key, int64_t t)
{
	int64_t best = -1;
	bool best_foreign = false;

	for (size_t i = 0; i < j->n; i++) {
		const struct lb_section *a = &j->s[i];
		if (a->client == owner || a->key != key || !on_node(a, node) || a->exit_ns < 0 ||
		    a->exit_ns > t)
			continue;
		if (a->release_ns >= 0 && t > a->release_ns + j->o->slop_ns)
			continue;
		bool foreign = a->outcome == LB_OUT_FOREIGN;
		const struct lb_section *b = best >= 0 ? &j->s[best] : NULL;
		if (!b || (foreign && !best_foreign) ||
		    (foreign == best_foreign && (a->exit_ns > b->exit_ns ||
						 (a->exit_ns == b->exit_ns && (a->client < b->client ||
						  (a->client == b->client && a->seq < b->seq)))))) {
			best = (int64_t)i;
			best_foreign = foreign;
		}
	}
	return best;
}

/* Where a set matched by time may look for its section (foreign.h): from the
 * enter of the section given the key's previous set on that server, ANCHOR_START
 * (from the beginning: the watch began before any acquire), or ANCHOR_UNKNOWN
 * (the watcher lost the server: from the set's time minus the delivery slop). */
#define ANCHOR_START INT64_MIN
#define ANCHOR_UNKNOWN INT64_MAX

/* Set event @i: whose lock the key holds from it on (@at), and the anchor
 * of the key's next set matched by time (@after). */
static void judge_set(struct judge *j, const struct lb_key_event *ev, size_t i, holder *at,
		      int64_t *after, bool one_node, struct lb_foreign_result *out)
{
	int64_t k = ev->value ? find_token(j, ev->key, ev->value) : -1;
	int64_t from = *after == ANCHOR_UNKNOWN ? ev->t_ns - j->o->slop_ns : *after;

	out->sets++;
	if (k >= 0) {
		j->claimed[k] |= UINT32_C(1) << ev->server;
		*at = (holder){ k, false };
	} else if ((k = find_by_time(j, ev->server, ev->node, ev->key, ev->t_ns,
				     !ev->value && one_node, from)) >= 0) {
		*at = (holder){ k, true };
	} else {
		/* a value no section entered with: nobody inside holds it */
		*at = (holder){ ev->value ? OWN_NONE : OWN_UNKNOWN, false };
		if (j->owner)
			j->owner[i] = at->section;
		return;
	}
	if (j->owner)
		j->owner[i] = k;
	*after = j->s[k].enter_ns;
	out->sets_owned++;
}

/* A server ended section @k's lease at @t_ns: the first such time is kept
 * (out->ended_ns). 0, or LB_ENOMEM. */
static int lease_ended(const struct judge *j, int64_t k, int64_t t_ns, struct lb_foreign_result *out)
{
	if (!out->ended_ns) {
		if (!(out->ended_ns = malloc((j->n ? j->n : 1) * sizeof(int64_t))))
			return LB_ENOMEM;
		for (size_t i = 0; i < j->n; i++)
			out->ended_ns[i] = -1;
	}
	if (out->ended_ns[k] < 0 || t_ns < out->ended_ns[k])
		out->ended_ns[k] = t_ns;
	return 0;
}

/* A del of a key that held @was: a foreign release? (foreign.h) 0, or
 * LB_ENOMEM when the list could not grow (its capacity in *@cap). */
static int judge_del(const struct judge *j, const struct lb_key_event *ev, holder was,
		     bool one_node, size_t *cap, struct lb_foreign_result *out)
{
	out->dels++;
	if (was.section < 0)
		return 0;
	const struct lb_section *b = &j->s[was.section];
	/* on one node an acquire writes once and never undoes: from the set of
	 * its token on, the key is B's; elsewhere, from B's enter */
	bool from_set = one_node && !was.by_time;
	/* after B's exit, B's release may have sent it; not when that release
	 * said, on one node, that it found B's lock gone or another's (lost,
	 * foreign): then it deleted nothing of B's, and the del while it was in
	 * flight was another's (two releases racing at B's exit) */
	bool not_b = from_set && b->release_ns >= 0 &&
		     (b->outcome == LB_OUT_LOST || b->outcome == LB_OUT_FOREIGN) &&
		     ev->t_ns <= b->release_ns + j->o->slop_ns;
	if ((!from_set && ev->t_ns < b->enter_ns) ||
	    (ev->t_ns >= lb_section_exit(b, j->o->end_ns) && !not_b))
		return 0;
	if (out->releases == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		struct lb_foreign_release *nl = realloc(out->list, ncap * sizeof(*nl));
		if (!nl)
			return LB_ENOMEM;
		out->list = nl;
		*cap = ncap;
	}
	int64_t by = releaser(j, b->client, ev->node, ev->key, ev->t_ns);
	out->list[out->releases++] = (struct lb_foreign_release){
		.t_ns = ev->t_ns, .server = ev->server, .node = ev->node, .key = ev->key,
		.owner = b->client, .owner_seq = b->seq,
		.by = by >= 0 ? j->s[by].client : -1, .by_seq = by >= 0 ? j->s[by].seq : 0,
	};
	out->unattributed += by < 0;
	return lease_ended(j, was.section, ev->t_ns, out);
}

/* An expiry of a key that held @was: the server ended B's lease while B
 * held it (a lapse), when it came from B's set on (one node, matched by its
 * token) or B's enter, and before B's exit. 0, or LB_ENOMEM. */
static int judge_expired(const struct judge *j, const struct lb_key_event *ev, holder was,
			 bool one_node, struct lb_foreign_result *out)
{
	if (was.section < 0)
		return 0;
	const struct lb_section *b = &j->s[was.section];
	bool from_set = one_node && !was.by_time;
	if ((!from_set && ev->t_ns < b->enter_ns) || ev->t_ns >= lb_section_exit(b, j->o->end_ns))
		return 0;
	if (!out->lapsed_at && !(out->lapsed_at = calloc(j->n ? j->n : 1, sizeof(bool))))
		return LB_ENOMEM;
	out->lapsed += !out->lapsed_at[was.section];
	out->lapsed_at[was.section] = true;
	return lease_ended(j, was.section, ev->t_ns, out);
}

static int judge_events(struct judge *j, const struct lb_key_event *e, size_t ne,
			struct lb_foreign_result *out)
{
	int servers = 1, keys = 1, rc = LB_ENOMEM;
	size_t cap = 0;
	bool one_node = true; /* no failed attempt's set and its undo there (Redlock's) */
	int64_t first_acquire = INT64_MAX;

	for (size_t i = 0; i < ne; i++) {
		if (e[i].server + 1 > servers)
			servers = e[i].server + 1;
		if (e[i].key + 1 > keys)
			keys = e[i].key + 1;
		one_node = one_node && e[i].node == 0;
	}
	for (size_t i = 0; i < j->n; i++) {
		out->unjudged = out->unjudged || (!one_node && !j->s[i].token);
		if (j->s[i].acquire_start_ns < first_acquire)
			first_acquire = j->s[i].acquire_start_ns;
	}
	size_t slots = (size_t)servers * (size_t)keys;
	holder *h = malloc(sizeof(*h) * slots);
	int64_t *lost = malloc(sizeof(*lost) * (size_t)servers);
	int64_t *anchor = malloc(sizeof(*anchor) * slots);
	bool *began = calloc((size_t)servers, sizeof(*began));
	if (!h || !lost || !anchor || !began)
		goto out;
	for (int sv = 0; sv < servers; sv++)
		lost[sv] = -1;
	j->lost_ns = lost;
	for (size_t i = 0; i < slots; i++) {
		h[i] = (holder){ OWN_UNKNOWN, false };
		anchor[i] = ANCHOR_UNKNOWN;
	}
	for (size_t i = 0; i < ne; i++) {
		const struct lb_key_event *ev = &e[i];
		if (ev->kind == LB_KEY_UNWATCH)
			lost[ev->server] = ev->t_ns;
		if (ev->kind == LB_KEY_WATCH || ev->kind == LB_KEY_UNWATCH) {
			/* what came before is known only when the watch began before
			 * any acquire and was never lost since */
			int64_t a = ev->kind == LB_KEY_WATCH && !began[ev->server] &&
						    ev->t_ns <= first_acquire ? ANCHOR_START : ANCHOR_UNKNOWN;
			for (int k = 0; k < keys; k++)
				anchor[(size_t)ev->server * (size_t)keys + (size_t)k] = a;
		}
		began[ev->server] = true;
		if (ev->kind == LB_KEY_FOUND) { /* not a change: for lb_foreign_owners alone */
			int64_t k = ev->value ? find_token(j, ev->key, ev->value) : OWN_UNKNOWN;
			if (j->owner)
				j->owner[i] = k >= 0 ? k : ev->value ? OWN_NONE : OWN_UNKNOWN;
			continue;
		}
		if (ev->kind == LB_KEY_WATCH || ev->kind == LB_KEY_UNWATCH || ev->key < 0) {
			for (int k = 0; k < keys; k++)
				h[(size_t)ev->server * (size_t)keys + (size_t)k] =
					(holder){ OWN_UNKNOWN, false };
			continue;
		}
		holder *at = &h[(size_t)ev->server * (size_t)keys + (size_t)ev->key];
		int64_t *after = &anchor[(size_t)ev->server * (size_t)keys + (size_t)ev->key];
		if (ev->kind == LB_KEY_EXPIRED) {
			holder was = *at;
			*at = (holder){ OWN_NONE, false };
			if (judge_expired(j, ev, was, one_node, out) < 0)
				goto out;
			continue;
		}
		if (ev->kind == LB_KEY_SET) {
			judge_set(j, ev, i, at, after, one_node, out);
		} else if (ev->kind == LB_KEY_DEL) {
			holder was = *at;
			*at = (holder){ OWN_NONE, false };
			if (judge_del(j, ev, was, one_node, &cap, out) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(h);
	free(lost);
	free(anchor);
	free(began);
	j->lost_ns = NULL;
	return rc;
}

int lb_foreign_verdict(struct lb_verdict *v, const struct lb_section *s, size_t n,
		       const struct lb_key_event *e, size_t ne, bool blind,
		       const struct lb_foreign_opts *o, struct lb_foreign_result *out)
{
	memset(out, 0, sizeof(*out));
	if (!e) {
		v->foreign_source = blind ? LB_FOREIGN_NA : LB_FOREIGN_CLIENT;
		v->foreign_releases = blind ? 0 : v->foreign_client;
		return 0;
	}
	int rc = lb_foreign_judge(s, n, e, ne, o, out);
	if (rc < 0)
		return rc;
	/* a library's lock written as another type: its releases cannot say
	 * either (a recipe's own count stays the servers' judgement's) */
	out->unseen = blind && n > 0 && out->sets == 0;
	if (out->unjudged || out->unseen) {
		v->foreign_source = blind ? LB_FOREIGN_NA : LB_FOREIGN_CLIENT;
		v->foreign_releases = blind ? 0 : v->foreign_client;
		return 0;
	}
	v->foreign_source = LB_FOREIGN_SERVER;
	v->foreign_releases = out->releases;
	v->foreign_unattributed = out->unattributed;
	/* a lapse is what the server did: a lease it ended while its holder was
	 * inside is lost, whatever the library said (its release, or nothing) */
	v->leases_lapsed = out->lapsed;
	v->leases_lapsed_known = true;
	for (size_t i = 0; out->lapsed_at && i < n; i++)
		v->lost_leases_servers += out->lapsed_at[i] && s[i].outcome != LB_OUT_LOST;
	v->lost_leases += v->lost_leases_servers;
	return 0;
}

static int judge(const struct lb_section *s, size_t n, const struct lb_key_event *e, size_t ne,
		 const struct lb_foreign_opts *o, struct lb_foreign_result *out, int64_t *owner)
{
	struct judge j = { .s = s, .n = n, .o = o, .owner = owner };
	int rc = LB_ENOMEM;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; owner && i < ne; i++)
		owner[i] = OWN_UNKNOWN;
	j.by_token = malloc(sizeof(size_t) * (n ? n : 1));
	j.by_enter = malloc(sizeof(size_t) * (n ? n : 1));
	j.claimed = calloc(n ? n : 1, sizeof(*j.claimed));
	j.seen = calloc(n ? n : 1, sizeof(*j.seen));
	if (!j.by_token || !j.by_enter || !j.claimed || !j.seen)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (s[i].token)
			j.by_token[j.n_token++] = i;
		j.by_enter[i] = i;
	}
	qsort_r(j.by_token, j.n_token, sizeof(size_t), cmp_token, (void *)s);
	qsort_r(j.by_enter, n, sizeof(size_t), lb_section_ix_by_enter, (void *)s);
	/* the sections whose own set each server was seen to write (a set matched
	 * by time is none of theirs, however late the watcher read it) */
	for (size_t i = 0; i < ne; i++) {
		int64_t k = e[i].kind == LB_KEY_SET && e[i].value ? find_token(&j, e[i].key, e[i].value)
								  : -1;
		if (k >= 0)
			j.seen[k] |= UINT32_C(1) << e[i].server;
	}
	rc = judge_events(&j, e, ne, out);
	if (rc < 0)
		lb_foreign_result_free(out);
out:
	free(j.by_token);
	free(j.by_enter);
	free(j.claimed);
	free(j.seen);
	return rc;
}

int lb_foreign_judge(const struct lb_section *s, size_t n, const struct lb_key_event *e,
		     size_t ne, const struct lb_foreign_opts *o, struct lb_foreign_result *out)
{
	return judge(s, n, e, ne, o, out, NULL);
}

int lb_foreign_owners(const struct lb_section *s, size_t n, const struct lb_key_event *e,
		      size_t ne, const struct lb_foreign_opts *o, int64_t *owner)
{
	struct lb_foreign_result r;
	int rc = judge(s, n, e, ne, o, &r, owner);

	if (rc == 0)
		lb_foreign_result_free(&r);
	return rc;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* When section @sec's holder was first told its lease was lost, or -1. */
static int64_t told_at(const struct lb_section *sec, const struct lb_event *ev, size_t n_ev,
		       int64_t end_ns)
{
	int64_t exit = lb_section_exit(sec, end_ns), best = -1;

	for (size_t i = 0; i < n_ev; i++)
		if (ev[i].kind == LB_EV_LOST_NOTICE && ev[i].client == sec->client &&
		    ev[i].t_ns >= sec->enter_ns && ev[i].t_ns <= exit && (best < 0 || ev[i].t_ns < best))
			best = ev[i].t_ns;
	return best;
}

int lb_notice_verdict(struct lb_verdict *v, const struct lb_section *s, size_t n,
		      const struct lb_foreign_result *fr, const struct lb_event *ev, size_t n_ev,
		      int64_t end_ns, bool complete, int64_t *lag_ns)
{
	size_t told = 0;
	int64_t *lags = malloc((n ? n : 1) * sizeof(*lags));

	if (!lags)
		return LB_ENOMEM;
	v->leases_ended = v->notices_missed = 0;
	for (size_t i = 0; i < n; i++) {
		if (lag_ns)
			lag_ns[i] = INT64_MIN;
		if (!fr->ended_ns || fr->ended_ns[i] < 0)
			continue;
		v->leases_ended++;
		int64_t t = told_at(&s[i], ev, n_ev, end_ns);
		if (t < 0) {
			v->notices_missed++;
			continue;
		}
		lags[told++] = t - fr->ended_ns[i];
		if (lag_ns)
			lag_ns[i] = t - fr->ended_ns[i];
	}
	qsort(lags, told, sizeof(*lags), cmp_i64);
	v->notices_known = v->leases_lapsed_known && complete;
	v->notice_lag_p50_ms = told ? (double)lags[(size_t)ceil(0.50 * (double)told) - 1] / 1e6 : 0;
	v->notice_lag_max_ms = told ? (double)lags[told - 1] / 1e6 : 0;
	v->notices_told = told;
	free(lags);
	return 0;
}

/* ---- held with no live holder ---- */

struct span {
	int64_t from, to;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return (x->from > y->from) - (x->from < y->from);
}

/* Sort @sp and merge what overlaps, in place; the count left. */
static size_t merge_spans(struct span *sp, size_t n)
{
	size_t m = 0;

	qsort(sp, n, sizeof(*sp), cmp_span);
	for (size_t i = 0; i < n; i++) {
		if (m && sp[i].from <= sp[m - 1].to) {
			if (sp[i].to > sp[m - 1].to)
				sp[m - 1].to = sp[i].to;
		} else {
			sp[m++] = sp[i];
		}
	}
	return m;
}

/* The stretches in which server @srv held key @key, from its events in its
 * order: from a set until its del or expired, and never past its PTTL as
 * read with the set or a later expire (an `expired` comes when Redis deletes
 * the key, its end is the deadline). Appended to @sp; the count appended. */
static size_t held_spans(const struct lb_key_event *e, size_t ne, int key, int srv,
			 const struct lb_foreign_opts *o, struct span *sp)
{
	size_t k = 0;
	int64_t from = -1, until = INT64_MAX;

	for (size_t i = 0; i < ne; i++) {
		if (e[i].key != key || e[i].server != srv)
			continue;
		int64_t t = e[i].t_ns;
		if (from >= 0 && t >= until) { /* it ran out before this event */
			sp[k++] = (struct span){ from, until };
			from = -1;
		}
		switch (e[i].kind) {
		case LB_KEY_SET:
		case LB_KEY_EXPIRE:
			if (e[i].kind == LB_KEY_EXPIRE && from < 0)
				break; /* an expire of a key it did not hold */
			if (from < 0)
				from = t;
			until = e[i].ttl_ms >= 0 ? t + e[i].ttl_ms * LB_NS_PER_MS :
				e[i].ttl_ms == -1 ? INT64_MAX : t + o->ttl_ns;
			break;
		case LB_KEY_DEL:
		case LB_KEY_EXPIRED:
			if (from >= 0)
				sp[k++] = (struct span){ from, t < until ? t : until };
			from = -1;
			break;
		default:
			break;
		}
	}
	if (from >= 0 && from < o->end_ns)
		sp[k++] = (struct span){ from, until < o->end_ns ? until : o->end_ns };
	return k;
}

/* A gap [@from, @to) into @sum and @longest, if longer than @slop_ns. */
static void gap(int64_t from, int64_t to, int64_t slop_ns, int64_t *sum, int64_t *longest)
{
	if (to - from > slop_ns) {
		*sum += to - from;
		if (to - from > *longest)
			*longest = to - from;
	}
}

/* How much of the stretches @h (merged) no stretch of @a (merged) covers,
 * counting only gaps longer than @slop_ns; ns. */
static int64_t uncovered(const struct span *h, size_t nh, const struct span *a, size_t na,
			 int64_t slop_ns, int64_t *longest)
{
	int64_t sum = 0;
	size_t j = 0;

	for (size_t i = 0; i < nh; i++) {
		int64_t t = h[i].from;
		while (j < na && a[j].to <= t)
			j++;
		for (size_t q = j; q < na && a[q].from < h[i].to; q++) {
			if (a[q].from > t)
				gap(t, a[q].from, slop_ns, &sum, longest);
			if (a[q].to > t)
				t = a[q].to;
		}
		if (t < h[i].to)
			gap(t, h[i].to, slop_ns, &sum, longest);
	}
	return sum;
}

int lb_unattended_verdict(struct lb_verdict *v, const struct lb_section *s, size_t n,
			  const struct lb_key_event *e, size_t ne, int keys,
			  const struct lb_foreign_opts *o)
{
	struct span *h = malloc((ne + 1) * sizeof(*h)), *a = malloc((n + 1) * sizeof(*a));
	int64_t sum = 0, longest = 0;
	int servers = 0;

	if (!h || !a) {
		free(h);
		free(a);
		return LB_ENOMEM;
	}
	for (size_t i = 0; i < ne; i++)
		if (e[i].server + 1 > servers)
			servers = e[i].server + 1;
	for (int key = 0; key < keys; key++) {
		size_t nh = 0, na = 0;
		for (int srv = 0; srv < servers; srv++)
			nh += held_spans(e, ne, key, srv, o, h + nh);
		for (size_t i = 0; i < n; i++) {
			if (s[i].key != key)
				continue;
			int64_t exit = lb_section_exit(&s[i], o->end_ns);
			a[na++] = (struct span){ s[i].enter_ns,
						 s[i].release_ns > exit ? s[i].release_ns : exit };
		}
		nh = merge_spans(h, nh);
		na = merge_spans(a, na);
		sum += uncovered(h, nh, a, na, o->slop_ns, &longest);
	}
	v->held_no_holder_ms = (double)sum / 1e6;
	v->held_no_holder_max_ms = (double)longest / 1e6;
	free(h);
	free(a);
	return 0;
}
