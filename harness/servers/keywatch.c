/* keywatch.c - the key watcher process (keywatch.h). */
#include "adapter.h"
#include "keywatch.h"
#include "plumbing.h"
#include "signals.h"
#include "util.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_BUDGET_BYTES (INT64_C(2) << 30) /* virtual, MAP_NORESERVE */
#define ROLE_EVERY_NS (20 * LB_NS_PER_MS)
#define RETRY_NS (10 * LB_NS_PER_MS)
#define SNAP_MAX_NAMES 16 /* more key names: no snapshot (report.html's lane is for one lock) */

/* flags of a logged event, the watcher's bookkeeping */
#define EV_PENDING 1u   /* from a server whose role is not known yet */
#define EV_DROPPED 2u   /* it was a replica: a replay, not the server's own */

struct lb_keywatch_log {
	_Atomic int ready;      /* every server watched once */
	_Atomic int failed;     /* a server could not be watched (failure says why) */
	_Atomic int drain;      /* the parent asks: read what was sent, then say done */
	_Atomic int done;
	_Atomic int full;       /* the log filled: recording stopped */
	_Atomic uint64_t cmds[LB_KEYWATCH_MAX_SERVERS]; /* commands sent to each server */
	char failure[256];
	size_t cap;
	_Atomic size_t n;
	struct lb_key_event ev[];
};

enum role { ROLE_UNKNOWN, ROLE_MASTER, ROLE_REPLICA };

/* What a reply on a connection answers, in order. */
enum q_kind { Q_GET, Q_PTTL, Q_ROLE, Q_VALUE, Q_ROLE_MARK, Q_DRAIN, Q_SNAP_GET, Q_SNAP_PTTL,
	      Q_FOUND };
struct q_item {
	enum q_kind kind;
	size_t ev;       /* Q_GET, Q_PTTL, Q_VALUE: the set or expire it reads the value of */
	uint64_t hash;   /* Q_VALUE: the value read */
	int32_t ttl;     /* Q_VALUE: the PTTL read (LB_KEY_TTL_UNKNOWN: none usable) */
	enum role role;  /* Q_ROLE_MARK: the answer it marks */
	int name;        /* Q_SNAP_*, Q_FOUND: the key name read (an index into the names) */
	size_t since;    /* Q_FOUND: the log's length when the read was sent */
};
struct queue {
	struct q_item *v;
	size_t head, tail, cap;
};

struct srv {
	struct lb_keywatch_server cfg;
	redisContext *sub, *cmd; /* sub: SUBSCRIBEd, in the server's order; cmd: GET, ROLE */
	int64_t next_try;
	bool ever;               /* watched once */
	enum role role;
	bool pend_open;          /* events are waiting for a ROLE answer... */
	size_t pend_first;       /* ... logged from this index on */
	int64_t next_role;
	bool role_out;           /* a ROLE asked, its mark not back yet */
	struct queue cq, sq;
	size_t *last;            /* per key: the last event of that key logged (SIZE_MAX: none) */
	size_t *last_set;        /* per key: its last set, if only expires came since (else SIZE_MAX) */
	uint64_t got;            /* a GET's value, until its PTTL answers */
	uint32_t found;          /* per key (bit): a name of it found in the snapshot being read */
};

/* The channels: one per kind of event, the key in the message (not one per
 * key: the server would publish twice for every key of the run). */
static const char *const channels[] = { "SUBSCRIBE", "__keyevent@0__:set", "__keyevent@0__:del",
					"__keyevent@0__:expired", "__keyevent@0__:evicted",
					"__keyevent@0__:expire", "__keyevent@0__:persist" };
#define N_CHANNELS ((int)(sizeof(channels) / sizeof(channels[0])))

struct watcher {
	struct lb_keywatch_log *log;
	const struct lb_keywatch_keys *keys;
	int n_keys;
	struct srv s[LB_KEYWATCH_MAX_SERVERS];
	int n;
	int *table;      /* key names by hash (open addressing): index into keys, or -1 */
	size_t mask;
};

