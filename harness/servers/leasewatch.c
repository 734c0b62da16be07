/* leasewatch.c - the lease watcher process (leasewatch.h). */
#include "leasewatch.h"
#include "ensemble.h"
#include "plumbing.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ASK_MS 250          /* one request to one member */
#define MAX_KEYS 64         /* lock keys followed (a run has a few) */
#define DUMP_CAP (256 << 10)

/* One lock key's owner as last read. */
struct owner {
	bool known;      /* read since the watch began */
	bool present;    /* it has one */
	int64_t id;      /* etcd: the lease; ZooKeeper: the session */
	int64_t order;   /* etcd: its create revision; ZooKeeper: its sequence */
	char token[24];  /* what its adapter says as token= */
};

struct lw {
	struct lb_keywatch *w;
	enum lb_consensus_kind kind;
	int port[LB_CONSENSUS_MEMBERS];
	int at;          /* the member asked first (the last that answered) */
	char prefix[128];
	int keys;
	struct owner o[MAX_KEYS];
	bool watching;   /* the last round was answered */
	bool ever;
	char *dump;      /* ZooKeeper: the leader's dump */
};

static void put(struct lw *l, int kind, int key, uint64_t value, int64_t t_ns)
{
	struct lb_key_event e = { .t_ns = t_ns, .value = value, .key = key,
				  .port = l->port[l->at], .ttl_ms = LB_KEY_TTL_UNKNOWN,
				  .server = 0, .node = 0, .kind = (uint8_t)kind };
	lb_keywatch_put(l->w, &e);
}

/* ---- etcd ---- */

/* The owner of lock key @k on member @m: 1 read (into @o), 0 no answer. */
static int etcd_owner(struct lw *l, int m, int k, struct owner *o)
{
	char key[192], end[192], b64k[300], b64e[300], body[800], out[4096], num[32];
	int64_t rev, lease;

	snprintf(key, sizeof(key), "%slock:%d/", l->prefix, k);
	snprintf(end, sizeof(end), "%s", key);
	end[strlen(end) - 1]++; /* KEY/ .. KEY0: every key under KEY/ */
	if (!lb_base64(key, strlen(key), b64k, sizeof(b64k)) ||
	    !lb_base64(end, strlen(end), b64e, sizeof(b64e)))
		return 0;
	snprintf(body, sizeof(body), "{\"key\":\"%s\",\"range_end\":\"%s\",\"limit\":1,"
		 "\"sort_order\":\"ASCEND\",\"sort_target\":\"CREATE\",\"keys_only\":true}", b64k, b64e);
	if (lb_consensus_http(l->port[m], "/v3/kv/range", body, out, sizeof(out), ASK_MS) != 200 ||
	    !strstr(out, "\"header\""))
		return 0;
	memset(o, 0, sizeof(*o));
	o->known = true;
	if (!strstr(out, "\"kvs\""))
		return 1; /* no key: no owner (the gateway leaves an empty list out) */
	if (!lb_json_field(out, "create_revision", num, sizeof(num)) ||
	    !lb_parse_i64(num, 1, INT64_MAX, &rev))
		return 0;
	/* a key without a lease (lease absent: 0) is none of the Mutex's */
	if (!lb_json_field(out, "lease", num, sizeof(num)) || !lb_parse_i64(num, 1, INT64_MAX, &lease))
		lease = 0;
	o->present = true;
	o->id = lease;
	o->order = rev;
	snprintf(o->token, sizeof(o->token), "%" PRIx64, (uint64_t)lease);
	return 1;
}

/* Did the server end lease @id (gone: 1), or is it still granted (0)? -1:
 * no member said. */
