/*
 * node.c - talking to one Redis node: its address (a URL), connecting and
 * reconnecting, commands, and what a reply means. The harness and the
 * strategies both use it; plumbing.c builds the recipes' shared helpers on it.
 */
#include "node.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lb_node_parse_url(const char *url, struct lb_node *n)
{
	const char *p = url, *at, *colon;
	char *end;
	long port;

	memset(n, 0, sizeof(*n));
	n->timeout_ms = 2000;
	if (!strncmp(p, "redis://", 8))
		p += 8;
	at = strrchr(p, '@');
	if (at) {
		const char *sep = memchr(p, ':', (size_t)(at - p));
		if (!sep || (size_t)(sep - p) >= sizeof(n->user) ||
		    (size_t)(at - sep - 1) >= sizeof(n->pass))
			return LB_EINVAL;
		memcpy(n->user, p, (size_t)(sep - p));
		memcpy(n->pass, sep + 1, (size_t)(at - sep - 1));
		p = at + 1;
	}
	colon = strrchr(p, ':');
	if (!colon || colon == p || (size_t)(colon - p) >= sizeof(n->host))
		return LB_EINVAL;
	memcpy(n->host, p, (size_t)(colon - p));
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || port < 1 || port > 65535)
		return LB_EINVAL;
	n->port = (int)port;
	return 0;
}

void lb_node_init_local(struct lb_node *n, int port, int64_t timeout_ms)
{
	memset(n, 0, sizeof(*n));
	strcpy(n->host, "127.0.0.1");
	n->port = port;
	n->timeout_ms = timeout_ms;
}

void lb_node_close(struct lb_node *n)
{
	if (n && n->ctx) {
		redisFree(n->ctx);
		n->ctx = NULL;
	}
}

static struct timeval ms_tv(int64_t ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	return tv;
}

void lb_node_set_timeout(struct lb_node *n, int64_t ms)
{
	if (n->ctx)
		redisSetTimeout(n->ctx, ms_tv(ms));
}

/* A comma-separated list of redis:// URLs into @out: how many (at least one,
 * at most @max), or LB_EINVAL. */
static int parse_addrs(const char *urls, struct lb_addr *out, int max)
{
	char buf[512], *save = NULL;
	int n = 0;

	if (strlen(urls) >= sizeof(buf))
		return LB_EINVAL;
	snprintf(buf, sizeof(buf), "%s", urls);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		struct lb_node one;
		if (n == max || lb_node_parse_url(t, &one) < 0 || strlen(one.host) >= sizeof(out[0].host))
			return LB_EINVAL;
		memcpy(out[n].host, one.host, strlen(one.host) + 1); /* fits: checked */
		out[n++].port = one.port;
	}
	return n ? n : LB_EINVAL;
}

int lb_node_use_sentinels(struct lb_node *n, const char *urls, const char *master)
{
	if (!master[0] || strlen(master) >= sizeof(n->master))
		return LB_EINVAL;
	int got = parse_addrs(urls, n->sentinel, LB_MAX_SENTINELS);
	if (got < 0)
		return got;
	n->n_sentinels = got;
	snprintf(n->master, sizeof(n->master), "%s", master);
	return 0;
}

int lb_node_use_cluster(struct lb_node *n, const char *urls, int slot)
{
	if (slot < 0 || slot > 16383)
		return LB_EINVAL;
	int got = parse_addrs(urls, n->seed, LB_MAX_SEEDS);
	if (got < 0)
		return got;
	n->n_seeds = got;
	n->slot = slot;
	return 0;
}

int lb_key_slot(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len), *close;
	uint16_t crc = 0;

	/* the hash tag: from the first '{' to the next '}', if not empty */
	if (open && (close = memchr(open + 1, '}', len - (size_t)(open + 1 - key))) &&
	    close > open + 1) {
		key = open + 1;
		len = (size_t)(close - key);
	}
	for (size_t i = 0; i < len; i++) {
		crc ^= (uint16_t)((unsigned char)key[i] << 8);
		for (int b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
	}
	return crc & 16383;
}

/* A connection to @host:@port from the node's source address, if it has one
 * (hiredis 0.14 has no blocking connect with a source address: the socket is
 * connected here, within the timeout, and handed to hiredis). NULL on failure. */