static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* The lock key named @s, or -1: a key of another kind, or another run's. */
static int key_named(const struct watcher *w, const char *s, size_t len)
{
	for (size_t i = name_hash(s, len) & w->mask;; i = (i + 1) & w->mask) {
		int k = w->table[i];
		if (k < 0)
			return -1;
		if (strlen(w->keys->names[k]) == len && !memcmp(w->keys->names[k], s, len))
			return w->keys->key_of[k];
	}
}

static bool q_push(struct queue *q, struct q_item it)
{
	if (q->head == q->tail)
		q->head = q->tail = 0;
	if (q->tail == q->cap) {
		size_t ncap = q->cap ? 2 * q->cap : 64;
		struct q_item *nv = realloc(q->v, ncap * sizeof(*nv));
		if (!nv)
			return false;
		q->v = nv;
		q->cap = ncap;
	}
	q->v[q->tail++] = it;
	return true;
}

static bool q_pop(struct queue *q, struct q_item *it)
{
	if (q->head == q->tail)
		return false;
	*it = q->v[q->head++];
	return true;
}

static bool q_empty(const struct queue *q)
{
	return q->head == q->tail;
}

/* Append an event stamped now; its index, or SIZE_MAX when the log is full. */
static size_t log_event(struct watcher *w, int si, int kind, int key, unsigned flags)
{
	struct lb_keywatch_log *log = w->log;
	size_t i = atomic_load(&log->n);

	if (atomic_load(&log->full))
		return SIZE_MAX;
	if (i == log->cap) {
		atomic_store(&log->full, 1);
		return SIZE_MAX;
	}
	log->ev[i] = (struct lb_key_event){ .t_ns = lb_now_ns(), .key = key,
					    .port = w->s[si].cfg.port, .ttl_ms = LB_KEY_TTL_UNKNOWN,
					    .server = (uint8_t)si,
					    .node = (uint8_t)w->s[si].cfg.node, .kind = (uint8_t)kind,
					    .flags = (uint8_t)flags };
	atomic_store(&log->n, i + 1);
	return i;
}

static void send_cmd(struct watcher *w, int si, redisContext *c, const char *cmd)
{
	redisAppendCommand(c, cmd);
	atomic_fetch_add(&w->log->cmds[si], 1);
}

/* Settle the events waiting for a ROLE answer: kept for a primary, dropped
 * (replays) otherwise. */
static void settle(struct watcher *w, int si, enum role r)
{
	struct srv *s = &w->s[si];
	size_t n = atomic_load(&w->log->n);

	if (!s->pend_open)
		return;
	for (size_t i = s->pend_first; i < n; i++)
		if (w->log->ev[i].server == si && (w->log->ev[i].flags & EV_PENDING))
			w->log->ev[i].flags = r == ROLE_MASTER ? 0 : EV_DROPPED;
	s->pend_open = false;
}

static void disconnect(struct watcher *w, int si)
{
	struct srv *s = &w->s[si];

	if (s->sub)
		redisFree(s->sub);
	if (s->cmd)
		redisFree(s->cmd);
	s->sub = s->cmd = NULL;
	settle(w, si, ROLE_UNKNOWN); /* their role is not known: not the server's own */
	s->role = ROLE_UNKNOWN;
	s->role_out = false;
	s->cq.head = s->cq.tail = s->sq.head = s->sq.tail = 0;
	for (int k = 0; k < w->n_keys; k++)
		s->last[k] = s->last_set[k] = SIZE_MAX;
	log_event(w, si, LB_KEY_UNWATCH, -1, 0);
	s->next_try = lb_now_ns() + RETRY_NS;
}

static void fail_first(struct watcher *w, int si, const char *what, const redisContext *c,
		       const redisReply *r)
{
	if (w->s[si].ever || atomic_load(&w->log->failed))
		return;
	snprintf(w->log->failure, sizeof(w->log->failure), "127.0.0.1:%d: %s: %s", w->s[si].cfg.port,
		 what, r && r->type == REDIS_REPLY_ERROR ? r->str : c && c->err ? c->errstr :
		 "no answer");
}

static void snapshot(struct watcher *w, int si);

/* Connect, turn the notifications on, subscribe: what the server holds from
 * here is unknown until its next set (`watch`), or until the snapshot of it
 * is read (`found`). */