static int etcd_lease_gone(struct lw *l, int64_t id)
{
	char body[64], out[1024], num[32];
	int64_t ttl;

	if (id <= 0)
		return 0;
	snprintf(body, sizeof(body), "{\"ID\":%" PRId64 "}", id);
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		int m = (l->at + i) % LB_CONSENSUS_MEMBERS;
		if (lb_consensus_http(l->port[m], "/v3/kv/lease/timetolive", body, out, sizeof(out),
				      ASK_MS) == 200 && lb_json_field(out, "TTL", num, sizeof(num)) &&
		    lb_parse_i64(num, -1, INT64_MAX, &ttl))
			return ttl < 0;
	}
	return -1;
}

/* ---- ZooKeeper ---- */

/* The leader's dump into l->dump: 1, or 0 when no member leads or answers. */
static int zk_dump(struct lw *l)
{
	char srvr[2048];

	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		int m = (l->at + i) % LB_CONSENSUS_MEMBERS;
		if (lb_consensus_4lw(l->port[m], "srvr", srvr, sizeof(srvr), ASK_MS) < 0 ||
		    !strstr(srvr, "Mode: leader"))
			continue;
		if (lb_consensus_4lw(l->port[m], "dump", l->dump, DUMP_CAP, ASK_MS) < 0 ||
		    !strstr(l->dump, "Sessions with Ephemerals"))
			continue;
		l->at = m;
		return 1;
	}
	return 0;
}

/* The owner of lock key @k in the dump: the ephemeral node under
 * /lockbench/<KEY, %XX>/ with the lowest sequence (…__lock__NNNNNNNNNN). */
static void zk_owner(const struct lw *l, int k, struct owner *o)
{
	char key[192], path[600];
	const char *eph = strstr(l->dump, "Sessions with Ephemerals");
	int64_t session = 0;

	memset(o, 0, sizeof(*o));
	o->known = true;
	snprintf(key, sizeof(key), "%slock:%d", l->prefix, k);
	int n = snprintf(path, sizeof(path), "/lockbench/");
	lb_zk_quoted(key, path + n, sizeof(path) - (size_t)n);
	size_t plen = strlen(path);
	for (const char *line = eph; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		size_t len = strcspn(line, "\r\n");
		int64_t seq;
		char num[24];
		if (!strncmp(line, "0x", 2)) { /* a session: 0x<hex>: */
			char *e;
			session = (int64_t)strtoull(line + 2, &e, 16);
			continue;
		}
		const char *p = line + strspn(line, "\t ");
		const char *mark = memmem(p, len - (size_t)(p - line), "__lock__", 8);
		if (strncmp(p, path, plen) || p[plen] != '/' || !mark)
			continue;
		size_t dl = len - (size_t)(mark + 8 - line);
		snprintf(num, sizeof(num), "%.*s", (int)(dl < 23 ? dl : 23), mark + 8);
		if (!lb_parse_i64(num, 0, INT64_MAX, &seq) || (o->present && seq >= o->order))
			continue;
		o->present = true;
		o->order = seq;
		o->id = session;
		snprintf(o->token, sizeof(o->token), "%s", num);
	}
}

/* Is session @id still one of the leader's (the dump's session sets)? */
static bool zk_session_alive(const struct lw *l, int64_t id)
{
	char hex[24];
	const char *eph = strstr(l->dump, "Sessions with Ephemerals");

	snprintf(hex, sizeof(hex), "0x%" PRIx64, (uint64_t)id);
	for (const char *p = strstr(l->dump, hex); p && (!eph || p < eph); p = strstr(p + 1, hex)) {
		char after = p[strlen(hex)];
		if (!((after >= '0' && after <= '9') || (after >= 'a' && after <= 'f')))
			return true;
	}
	return false;
}

/* ---- the loop ---- */

/* One round: every key's owner read from one store's answer. 1, or 0 when
 * no member answered. */
static int read_owners(struct lw *l, struct owner *now)
{
	if (l->kind == LB_CONSENSUS_ZOOKEEPER) {
		if (!zk_dump(l))
			return 0;
		for (int k = 0; k < l->keys; k++)
			zk_owner(l, k, &now[k]);
		return 1;
	}
	for (int k = 0; k < l->keys; k++) {
		int i = 0;
		while (i < LB_CONSENSUS_MEMBERS &&
		       !etcd_owner(l, (l->at + i) % LB_CONSENSUS_MEMBERS, k, &now[k]))
			i++;
		if (i == LB_CONSENSUS_MEMBERS)
			return 0;
		l->at = (l->at + i) % LB_CONSENSUS_MEMBERS;
	}
	return 1;
}