static redisContext *connect_from(const struct lb_node *n, const char *host, int port)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET,
								    .sin_port = htons((uint16_t)port) };
	struct pollfd pf;
	int fd, err = 0, one = 1;
	socklen_t len = sizeof(err);

	if (!n->source[0] || inet_pton(AF_INET, n->source, &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, host, &dst.sin_addr) != 1)
		return redisConnectWithTimeout(host, port, ms_tv(n->timeout_ms));
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return NULL;
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0)
		goto fail;
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		if (errno != EINPROGRESS)
			goto fail;
		pf = (struct pollfd){ .fd = fd, .events = POLLOUT };
		if (poll(&pf, 1, (int)n->timeout_ms) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0)
			goto fail;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		goto fail;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	redisContext *c = redisConnectFd(fd);
	if (!c || c->err) {
		if (c)
			redisFree(c); /* closes fd */
		return NULL;
	}
	return c;
fail:
	close(fd);
	return NULL;
}

/* Ask Sentinel @i where the primary is: host and port. 0 or LB_EREDIS. */
static int ask_sentinel(struct lb_node *n, int i)
{
	redisContext *c = connect_from(n, n->sentinel[i].host, n->sentinel[i].port);
	redisReply *r = NULL;

	if (c && !c->err && redisSetTimeout(c, ms_tv(n->timeout_ms)) == REDIS_OK)
		r = redisCommand(c, "SENTINEL get-master-addr-by-name %s", n->master);
	bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
		  r->element[0]->type == REDIS_REPLY_STRING &&
		  r->element[1]->type == REDIS_REPLY_STRING && strlen(r->element[0]->str) < sizeof(n->host);
	if (ok) {
		snprintf(n->host, sizeof(n->host), "%s", r->element[0]->str);
		n->port = atoi(r->element[1]->str);
		n->lookups++;
	}
	if (r)
		freeReplyObject(r);
	if (c)
		redisFree(c);
	return ok ? 0 : LB_EREDIS;
}

static int connect_once(struct lb_node *n);
static bool is_primary(struct lb_node *n);

/* Through the Sentinels: ask each in turn, and keep the first answer that
 * leads to a server which says it is the primary (one Sentinel may not have
 * learnt of a failover yet, or name a server that is down). */
static int connect_via_sentinels(struct lb_node *n)
{
	for (int i = 0; i < n->n_sentinels; i++) {
		if (ask_sentinel(n, i) < 0)
			continue;
		if (connect_once(n) == 0 && is_primary(n))
			return 0;
		lb_node_close(n);
	}
	return LB_EREDIS;
}

/* "host:port" at the end of a MOVED or ASK reply ("MOVED 3999 127.0.0.1:6381"). */
static bool redirect_target(const char *msg, char *host, size_t len, int *port)
{
	const char *sp = strrchr(msg, ' '), *colon = sp ? strrchr(sp, ':') : NULL;

	if (!colon || (size_t)(colon - sp - 1) >= len || colon == sp + 1)
		return false;
	memcpy(host, sp + 1, (size_t)(colon - sp - 1));
	host[colon - sp - 1] = '\0';
	*port = atoi(colon + 1);
	return *port > 0 && *port < 65536;
}

/* Through the seeds: the first that answers CLUSTER SLOTS names the primary
 * of our slot (a seed may be down, or behind a partition: the next one).
 * The one that answered is asked first next time, so a seed that does not
 * answer costs one timeout, not one per lookup. */
static int connect_via_cluster(struct lb_node *n)
{
	for (int tried = 0; tried < n->n_seeds; tried++) {
		int i = (n->seed_at + tried) % n->n_seeds;
		redisContext *c = connect_from(n, n->seed[i].host, n->seed[i].port);
		redisReply *r = NULL;
		bool found = false;
		if (c && !c->err && redisSetTimeout(c, ms_tv(n->timeout_ms)) == REDIS_OK)
			r = redisCommand(c, "CLUSTER SLOTS");
		/* [[start, end, [host, port, id], replicas...], ...] */
		for (size_t k = 0; r && r->type == REDIS_REPLY_ARRAY && k < r->elements && !found; k++) {
			const redisReply *e = r->element[k];
			if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
			    e->element[0]->type != REDIS_REPLY_INTEGER ||
			    e->element[1]->type != REDIS_REPLY_INTEGER ||
			    e->element[0]->integer > n->slot || e->element[1]->integer < n->slot)
				continue;
			const redisReply *m = e->element[2];
			if (m->type == REDIS_REPLY_ARRAY && m->elements >= 2 &&
			    m->element[0]->type == REDIS_REPLY_STRING &&
			    m->element[1]->type == REDIS_REPLY_INTEGER &&
			    strlen(m->element[0]->str) < sizeof(n->host)) {
				snprintf(n->host, sizeof(n->host), "%s", m->element[0]->str);
				n->port = (int)m->element[1]->integer;
				found = true;
			}
		}
		if (r)
			freeReplyObject(r);
		if (c)
			redisFree(c);
		if (found) {
			n->seed_at = i;
			n->lookups++;
			if (connect_once(n) == 0)
				return 0;
		}
	}
	return LB_EREDIS;
}