static bool setup(struct watcher *w, int si)
{
	struct srv *s = &w->s[si];
	struct timeval tv = { 0, 300000 };
	redisReply *r = NULL;

	s->cmd = redisConnectWithTimeout("127.0.0.1", s->cfg.port, tv);
	if (!s->cmd || s->cmd->err) {
		fail_first(w, si, "connect", s->cmd, NULL);
		goto fail;
	}
	r = redisCommand(s->cmd, "CONFIG SET notify-keyspace-events E$gx");
	atomic_fetch_add(&w->log->cmds[si], 1);
	if (!r || r->type != REDIS_REPLY_STATUS) {
		fail_first(w, si, "CONFIG SET notify-keyspace-events", s->cmd, r);
		goto fail;
	}
	freeReplyObject(r);
	s->sub = redisConnectWithTimeout("127.0.0.1", s->cfg.port, tv);
	if (!s->sub || s->sub->err) {
		fail_first(w, si, "connect", s->sub, NULL);
		r = NULL;
		goto fail;
	}
	r = redisCommandArgv(s->sub, N_CHANNELS, (const char **)channels, NULL);
	atomic_fetch_add(&w->log->cmds[si], 1);
	bool ok = r && r->type == REDIS_REPLY_ARRAY;
	for (int i = 2; ok && i < N_CHANNELS; i++) { /* one confirmation per channel */
		freeReplyObject(r);
		r = NULL;
		ok = redisGetReply(s->sub, (void **)&r) == REDIS_OK && r && r->type == REDIS_REPLY_ARRAY;
	}
	if (!ok) {
		fail_first(w, si, "SUBSCRIBE", s->sub, r);
		goto fail;
	}
	freeReplyObject(r);
	r = NULL;
	s->role = ROLE_UNKNOWN;
	s->pend_open = false;
	size_t m = log_event(w, si, LB_KEY_WATCH, -1, s->cfg.role_check ? EV_PENDING : 0);
	if (s->cfg.role_check && m != SIZE_MAX) {
		s->pend_open = true;
		s->pend_first = m;
	}
	s->next_role = 0;
	s->ever = true;
	if (!s->cfg.role_check)
		snapshot(w, si); /* a role_check server's, once it says it is a primary */
	return true;
fail:
	if (r)
		freeReplyObject(r);
	if (s->sub)
		redisFree(s->sub);
	if (s->cmd)
		redisFree(s->cmd);
	s->sub = s->cmd = NULL;
	s->next_try = lb_now_ns() + RETRY_NS;
	return false;
}

/* Log an event of lock key @key: pending while the server's role is not
 * known to be primary (a watch opens what is pending). Its index, or SIZE_MAX. */
static size_t log_key(struct watcher *w, int si, int kind, int key)
{
	struct srv *s = &w->s[si];
	unsigned flags = 0;

	if (s->cfg.role_check && s->role != ROLE_MASTER) {
		if (!s->pend_open) {
			size_t m = log_event(w, si, LB_KEY_WATCH, -1, EV_PENDING);
			if (m == SIZE_MAX)
				return SIZE_MAX;
			s->pend_open = true;
			s->pend_first = m;
		}
		flags = EV_PENDING;
	}
	size_t i = log_event(w, si, kind, key, flags);
	if (i != SIZE_MAX)
		s->last[key] = i;
	return i;
}

/* What the server holds of each lock key, read when its watch begins (a
 * start, a restart, a promotion): GET and PTTL of every name, then a PING
 * (Q_FOUND). Until then its events say nothing of what it held before. */
static void snapshot(struct watcher *w, int si)
{
	struct srv *s = &w->s[si];
	size_t since = atomic_load(&w->log->n);

	if (w->keys->n > SNAP_MAX_NAMES)
		return;
	s->found = 0;
	for (int i = 0; i < w->keys->n; i++) {
		const char *get[2] = { "GET", w->keys->names[i] }, *pttl[2] = { "PTTL", w->keys->names[i] };
		redisAppendCommandArgv(s->cmd, 2, get, NULL);
		redisAppendCommandArgv(s->cmd, 2, pttl, NULL);
		atomic_fetch_add(&w->log->cmds[si], 2);
		q_push(&s->cq, (struct q_item){ .kind = Q_SNAP_GET, .name = i });
		q_push(&s->cq, (struct q_item){ .kind = Q_SNAP_PTTL, .name = i, .since = since });
	}
}