/* The owner of @k went (@was): a release, or the server's end of its lease. */
static void owner_gone(struct lw *l, int k, const struct owner *was, int64_t t)
{
	int gone = l->kind == LB_CONSENSUS_ETCD ? etcd_lease_gone(l, was->id)
						: !zk_session_alive(l, was->id);
	if (gone < 0) { /* nobody said why: what the key holds is not known from here */
		put(l, LB_KEY_UNWATCH, -1, 0, t);
		put(l, LB_KEY_WATCH, -1, 0, t);
		return;
	}
	put(l, gone ? LB_KEY_EXPIRED : LB_KEY_DEL, k, 0, t);
}

static void round_once(struct lw *l)
{
	struct owner now[MAX_KEYS];

	if (!read_owners(l, now)) {
		if (l->watching)
			put(l, LB_KEY_UNWATCH, -1, 0, lb_now_ns());
		l->watching = false;
		return;
	}
	int64_t t = lb_now_ns();
	bool fresh = !l->watching;
	if (fresh)
		put(l, LB_KEY_WATCH, -1, 0, t);
	for (int k = 0; k < l->keys; k++) {
		struct owner *was = &l->o[k], *is = &now[k];
		bool same = was->known && was->present == is->present &&
			    (!is->present || (was->id == is->id && was->order == is->order));
		if (fresh) {
			if (is->present)
				put(l, LB_KEY_FOUND, k, lb_token_hash(is->token, strlen(is->token)), t);
		} else if (!same) {
			if (was->present)
				owner_gone(l, k, was, t);
			if (is->present)
				put(l, LB_KEY_SET, k, lb_token_hash(is->token, strlen(is->token)), t);
		}
		*was = *is;
	}
	l->watching = true;
	if (!l->ever) {
		l->ever = true;
		lb_keywatch_say(l->w, LB_KW_READY, NULL);
	}
}

static void body(struct lb_keywatch *w, const void *arg)
{
	struct lw *l = (struct lw *)arg;

	l->w = w;
	if (l->kind == LB_CONSENSUS_ZOOKEEPER && !(l->dump = malloc(DUMP_CAP)))
		_exit(1);
	for (;;) {
		bool last = lb_keywatch_draining(w);
		int64_t next = lb_now_ns() + LB_LEASEWATCH_PERIOD_MS * LB_NS_PER_MS;
		round_once(l);
		if (last) {
			lb_keywatch_say(w, LB_KW_DONE, NULL);
			for (;;)
				lb_sleep_ns(LB_NS_PER_S); /* the parent stops it */
		}
		int64_t left = next - lb_now_ns();
		if (left > 0)
			lb_sleep_ns(left);
	}
}

int lb_leasewatch_start(struct lb_keywatch *w, const struct lb_consensus *c, const char *prefix,
			int keys, double duration_s, char *why, size_t len)
{
	static struct lw l; /* the watcher's copy after the fork */
	struct lb_keywatch_server srv = { c->member[0]->port, 0, 0, false };

	memset(w, 0, sizeof(*w));
	if (keys < 1 || keys > MAX_KEYS || strlen(prefix) >= sizeof(l.prefix)) {
		snprintf(why, len, "the lease watcher follows at most %d lock keys", MAX_KEYS);
		return LB_EINVAL;
	}
	memset(&l, 0, sizeof(l));
	l.kind = c->kind;
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		l.port[i] = c->member[i]->port;
	snprintf(l.prefix, sizeof(l.prefix), "%s", prefix);
	l.keys = keys;
	return lb_keywatch_start_with(w, &srv, 1, duration_s, body, &l, "the lease watcher", why,
				      len);
}