/* Is the connected server a primary (ROLE)? A Sentinel may still name a
 * demoted one, or one it has not reconfigured yet. */
static bool is_primary(struct lb_node *n)
{
	redisReply *r = redisCommand(n->ctx, "ROLE");
	bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
		  r->element[0]->type == REDIS_REPLY_STRING && !strcmp(r->element[0]->str, "master");
	if (r)
		freeReplyObject(r);
	return ok;
}

int lb_node_connect(struct lb_node *n)
{
	if (n->blocked && atomic_load(n->blocked)) { /* partitioned: even an open connection */
		lb_node_close(n);
		snprintf(n->why, sizeof(n->why), "cut off by a partition");
		return LB_EREDIS;
	}
	if (n->ctx)
		return 0;
	if (n->n_sentinels > 0)
		return connect_via_sentinels(n);
	if (n->n_seeds > 0 && !n->redirected)
		return connect_via_cluster(n);
	n->redirected = false;
	if (n->follow_port && atomic_load(n->follow_port) > 0)
		n->port = atomic_load(n->follow_port);
	return connect_once(n);
}

/* Connect to host:port as they are now (and AUTH). */
static int connect_once(struct lb_node *n)
{
	redisReply *r;

	n->ctx = connect_from(n, n->host, n->port);
	if (!n->ctx || n->ctx->err) {
		snprintf(n->why, sizeof(n->why), "%s", n->ctx ? n->ctx->errstr : "cannot connect");
		goto fail;
	}
	if (redisSetTimeout(n->ctx, ms_tv(n->timeout_ms)) != REDIS_OK)
		goto fail;
	if (n->pass[0]) {
		r = n->user[0] ? redisCommand(n->ctx, "AUTH %s %s", n->user, n->pass)
			       : redisCommand(n->ctx, "AUTH %s", n->pass);
		bool ok = lb_reply_ok(r);
		snprintf(n->why, sizeof(n->why), "AUTH: %.100s", r && r->type == REDIS_REPLY_ERROR ?
			 r->str : "no answer");
		if (r)
			freeReplyObject(r);
		if (!ok)
			goto fail;
	}
	return 0;
fail:
	lb_node_close(n);
	return LB_EREDIS;
}

void lb_node_note_reply(struct lb_node *n, const redisReply *r)
{
	if (!r) { /* the context is dead: never reuse it */
		lb_node_close(n);
		return;
	}
	if (r->type != REDIS_REPLY_ERROR)
		return;
	if (!strncmp(r->str, "READONLY", 8)) {
		lb_node_close(n); /* a replica now (demoted): the next command looks again */
	} else if (n->n_seeds > 0 && !strncmp(r->str, "MOVED ", 6)) {
		lb_node_close(n); /* the slot is served elsewhere: go there */
		n->redirected = redirect_target(r->str, n->host, sizeof(n->host), &n->port);
	} else if (n->n_seeds > 0 && (!strncmp(r->str, "CLUSTERDOWN", 11) ||
				       !strncmp(r->str, "TRYAGAIN", 8))) {
		lb_node_close(n); /* ask the seeds again next time */
	}
}

static redisReply *checked(struct lb_node *n, void *reply)
{
	n->commands++;
	n->last = reply ? LB_SENT_REPLIED : LB_SENT_NO_REPLY;
	if (!reply)
		snprintf(n->why, sizeof(n->why), "%s", n->ctx && n->ctx->errstr[0] ? n->ctx->errstr :
			 "no reply");
	lb_node_note_reply(n, reply);
	return reply;
}