/* A snapshot's read, placed in the server's order by its PONG: `found`, with
 * the value and the TTL (-2: no key, said once for a key none of whose names
 * is there), unless an event of the key came since the read was sent (that
 * event tells what the server holds). */
static void found(struct watcher *w, int si, const struct q_item *it)
{
	struct srv *s = &w->s[si];
	int key = w->keys->key_of[it->name];
	bool last = true; /* the last name of its key */

	for (int j = it->name + 1; j < w->keys->n; j++)
		last = last && w->keys->key_of[j] != key;
	if (it->ttl == LB_KEY_TTL_UNKNOWN || key >= 32 ||
	    (s->last[key] != SIZE_MAX && s->last[key] >= it->since))
		return;
	bool there = it->ttl >= -1;
	if (there || (last && !(s->found >> key & 1))) {
		size_t i = log_key(w, si, LB_KEY_FOUND, key);
		if (i == SIZE_MAX)
			return;
		w->log->ev[i].value = there ? it->hash : 0;
		w->log->ev[i].ttl_ms = it->ttl;
		s->last_set[key] = SIZE_MAX;
	}
	if (there)
		s->found |= UINT32_C(1) << key;
	if (last)
		s->found &= ~(UINT32_C(1) << key);
}

/* A notification: ["message", "__keyevent@0__:EVENT", KEY]. */
static void notification(struct watcher *w, int si, const redisReply *r)
{
	static const char pre[] = "__keyevent@0__:";
	struct srv *s = &w->s[si];
	const char *ch = r->element[1]->str, *name = r->element[2]->str;
	int key = key_named(w, name, r->element[2]->len), kind;

	if (key < 0 || strncmp(ch, pre, sizeof(pre) - 1))
		return;
	ch += sizeof(pre) - 1;
	if (!strcmp(ch, "del"))
		kind = LB_KEY_DEL;
	else if (!strcmp(ch, "expired") || !strcmp(ch, "evicted"))
		kind = LB_KEY_EXPIRED;
	else if (!strcmp(ch, "set"))
		kind = LB_KEY_SET; /* the value changed: whose it is now, GET tells */
	else if (!strcmp(ch, "expire") || !strcmp(ch, "persist"))
		kind = LB_KEY_EXPIRE; /* its TTL changed: PTTL tells */
	else
		return;
	size_t i = log_key(w, si, kind, key);
	if (i == SIZE_MAX)
		return;
	if (kind == LB_KEY_SET)
		s->last_set[key] = i;
	else if (kind != LB_KEY_EXPIRE)
		s->last_set[key] = SIZE_MAX;
	if (kind == LB_KEY_SET || kind == LB_KEY_EXPIRE) {
		/* a replica's too: it may have been promoted meanwhile */
		const char *get[2] = { "GET", name }, *pttl[2] = { "PTTL", name };
		size_t getlen[2] = { 3, r->element[2]->len }, pttllen[2] = { 4, r->element[2]->len };
		redisAppendCommandArgv(s->cmd, 2, get, getlen);
		redisAppendCommandArgv(s->cmd, 2, pttl, pttllen);
		atomic_fetch_add(&w->log->cmds[si], 2);
		q_push(&s->cq, (struct q_item){ .kind = Q_GET, .ev = i });
		q_push(&s->cq, (struct q_item){ .kind = Q_PTTL, .ev = i });
	}
}

static bool is_str(const redisReply *r, const char *s)
{
	return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) &&
	       !strcmp(r->str, s);
}

/* A reply on the subscription: a notification, or a PONG that marks a place
 * in the server's order. */