/* A command that could not be sent: no connection. */
static redisReply *not_sent(struct lb_node *n)
{
	n->last = LB_SENT_NOT;
	return NULL;
}

/* One formatted command on @c; the reply or NULL (the context is dead). */
static redisReply *roundtrip(redisContext *c, const char *cmd, size_t len)
{
	void *r = NULL;

	if (redisAppendFormattedCommand(c, cmd, len) != REDIS_OK || redisGetReply(c, &r) != REDIS_OK)
		return NULL;
	return r;
}

/* ASK: the slot is moving; this one command goes to the node named, after
 * ASKING, on a connection of its own. NULL if that node did not answer. */
static redisReply *asked(struct lb_node *n, const char *msg, const char *cmd, size_t len)
{
	struct lb_node to = *n;
	redisReply *r = NULL;

	to.ctx = NULL;
	to.n_seeds = 0;
	if (!redirect_target(msg, to.host, sizeof(to.host), &to.port) || connect_once(&to) < 0)
		return NULL;
	redisReply *a = redisCommand(to.ctx, "ASKING");
	if (lb_reply_ok(a))
		r = roundtrip(to.ctx, cmd, len);
	if (a)
		freeReplyObject(a);
	lb_node_close(&to);
	n->commands++;
	n->redirects++;
	return r;
}

/* A command in a cluster: sent where the slot is served, following a MOVED
 * (at most twice: a slot moves once per failover) or an ASK. */
static redisReply *cluster_cmd(struct lb_node *n, const char *cmd, size_t len)
{
	for (int hop = 0;; hop++) {
		if (lb_node_connect(n) < 0)
			return NULL;
		redisReply *r = checked(n, roundtrip(n->ctx, cmd, len));
		if (hop == 2 || !r || r->type != REDIS_REPLY_ERROR)
			return r;
		if (!strncmp(r->str, "MOVED ", 6) && n->redirected) {
			n->redirects++;
			freeReplyObject(r);
			continue;
		}
		if (!strncmp(r->str, "ASK ", 4)) {
			redisReply *a = asked(n, r->str, cmd, len);
			if (a) {
				freeReplyObject(r);
				return a;
			}
		}
		return r;
	}
}

redisReply *lb_node_cmd(struct lb_node *n, const char *fmt, ...)
{
	va_list ap;
	void *r;

	if (n->n_seeds > 0) {
		char *cmd = NULL;
		va_start(ap, fmt);
		int len = redisvFormatCommand(&cmd, fmt, ap);
		va_end(ap);
		r = len > 0 ? cluster_cmd(n, cmd, (size_t)len) : NULL;
		free(cmd);
		n->last = r ? LB_SENT_REPLIED : LB_SENT_NO_REPLY; /* the cluster's: at worst */
		return r;
	}
	if (lb_node_connect(n) < 0)
		return not_sent(n);
	va_start(ap, fmt);
	r = redisvCommand(n->ctx, fmt, ap);
	va_end(ap);
	return checked(n, r);
}

redisReply *lb_node_cmd_argv(struct lb_node *n, int argc, const char **argv, const size_t *argvlen)
{
	if (n->n_seeds > 0) {
		char *cmd = NULL;
		long long len = redisFormatCommandArgv(&cmd, argc, argv, argvlen);
		redisReply *r = len > 0 ? cluster_cmd(n, cmd, (size_t)len) : NULL;
		free(cmd);
		n->last = r ? LB_SENT_REPLIED : LB_SENT_NO_REPLY; /* the cluster's: at worst */
		return r;
	}
	if (lb_node_connect(n) < 0)
		return not_sent(n);
	return checked(n, redisCommandArgv(n->ctx, argc, argv, argvlen));
}

bool lb_reply_ok(const redisReply *r)
{
	return r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK");
}

bool lb_reply_nil(const redisReply *r) { return r && r->type == REDIS_REPLY_NIL; }
bool lb_reply_error(const redisReply *r) { return !r || r->type == REDIS_REPLY_ERROR; }

bool lb_reply_int(const redisReply *r, long long *out)
{
	if (!r || r->type != REDIS_REPLY_INTEGER)
		return false;
	*out = r->integer;
	return true;
}

bool lb_reply_str_eq(const redisReply *r, const char *s)
{
	return r && r->type == REDIS_REPLY_STRING && r->len == strlen(s) &&
	       !memcmp(r->str, s, r->len);
}