static void on_sub(struct watcher *w, int si, const redisReply *r)
{
	struct srv *s = &w->s[si];
	struct q_item it;

	if (r->type != REDIS_REPLY_ARRAY || r->elements < 2)
		return;
	if (is_str(r->element[0], "message") && r->elements == 3 &&
	    r->element[1]->type == REDIS_REPLY_STRING && r->element[2]->type == REDIS_REPLY_STRING) {
		notification(w, si, r);
		return;
	}
	if (!is_str(r->element[0], "pong") || !q_pop(&s->sq, &it))
		return;
	if (it.kind == Q_VALUE) {
		/* no event of that key between the set (or expire) and here: what was
		 * read is what it left; an expire leaves the value of the set before
		 * it, when only expires came between */
		struct lb_key_event *e = &w->log->ev[it.ev];
		if (e->key >= 0 && s->last[e->key] == it.ev) {
			size_t set = s->last_set[e->key];
			e->ttl_ms = it.ttl;
			if (it.hash && set != SIZE_MAX)
				w->log->ev[set].value = it.hash;
		}
	} else if (it.kind == Q_FOUND) {
		found(w, si, &it);
	} else if (it.kind == Q_ROLE_MARK) {
		settle(w, si, it.role);
		if (it.role == ROLE_REPLICA && s->role == ROLE_MASTER)
			log_event(w, si, LB_KEY_UNWATCH, -1, 0);
		if (it.role == ROLE_MASTER && s->role != ROLE_MASTER)
			snapshot(w, si); /* a primary from here: what does it hold? */
		s->role = it.role;
		s->role_out = false;
	}
}

/* A reply on the command connection: a GET's value or a ROLE answer; a PING
 * on the subscription then marks where in the server's order it stands. */
static void on_cmd(struct watcher *w, int si, const redisReply *r)
{
	struct srv *s = &w->s[si];
	struct q_item it;

	if (!q_pop(&s->cq, &it))
		return;
	if (it.kind == Q_GET || it.kind == Q_SNAP_GET) { /* its PTTL answers next */
		s->got = r->type == REDIS_REPLY_STRING ? lb_token_hash(r->str, r->len) : 0;
		return;
	}
	if (it.kind == Q_PTTL) {
		/* -2: no key (an event of it came first: not used); -1: no TTL */
		int32_t ttl = r->type != REDIS_REPLY_INTEGER || r->integer < -1 ? LB_KEY_TTL_UNKNOWN :
			      r->integer > INT32_MAX ? INT32_MAX : (int32_t)r->integer;
		q_push(&s->sq, (struct q_item){ .kind = Q_VALUE, .ev = it.ev, .hash = s->got,
						.ttl = ttl });
		s->got = 0;
	} else if (it.kind == Q_SNAP_PTTL) { /* -2: no key */
		int32_t ttl = r->type != REDIS_REPLY_INTEGER || r->integer < -2 ? LB_KEY_TTL_UNKNOWN :
			      r->integer > INT32_MAX ? INT32_MAX : (int32_t)r->integer;
		q_push(&s->sq, (struct q_item){ .kind = Q_FOUND, .name = it.name, .since = it.since,
						.hash = s->got, .ttl = ttl });
		s->got = 0;
	} else {
		enum role role = r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
				 is_str(r->element[0], "master") ? ROLE_MASTER : ROLE_REPLICA;
		q_push(&s->sq, (struct q_item){ .kind = Q_ROLE_MARK, .role = role });
	}
	send_cmd(w, si, s->sub, "PING");
}

static bool flush(redisContext *c)
{
	int done = 0;
	while (!done)
		if (redisBufferWrite(c, &done) != REDIS_OK)
			return false;
	return true;
}

/* Read what @c has; false when the connection is gone. */
static bool drain_replies(struct watcher *w, int si, redisContext *c, bool sub)
{
	redisReply *r = NULL;

	if (redisBufferRead(c) != REDIS_OK)
		return false;
	for (;;) {
		if (redisGetReplyFromReader(c, (void **)&r) != REDIS_OK)
			return false;
		if (!r)
			return true;
		if (sub)
			on_sub(w, si, r);
		else
			on_cmd(w, si, r);
		freeReplyObject(r);
		r = NULL;
	}
}

static void __attribute__((noreturn)) watch_loop(struct watcher *w)
{
	struct lb_keywatch_log *log = w->log;
	bool drain_sent = false;
	int64_t drain_until = 0;

	for (;;) {
		int64_t now = lb_now_ns();
		int watched = 0;
		for (int i = 0; i < w->n; i++) {
			struct srv *s = &w->s[i];
			if (!s->sub && now >= s->next_try && !drain_sent)
				setup(w, i);
			watched += s->ever;
			if (s->sub && s->cfg.role_check && !s->role_out && now >= s->next_role &&
			    !drain_sent) {
				send_cmd(w, i, s->cmd, "ROLE");
				q_push(&s->cq, (struct q_item){ .kind = Q_ROLE });
				s->role_out = true;
				s->next_role = now + ROLE_EVERY_NS;
			}
		}
		if (watched == w->n)
			atomic_store(&log->ready, 1);
		else if (log->failure[0] && !atomic_load(&log->ready))
			atomic_store(&log->failed, 1);
		if (atomic_load(&log->drain) && !drain_sent) {
			for (int i = 0; i < w->n; i++)
				if (w->s[i].sub) {
					send_cmd(w, i, w->s[i].sub, "PING");
					q_push(&w->s[i].sq, (struct q_item){ .kind = Q_DRAIN });
				}
			drain_sent = true;
			drain_until = now + 2 * LB_NS_PER_S;
		}
		struct pollfd pf[2 * LB_KEYWATCH_MAX_SERVERS];
		int who[2 * LB_KEYWATCH_MAX_SERVERS], np = 0;
		bool idle = true;
		for (int i = 0; i < w->n; i++) {
			struct srv *s = &w->s[i];
			if (!s->sub)
				continue;
			if (!flush(s->cmd) || !flush(s->sub)) {
				disconnect(w, i);
				continue;
			}
			idle = idle && q_empty(&s->cq) && q_empty(&s->sq);
			pf[np] = (struct pollfd){ .fd = s->sub->fd, .events = POLLIN };
			who[np++] = 2 * i;
			pf[np] = (struct pollfd){ .fd = s->cmd->fd, .events = POLLIN };
			who[np++] = 2 * i + 1;
		}
		if (drain_sent && !atomic_load(&log->done) && (idle || now >= drain_until))
			atomic_store(&log->done, 1);
		if (poll(pf, (nfds_t)np, 5) <= 0)
			continue;
		for (int k = 0; k < np; k++) {
			int i = who[k] / 2;
			struct srv *s = &w->s[i];
			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)) || !s->sub)
				continue;
			if (!drain_replies(w, i, who[k] % 2 ? s->cmd : s->sub, who[k] % 2 == 0))
				disconnect(w, i);
		}
	}
}

static void run_watcher(struct lb_keywatch *kw, const struct lb_keywatch_keys *keys)
{
	static struct watcher w;
	size_t size = 16;

	w.log = kw->log;
	w.keys = keys;
	w.n = kw->n;
	while (size < 4 * (size_t)keys->n)
		size *= 2;
	w.mask = size - 1;
	w.table = malloc(sizeof(*w.table) * size);
	if (!w.table)
		_exit(1);
	for (size_t i = 0; i < size; i++)
		w.table[i] = -1;
	for (int i = 0; i < keys->n; i++) {
		size_t h = name_hash(keys->names[i], strlen(keys->names[i])) & w.mask;
		while (w.table[h] >= 0)
			h = (h + 1) & w.mask;
		w.table[h] = i;
		if (keys->key_of[i] + 1 > w.n_keys)
			w.n_keys = keys->key_of[i] + 1;
	}
	for (int i = 0; i < w.n; i++) {
		w.s[i].cfg = kw->srv[i];
		w.s[i].last = malloc(sizeof(size_t) * (size_t)(w.n_keys ? w.n_keys : 1));
		w.s[i].last_set = malloc(sizeof(size_t) * (size_t)(w.n_keys ? w.n_keys : 1));
		if (!w.s[i].last || !w.s[i].last_set)
			_exit(1);
		for (int k = 0; k < w.n_keys; k++)
			w.s[i].last[k] = w.s[i].last_set[k] = SIZE_MAX;
	}
	watch_loop(&w);
}

static size_t capacity(double duration_s)
{
	const char *env = getenv("LOCKBENCH_KEY_EVENTS_MAX");
	int64_t cap, most = LOG_BUDGET_BYTES / (int64_t)sizeof(struct lb_key_event);

	if (env && lb_parse_i64(env, 1, most, &cap))
		return (size_t)cap;
	/* far above what a run makes: a set and a del per section, a few
	 * thousand sections a second on every lock node */
	cap = (int64_t)((duration_s + 30) * 200000);
	return (size_t)(cap < most ? cap : most);
}

/* Map the log and fork the watcher, which runs @body (it never returns);
 * wait until it says ready (within 5 s). */
static int start_body(struct lb_keywatch *w, double duration_s, lb_keywatch_body body,
		      const void *arg, const char *what, char *why, size_t len)
{
	size_t cap = capacity(duration_s);

	w->log_bytes = sizeof(*w->log) + cap * sizeof(struct lb_key_event);
	w->log = mmap(NULL, w->log_bytes, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (w->log == MAP_FAILED) {
		w->log = NULL;
		snprintf(why, len, "cannot map %zu bytes for the key events: %s", w->log_bytes,
			 strerror(errno));
		return LB_ESYS;
	}
	w->log->cap = cap;
	pid_t pid = lb_fork_helper(what);
	if (pid < 0) {
		snprintf(why, len, "cannot fork %s", what);
		return (int)pid;
	}
	if (pid == 0) {
		/* the parent decides when to stop: a Ctrl-C to the process group must
		 * not end the watch before the parent has read what was sent */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		body(w, arg);
		_exit(0);
	}
	w->pid = pid;
	int64_t until = lb_now_ns() + 5 * LB_NS_PER_S;
	while (!atomic_load(&w->log->ready) && !atomic_load(&w->log->failed) && lb_now_ns() < until &&
	       waitpid(pid, NULL, WNOHANG) == 0)
		lb_sleep_ns(LB_NS_PER_MS);
	if (atomic_load(&w->log->ready))
		return 0;
	snprintf(why, len, "the lock servers could not be watched (%s)",
		 w->log->failure[0] ? w->log->failure : "no answer within 5 s");
	lb_keywatch_stop(w);
	return LB_EREDIS;
}

static void redis_body(struct lb_keywatch *w, const void *keys)
{
	run_watcher(w, keys);
}

int lb_keywatch_start(struct lb_keywatch *w, const struct lb_keywatch_server *srv, int n,
		      const struct lb_keywatch_keys *keys, double duration_s, char *why, size_t len)
{
	memset(w, 0, sizeof(*w));
	if (n < 1 || n > LB_KEYWATCH_MAX_SERVERS || keys->n < 1) {
		snprintf(why, len, "%d servers to watch: at most %d", n, LB_KEYWATCH_MAX_SERVERS);
		return LB_EINVAL;
	}
	w->n = n;
	memcpy(w->srv, srv, sizeof(*srv) * (size_t)n);
	return start_body(w, duration_s, redis_body, keys, "the key watcher", why, len);
}

int lb_keywatch_start_with(struct lb_keywatch *w, const struct lb_keywatch_server *srv, int n,
			   double duration_s, lb_keywatch_body body, const void *arg,
			   const char *what, char *why, size_t len)
{
	memset(w, 0, sizeof(*w));
	if (n < 1 || n > LB_KEYWATCH_MAX_SERVERS) {
		snprintf(why, len, "%d servers to watch: at most %d", n, LB_KEYWATCH_MAX_SERVERS);
		return LB_EINVAL;
	}
	w->n = n;
	memcpy(w->srv, srv, sizeof(*srv) * (size_t)n);
	return start_body(w, duration_s, body, arg, what, why, len);
}

bool lb_keywatch_put(struct lb_keywatch *w, const struct lb_key_event *e)
{
	struct lb_keywatch_log *log = w->log;
	size_t i = atomic_load(&log->n);

	if (atomic_load(&log->full))
		return false;
	if (i == log->cap) {
		atomic_store(&log->full, 1);
		return false;
	}
	log->ev[i] = *e;
	log->ev[i].flags = 0;
	atomic_store(&log->n, i + 1);
	return true;
}

void lb_keywatch_say(struct lb_keywatch *w, enum lb_keywatch_state st, const char *failure)
{
	if (st == LB_KW_READY)
		atomic_store(&w->log->ready, 1);
	else if (st == LB_KW_DONE)
		atomic_store(&w->log->done, 1);
	else {
		snprintf(w->log->failure, sizeof(w->log->failure), "%s", failure ? failure : "");
		atomic_store(&w->log->failed, 1);
	}
}

bool lb_keywatch_draining(const struct lb_keywatch *w)
{
	return atomic_load(&w->log->drain) != 0;
}

int lb_keywatch_start_run(struct lb_keywatch *w, const struct lb_keywatch_server *srv, int n,
			  const struct lock_strategy *s, const char *prefix, int keys,
			  double duration_s, char *why, size_t len)
{
	const struct lb_adapter_def *def = lb_strategy_is_external(s) ? lb_adapter_def_of(s) : NULL;
	const char *at = def ? strstr(def->outside_key, "KEY") : NULL;
	int per = at ? 2 : 1, k = 0, rc = LB_ENOMEM;
	char (*name)[256] = calloc((size_t)(keys * per), sizeof(*name));
	const char **names = calloc((size_t)(keys * per), sizeof(*names));
	int *key_of = calloc((size_t)(keys * per), sizeof(*key_of));

	memset(w, 0, sizeof(*w));
	for (int i = 0; name && names && key_of && i < keys; i++) {
		snprintf(name[k], sizeof(name[k]), "%slock:%d", prefix, i);
		names[k] = name[k];
		key_of[k++] = i;
		if (at) {
			snprintf(name[k], sizeof(name[k]), "%.*s%slock:%d%s", (int)(at - def->outside_key),
				 def->outside_key, prefix, i, at + 3);
			names[k] = name[k];
			key_of[k++] = i;
		}
	}
	struct lb_keywatch_keys kk = { names, key_of, k };
	if (k == 0)
		snprintf(why, len, "out of memory");
	else
		rc = lb_keywatch_start(w, srv, n, &kk, duration_s, why, len);
	free(name); /* the watcher has its copy */
	free(names);
	free(key_of);
	return rc;
}

uint64_t lb_keywatch_commands(const struct lb_keywatch *w, int port)
{
	uint64_t n = 0;

	for (int i = 0; w->log && i < w->n; i++)
		if (port > 0 && (w->srv[i].port == port || w->srv[i].front == port))
			n += atomic_load(&w->log->cmds[i]);
	return n;
}

int lb_keywatch_finish(struct lb_keywatch *w, int64_t t0_ns, struct lb_key_event **out,
		       size_t *n, char *why, size_t len)
{
	*out = NULL;
	*n = 0;
	if (!w->log || w->pid <= 0) {
		snprintf(why, len, "the key watcher is not running");
		return LB_EINVAL;
	}
	atomic_store(&w->log->drain, 1);
	int64_t until = lb_now_ns() + 3 * LB_NS_PER_S;
	while (!atomic_load(&w->log->done) && lb_now_ns() < until && waitpid(w->pid, NULL, WNOHANG) == 0)
		lb_sleep_ns(LB_NS_PER_MS);
	if (!atomic_load(&w->log->done)) {
		snprintf(why, len, "the key watcher did not finish reading the servers");
		return LB_ETIMEOUT;
	}
	size_t total = atomic_load(&w->log->n);
	if (atomic_load(&w->log->full)) {
		snprintf(why, len, "the key-event log filled at %zu events (LOCKBENCH_KEY_EVENTS_MAX, or "
			 "a longer run than it was made for): the count would be a lower bound", total);
		return LB_ENOMEM;
	}
	struct lb_key_event *v = malloc(sizeof(*v) * (total ? total : 1));
	if (!v) {
		snprintf(why, len, "out of memory");
		return LB_ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < total; i++) {
		const struct lb_key_event *e = &w->log->ev[i];
		if (e->flags & (EV_PENDING | EV_DROPPED))
			continue; /* a replica's replay, or a role never known */
		v[k] = *e;
		v[k].t_ns = e->t_ns > t0_ns ? e->t_ns - t0_ns : 0;
		v[k++].flags = 0;
	}
	*out = v;
	*n = k;
	return 0;
}

int lb_keywatch_peek(const struct lb_keywatch *w, size_t i, struct lb_key_event *out)
{
	if (!w->log || i >= atomic_load(&w->log->n))
		return 0;
	*out = w->log->ev[i];
	return out->flags & (EV_PENDING | EV_DROPPED) ? -1 : 1;
}

void lb_keywatch_stop(struct lb_keywatch *w)
{
	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
		lb_signals_untrack_child(w->pid);
		w->pid = 0;
	}
	if (w->log)
		munmap(w->log, w->log_bytes);
	w->log = NULL;
}
