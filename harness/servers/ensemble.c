/*
 * ensemble.c - the user's etcd cluster or ZooKeeper ensemble (ensemble.h):
 * parsed, asked before the run, cleaned after it.
 */
#include "ensemble.h"
#include "node.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ASK_MS 2000            /* each request to a member */
#define ZK_ROOT "/lockbench"   /* kazoo_lock.py's parent of every lock path */

/* ZooKeeper's opcodes and error codes (its jute protocol, ZooDefs.OpCode, KeeperException.Code) */
enum { ZK_CREATE = 1, ZK_DELETE = 2, ZK_EXISTS = 3, ZK_GETDATA = 4, ZK_CHILDREN = 8,
       ZK_CLOSE = -11 };
/* as zk_call returns them: positive, apart from lockbench's negative statuses */
enum { ZK_NONODE = 101, ZK_NOAUTH = 102, ZK_NODEEXISTS = 110, ZK_NOTEMPTY = 111,
       ZK_BADARGUMENTS = 8 }; /* ZooKeeper's code for a path it cannot take (negated: -8) */

/* ---- addresses ---- */

static int parse_one(enum lb_consensus_kind kind, const char *url, struct lb_member *m, char *why,
		     size_t len)
{
	const char *p = url;
	bool etcd = kind == LB_CONSENSUS_ETCD;

	m->tls = etcd && !strncasecmp(p, "https://", 8);
	if (etcd && !m->tls && strncasecmp(p, "http://", 7)) {
		snprintf(why, len, "expected http://HOST[:PORT] or https://HOST[:PORT], a member's "
			 "client URL");
		return LB_EINVAL;
	}
	if (etcd)
		p += m->tls ? 8 : 7;
	else if (strstr(p, "://")) {
		snprintf(why, len, "expected HOST[:PORT] (a server's client port), without a scheme");
		return LB_EINVAL;
	}
	size_t k = strlen(p);
	if (k && p[k - 1] == '/' && etcd)
		k--;
	if (memchr(p, '@', k) || memchr(p, '/', k) || memchr(p, '?', k) || memchr(p, '#', k)) {
		snprintf(why, len, "%s", memchr(p, '@', k) ? "a user or password in the address is "
			 "not supported: lockbench's adapters do not log in" : etcd ?
			 "a path or options after the address are not supported" :
			 "a chroot (/path) or options after the address are not supported");
		return LB_EINVAL;
	}
	char redis[300];
	struct lb_node n;
	if (k + 9 > sizeof(redis)) {
		snprintf(why, len, "the address is longer than %zu bytes", sizeof(redis) - 9);
		return LB_EINVAL;
	}
	snprintf(redis, sizeof(redis), "redis://%.*s", (int)k, p); /* its host:port rules */
	if (lb_node_parse_url(redis, &n, why, len) < 0)
		return LB_EINVAL;
	if (strlen(n.host) >= sizeof(m->host)) {
		snprintf(why, len, "the host name is longer than %zu bytes", sizeof(m->host) - 1);
		return LB_EINVAL;
	}
	strcpy(m->host, n.host);
	m->port = n.port_given ? n.port : etcd ? 2379 : 2181;
	return 0;
}

int lb_ensemble_parse(enum lb_consensus_kind kind, const char *list, struct lb_ensemble *e,
		      char *why, size_t len)
{
	const char *opt = kind == LB_CONSENSUS_ETCD ? "--etcd" : "--zookeeper";
	size_t at = 0, total = strlen(list);

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	if (!total || total > 2047) {
		snprintf(why, len, "%s: expected %s, at most 2047 bytes", opt,
			 kind == LB_CONSENSUS_ETCD ? "URL[,URL...]" : "HOST:PORT[,HOST:PORT...]");
		return LB_EINVAL;
	}
	while (at <= total) {
		size_t k = strcspn(list + at, ",");
		char raw[2048], one[2048], w[256];
		snprintf(raw, sizeof(raw), "%.*s", (int)k, list + at);
		lb_url_list_masked(raw, one, sizeof(one)); /* a message never shows a password */
		if (!k) {
			snprintf(why, len, "%s: an empty address in the list", opt);
			return LB_EINVAL;
		}
		if (e->n == LB_MAX_NODES) {
			snprintf(why, len, "%s: at most %d members", opt, LB_MAX_NODES);
			return LB_EINVAL;
		}
		if (parse_one(kind, raw, &e->m[e->n], w, sizeof(w)) < 0) {
			snprintf(why, len, "%s '%.300s': %s", opt, one, w);
			return LB_EINVAL;
		}
		if (e->n && e->m[e->n].tls != e->m[0].tls) {
			snprintf(why, len, "%s '%.300s': http:// and https:// members mixed (member 0 "
				 "is %s://): one cluster's client URLs share a scheme", opt, one,
				 e->m[0].tls ? "https" : "http");
			return LB_EINVAL;
		}
		for (int i = 0; i < e->n; i++)
			if (e->m[i].port == e->m[e->n].port && !strcmp(e->m[i].host, e->m[e->n].host)) {
				snprintf(why, len, "%s '%.300s': given twice (members %d and %d)", opt,
					 one, i, e->n);
				return LB_EINVAL;
			}
		e->n++;
		at += k + 1;
	}
	return 0;
}

void lb_member_name(const struct lb_ensemble *e, int i, char *out, size_t len)
{
	bool v6 = strchr(e->m[i].host, ':') != NULL;

	snprintf(out, len, "%s %s %d (%s%s%s%s:%d)", lb_consensus_shown(e->kind),
		 e->kind == LB_CONSENSUS_ETCD ? "member" : "server", i,
		 e->kind != LB_CONSENSUS_ETCD ? "" : e->m[i].tls ? "https://" : "http://",
		 v6 ? "[" : "", e->m[i].host,
		 v6 ? "]" : "", e->m[i].port);
}

void lb_zk_quoted(const char *prefix, char *out, size_t len)
{
	size_t o = 0;

	for (const unsigned char *c = (const unsigned char *)prefix; *c && o + 4 < len; c++) {
		if (isalnum(*c) || strchr("_.-~", *c))
			out[o++] = (char)*c;
		else
			o += (size_t)snprintf(out + o, len - o, "%%%02X", *c);
	}
	out[o] = '\0';
}

/* ---- a connection with a deadline on every step ---- */


/* A connection to @m, or a negative status with the cause in @why. */
static int dial(struct lb_member *m, int64_t deadline, char *why, size_t len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV }, *res = NULL;
	char port[12];
	int fd = -1, err = 0;

	/* an https:// member: through the tunnel in front of it (which checks its
	 * certificate); where the relay would reach it is not where this connects */
	snprintf(port, sizeof(port), "%d", m->via_port > 0 ? m->via_port : m->port);
	int g = getaddrinfo(m->via_port > 0 ? "127.0.0.1" : m->host, port, &hints, &res);
	if (g) {
		snprintf(why, len, "%s", g == EAI_NONAME || g == EAI_NODATA || g == EAI_FAIL ?
			 "unknown host: the name does not resolve" : gai_strerror(g));
		return LB_ENOTHERE;
	}
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		socklen_t el = sizeof(err);
		if (fd < 0)
			err = errno;
		else if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS)
			err = errno;
		else if (lb_wait_fd(fd, POLLOUT, deadline) < 0)
			err = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
			err = errno;
		if (err && fd >= 0) {
			close(fd);
			fd = -1;
		} else if (fd >= 0 && m->via_port <= 0 && a->ai_addrlen <= sizeof(m->addr)) {
			memcpy(&m->addr, a->ai_addr, a->ai_addrlen);
			m->addr_len = a->ai_addrlen;
		}
	}
	freeaddrinfo(res);
	if (fd >= 0)
		return fd;
	if (err == ECONNREFUSED)
		snprintf(why, len, "connection refused: nothing listens there");
	else if (err == ETIMEDOUT)
		snprintf(why, len, "no answer within %d ms (connect timed out)", ASK_MS);
	else
		snprintf(why, len, "cannot connect: %s", strerror(err));
	return LB_ENOTHERE;
}

static int send_all(int fd, const void *buf, size_t n, int64_t deadline)
{
	size_t sent = 0;

	while (sent < n) {
		ssize_t k = send(fd, (const char *)buf + sent, n - sent, MSG_NOSIGNAL);
		if (k > 0)
			sent += (size_t)k;
		else if (k < 0 && errno != EAGAIN && errno != EINTR)
			return LB_ENOTHERE;
		else if (lb_wait_fd(fd, POLLOUT, deadline) < 0)
			return LB_ETIMEOUT;
	}
	return 0;
}

/* Exactly @n bytes (@upto: at most, until the peer closes): the count read. */
static int recv_n(int fd, void *buf, size_t n, bool upto, int64_t deadline)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = recv(fd, (char *)buf + got, n - got, 0);
		if (k > 0)
			got += (size_t)k;
		else if (k == 0)
			return upto ? (int)got : LB_ENOTHERE;
		else if (errno != EAGAIN && errno != EINTR)
			return LB_ENOTHERE;
		else if (lb_wait_fd(fd, POLLIN, deadline) < 0)
			return LB_ETIMEOUT;
	}
	return (int)got;
}

/* ---- etcd: its JSON gateway ---- */

/* POST @body to @path of member @m: the HTTP status with the body in @out,
 * or a negative status with the cause in @why. */
static int etcd_post(struct lb_member *m, const char *path, const char *body, char *out,
		     size_t cap, char *why, size_t len)
{
	int64_t deadline = lb_now_ns() + ASK_MS * LB_NS_PER_MS;
	char req[2048], resp[16384];
	int fd = dial(m, deadline, why, len), status = 0;

	if (fd < 0)
		return fd;
	int n = snprintf(req, sizeof(req), "POST %s HTTP/1.0\r\nHost: %s:%d\r\nContent-Type: "
			 "application/json\r\nContent-Length: %zu\r\n\r\n%s", path, m->host, m->port,
			 strlen(body), body);
	int rc = n > 0 && (size_t)n < sizeof(req) ? send_all(fd, req, (size_t)n, deadline) : LB_EINVAL;
	int got = rc < 0 ? rc : recv_n(fd, resp, sizeof(resp) - 1, true, deadline);
	close(fd);
	if (got < 0) {
		snprintf(why, len, "%s", got == LB_ETIMEOUT ? "no answer within 2000 ms (does the "
			 "cluster have a leader?)" : "the connection broke before an answer");
		return LB_ENOTHERE;
	}
	resp[got] = '\0';
	if (got == 0 && !m->tls) { /* etcd closes a plain request to its TLS port unanswered */
		snprintf(why, len, "it closed the connection without an answer (an https:// member "
			 "does so to plain HTTP: give https://%s:%d and --tls-ca FILE)", m->host, m->port);
		return LB_ENOTHERE;
	}
	const char *text = strstr(resp, "\r\n\r\n");
	if (got > 0 && (unsigned char)resp[0] == 0x15) {
		snprintf(why, len, "TLS: it answered with a TLS alert; it wants https://");
		return LB_ENOTHERE;
	}
	if (sscanf(resp, "HTTP/1.%*1[01] %3d", &status) != 1 || !text) {
		snprintf(why, len, "it does not answer as an etcd member (no HTTP answer to POST %s)",
			 path);
		return LB_ENOTHERE;
	}
	if (strstr(text, "HTTP request to an HTTPS server")) {
		snprintf(why, len, "TLS: it is an https:// endpoint: give https://%s:%d (and "
			 "--tls-ca FILE, the CA that signed its certificate)", m->host, m->port);
		return LB_ENOTHERE;
	}
	snprintf(out, cap, "%s", text + 4);
	return status;
}

/* "lb:1234abcd:" and its range end "lb:1234abcd;" in base64, for a JSON body. */
static void etcd_range(const char *prefix, char *key, char *end, size_t cap)
{
	char e[64];

	snprintf(e, sizeof(e), "%s", prefix);
	size_t n = strlen(e);
	if (n)
		e[n - 1] = (char)(e[n - 1] + 1); /* the prefix ends in ':' */
	lb_base64(prefix, strlen(prefix), key, cap);
	lb_base64(e, n, end, cap);
}

static int etcd_check_member(struct lb_ensemble *e, int i, const char *prefix, char *cluster0)
{
	char out[4096], why[300], name[200], id[32], body[400], key[64], end[64];
	int st = etcd_post(&e->m[i], "/v3/maintenance/status", "{}", out, sizeof(out), why,
			   sizeof(why));

	lb_member_name(e, i, name, sizeof(name));
	if (st >= 0 && st != 200)
		snprintf(why, sizeof(why), "POST /v3/maintenance/status: HTTP %d: %.200s", st, out);
	if (st >= 0 && st == 200 && !lb_json_field(out, "cluster_id", id, sizeof(id)))
		snprintf(why, sizeof(why), "it does not answer as an etcd member (no cluster_id in "
			 "its status)"), st = -1;
	if (st != 200) {
		lb_errorf("%s: %s", name, why);
		return LB_ENOTHERE;
	}
	if (i == 0)
		snprintf(cluster0, 32, "%s", id);
	else if (strcmp(cluster0, id)) {
		lb_errorf("%s: not a member of member 0's cluster (its cluster_id %s, member 0's %s)",
			  name, id, cluster0);
		return LB_ENOTHERE;
	}
	etcd_range(prefix, key, end, sizeof(key));
	snprintf(body, sizeof(body), "{\"key\":\"%s\",\"range_end\":\"%s\",\"count_only\":true}",
		 key, end);
	st = etcd_post(&e->m[i], "/v3/kv/range", body, out, sizeof(out), why, sizeof(why));
	if (st == 200)
		return 0;
	if (st > 0 && (strstr(out, "user name is empty") || strstr(out, "invalid auth token") ||
		       strstr(out, "permission denied")))
		lb_errorf("%s: authentication: etcd's auth is on (%.120s); lockbench's etcd adapters "
			  "do not log in", name, out);
	else if (st > 0)
		lb_errorf("%s: POST /v3/kv/range of the run's prefix: HTTP %d: %.200s", name, st, out);
	else
		lb_errorf("%s: POST /v3/kv/range of the run's prefix: %s", name, why);
	return LB_ENOTHERE;
}

/* ---- ZooKeeper: its client protocol, one session of lockbench's ---- */

struct zk {
	int fd;
	int xid;
	int64_t deadline;
	char why[200];
};

static size_t put32(unsigned char *b, int32_t v)
{
	uint32_t u = (uint32_t)v;
	b[0] = (unsigned char)(u >> 24), b[1] = (unsigned char)(u >> 16);
	b[2] = (unsigned char)(u >> 8), b[3] = (unsigned char)u;
	return 4;
}

static int32_t get32(const unsigned char *b)
{
	return (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
}

static size_t putstr(unsigned char *b, const char *s)
{
	size_t n = strlen(s);
	put32(b, (int32_t)n);
	memcpy(b + 4, s, n);
	return 4 + n;
}

/* One framed packet in: its length (at most @cap) or a negative status. */
static int zk_read(struct zk *z, unsigned char *buf, size_t cap)
{
	unsigned char len[4];

	if (recv_n(z->fd, len, 4, false, z->deadline) < 0)
		return LB_ENOTHERE;
	int32_t n = get32(len);
	if (n < 0 || (size_t)n > cap)
		return LB_EPROTO;
	return recv_n(z->fd, buf, (size_t)n, false, z->deadline) < 0 ? LB_ENOTHERE : n;
}

/* A session on @m: 0, or a negative status with the cause in z->why. */
static int zk_open(struct zk *z, struct lb_member *m)
{
	unsigned char req[64] = { 0 }, resp[256];
	size_t n = 4;

	memset(z, 0, sizeof(*z));
	z->deadline = lb_now_ns() + ASK_MS * LB_NS_PER_MS;
	if ((z->fd = dial(m, z->deadline, z->why, sizeof(z->why))) < 0)
		return z->fd;
	n += put32(req + n, 0);          /* protocolVersion */
	n += 8;                          /* lastZxidSeen 0 */
	n += put32(req + n, 10000);      /* timeOut, ms */
	n += 8;                          /* sessionId 0: a new one */
	n += put32(req + n, 16) + 16;    /* passwd, 16 zero bytes */
	req[n++] = 0;                    /* readOnly: no */
	put32(req, (int32_t)(n - 4));
	int got = send_all(z->fd, req, n, z->deadline) < 0 ? LB_ENOTHERE :
		  zk_read(z, resp, sizeof(resp));
	if (got < 0 || got < 16 || get32(resp + 4) <= 0) {
		snprintf(z->why, sizeof(z->why), "%s", got == LB_EPROTO ? "it does not answer as a "
			 "ZooKeeper server" : "it closed the session it was asked for: a server "
			 "without a quorum does not serve (or it is not ZooKeeper)");
		close(z->fd);
		z->fd = -1;
		return LB_ENOTHERE;
	}
	return 0;
}

/* Request @type with @body: ZooKeeper's error code, made positive (0: done), its reply's
 * body in @out (*@n bytes), or a negative lockbench status (z->why). */
static int zk_call(struct zk *z, int type, const unsigned char *body, size_t len,
		   unsigned char *out, size_t cap, size_t *n)
{
	unsigned char req[1200], resp[65536];

	if (len + 12 > sizeof(req))
		return LB_EINVAL;
	z->deadline = lb_now_ns() + ASK_MS * LB_NS_PER_MS;
	put32(req, (int32_t)(len + 8));
	put32(req + 4, ++z->xid);
	put32(req + 8, type);
	if (len)
		memcpy(req + 12, body, len);
	if (send_all(z->fd, req, len + 12, z->deadline) < 0) {
		snprintf(z->why, sizeof(z->why), "the connection broke");
		return LB_ENOTHERE;
	}
	for (;;) {
		int got = zk_read(z, resp, sizeof(resp));
		if (got < 16) {
			snprintf(z->why, sizeof(z->why), "%s", got == LB_EPROTO ? "an answer too long "
				 "or malformed" : "no answer within 2000 ms, or the connection broke");
			return got < 0 ? got : LB_EPROTO;
		}
		if (get32(resp) != z->xid)
			continue; /* a watch event or a ping: not the answer */
		size_t rest = (size_t)got - 16;
		if (out && rest > cap)
			return LB_EPROTO;
		if (out)
			memcpy(out, resp + 16, rest);
		if (n)
			*n = rest;
		return -get32(resp + 12);
	}
}

static void zk_close(struct zk *z)
{
	if (z->fd < 0)
		return;
	zk_call(z, ZK_CLOSE, NULL, 0, NULL, 0, NULL);
	close(z->fd);
	z->fd = -1;
}

/* exists, delete, create (persistent, world:anyone), getData: ZooKeeper's
 * error code or a negative status. */
static int zk_path_op(struct zk *z, int type, const char *path, unsigned char *out, size_t cap,
		      size_t *n)
{
	static const unsigned char acl[] = { 0, 0, 0, 1, 0, 0, 0, 31, 0, 0, 0, 5, 'w', 'o', 'r', 'l',
					      'd', 0, 0, 0, 6, 'a', 'n', 'y', 'o', 'n', 'e' };
	unsigned char b[1100];
	size_t k;

	if (strlen(path) > 1000)
		return LB_EINVAL;
	k = putstr(b, path);
	if (type == ZK_DELETE)
		k += put32(b + k, -1); /* any version */
	else if (type == ZK_CREATE) {
		k += put32(b + k, 0); /* no data */
		memcpy(b + k, acl, sizeof(acl));
		k += sizeof(acl);
		k += put32(b + k, 0); /* persistent */
	} else
		b[k++] = 0; /* no watch */
	return zk_call(z, type, b, k, out, cap, n);
}

/* The children of @path, each at names[i] (NUL-terminated, in @buf). */
static int zk_children(struct zk *z, const char *path, unsigned char *buf, size_t cap,
		       const char **names, int max, int *count)
{
	size_t n = 0, at = 4;
	int rc = zk_path_op(z, ZK_CHILDREN, path, buf, cap - 1, &n);

	*count = 0;
	if (rc != 0)
		return rc;
	if (n < 4)
		return LB_EPROTO;
	int32_t k = get32(buf);
	for (int32_t i = 0; i < k && *count < max; i++) {
		if (at + 4 > n)
			return LB_EPROTO;
		int32_t len = get32(buf + at);
		if (len < 0 || at + 4 + (size_t)len > n)
			return LB_EPROTO;
		memmove(buf + at, buf + at + 4, (size_t)len); /* room for the NUL before the next */
		buf[at + (size_t)len] = '\0';
		names[(*count)++] = (const char *)buf + at;
		at += 4 + (size_t)len;
	}
	return 0;
}

static const char *zk_code(int rc)
{
	return rc == ZK_NOAUTH ? "NOAUTH: its ACL does not let lockbench's session (no credentials) "
	       "do it" : rc == ZK_NONODE ? "NONODE" : rc == ZK_NOTEMPTY ? "NOTEMPTY" :
	       rc == ZK_NODEEXISTS ? "NODEEXISTS" : "an error";
}

/* Delete @path and what lies under it (kazoo's lock: two levels), at most
 * @depth levels down. 0, or the first error. */
static int zk_delete_tree(struct zk *z, const char *path, int depth)
{
	unsigned char buf[65536];
	const char *names[512];
	char child[1024];
	int n = 0, rc = depth > 0 ? zk_children(z, path, buf, sizeof(buf), names, 512, &n) : 0;

	if (rc == ZK_NONODE)
		return 0;
	for (int i = 0; rc == 0 && i < n; i++) {
		int w = snprintf(child, sizeof(child), "%s/%s", path, names[i]);
		if (w < 0 || (size_t)w >= sizeof(child))
			return ZK_BADARGUMENTS; /* never a cut path: it would name another znode */
		rc = zk_delete_tree(z, child, depth - 1);
	}
	if (rc == 0)
		rc = zk_path_op(z, ZK_DELETE, path, NULL, 0, NULL);
	return rc == ZK_NONODE ? 0 : rc;
}

/* Server @i: it serves a session and has server 0's membership; on server 0,
 * /lockbench made if absent, and a probe written and deleted under the run's
 * prefix (the ACL lets it). */
static int zk_check_member(struct lb_ensemble *e, int i, const char *prefix, char *config0,
			   size_t cap0)
{
	unsigned char cfg[4096];
	char name[200], q[96], probe[160];
	size_t n = 0;
	struct zk z;
	int rc;

	lb_member_name(e, i, name, sizeof(name));
	if (zk_open(&z, &e->m[i]) < 0) {
		lb_errorf("%s: %s", name, z.why);
		return LB_ENOTHERE;
	}
	rc = zk_path_op(&z, ZK_GETDATA, "/zookeeper/config", cfg, sizeof(cfg) - 1, &n);
	int32_t dlen = rc == 0 && n >= 4 ? get32(cfg) : -1;
	char *data = (char *)cfg + 4;
	if (rc == 0) {
		data[dlen > 0 && (size_t)dlen <= n - 4 ? dlen : 0] = '\0';
		for (char *c = data; *c; c++)
			*c = *c == '\n' ? ' ' : *c;
	}
	if (rc != 0) {
		lb_errorf("%s: getData /zookeeper/config: %s", name, rc < 0 ? z.why : zk_code(rc));
		rc = LB_ENOTHERE;
	} else if (e->n > 1 && !strstr(data, "server.")) {
		lb_errorf("%s: not a member of an ensemble: it serves alone (its /zookeeper/config "
			  "names no server)", name);
		rc = LB_ENOTHERE;
	} else if (i == 0) {
		snprintf(config0, cap0, "%s", data);
	} else if (strcmp(config0, data)) {
		lb_errorf("%s: not a member of server 0's ensemble (its members: %.200s; server "
			  "0's: %.200s)", name, data, config0);
		rc = LB_ENOTHERE;
	}
	if (rc == 0 && i == 0) {
		lb_zk_quoted(prefix, q, sizeof(q));
		snprintf(probe, sizeof(probe), ZK_ROOT "/%sprobe", q);
		int made = zk_path_op(&z, ZK_CREATE, ZK_ROOT, NULL, 0, NULL);
		e->root_made = made == 0;
		int wrote = made == 0 || made == ZK_NODEEXISTS ?
			    zk_path_op(&z, ZK_CREATE, probe, NULL, 0, NULL) : made;
		if (wrote == 0)
			wrote = zk_path_op(&z, ZK_DELETE, probe, NULL, 0, NULL);
		if (wrote != 0) {
			lb_errorf("%s: create %s: %s", name, made == 0 || made == ZK_NODEEXISTS ?
				  probe : ZK_ROOT, wrote < 0 ? z.why : zk_code(wrote));
			rc = LB_ENOTHERE;
		}
	}
	zk_close(&z);
	return rc;
}

int lb_ensemble_check(struct lb_ensemble *e, const char *prefix)
{
	char first[4096] = "";

	for (int i = 0; i < e->n; i++) {
		int rc = e->kind == LB_CONSENSUS_ETCD ?
			 etcd_check_member(e, i, prefix, first) :
			 zk_check_member(e, i, prefix, first, sizeof(first));
		if (rc < 0)
			return rc;
	}
	e->ready = true;
	return 0;
}

static void etcd_clean(struct lb_ensemble *e, const char *prefix)
{
	char key[64], end[64], body[300], out[1024], why[300] = "", name[200];

	etcd_range(prefix, key, end, sizeof(key));
	snprintf(body, sizeof(body), "{\"key\":\"%s\",\"range_end\":\"%s\"}", key, end);
	for (int i = 0; i < e->n; i++) {
		int st = etcd_post(&e->m[i], "/v3/kv/deleterange", body, out, sizeof(out), why,
				   sizeof(why));
		if (st == 200)
			return;
		if (st > 0)
			snprintf(why, sizeof(why), "HTTP %d: %.200s", st, out);
	}
	lb_member_name(e, e->n - 1, name, sizeof(name));
	lb_errorf("warning: the run's keys (%s*) could not be removed: no member took the delete "
		  "(%s: %s); `etcdctl del --prefix '%s'` removes them", prefix, name, why, prefix);
}

static void zk_clean(struct lb_ensemble *e, const char *prefix)
{
	unsigned char buf[65536];
	const char *names[4096];
	char q[96], path[1024], why[300] = "no server opened a session", name[200] = "";
	struct zk z;
	int n = 0, rc = LB_ENOTHERE;

	lb_zk_quoted(prefix, q, sizeof(q));
	for (int i = 0; i < e->n && rc < 0; i++) {
		lb_member_name(e, i, name, sizeof(name));
		if (zk_open(&z, &e->m[i]) < 0) {
			snprintf(why, sizeof(why), "%s", z.why);
			continue;
		}
		rc = zk_children(&z, ZK_ROOT, buf, sizeof(buf), names, 4096, &n);
		for (int k = 0; rc == 0 && k < n; k++) {
			if (strncmp(names[k], q, strlen(q)))
				continue; /* never anything but the run's own */
			snprintf(path, sizeof(path), ZK_ROOT "/%s", names[k]);
			rc = zk_delete_tree(&z, path, 3);
		}
		if (rc == ZK_NONODE)
			rc = 0;
		if (rc == 0 && e->root_made) { /* ours, if nobody else's is in it */
			int d = zk_path_op(&z, ZK_DELETE, ZK_ROOT, NULL, 0, NULL);
			if (d != 0 && d != ZK_NOTEMPTY && d != ZK_NONODE)
				rc = d;
		}
		if (rc != 0)
			snprintf(why, sizeof(why), "%s", rc < 0 ? z.why : zk_code(rc));
		zk_close(&z);
		if (rc > 0)
			break; /* the ensemble refused: another server would refuse too */
	}
	if (rc != 0)
		lb_errorf("warning: the run's znodes (" ZK_ROOT "/%s*) could not all be removed (%s: "
			  "%s); `deleteall " ZK_ROOT "/%s...` in zkCli removes them", q, name, why, q);
}

void lb_ensemble_clean(struct lb_ensemble *e, const char *prefix)
{
	if (e->kind == LB_CONSENSUS_ETCD)
		etcd_clean(e, prefix);
	else if (e->kind == LB_CONSENSUS_ZOOKEEPER)
		zk_clean(e, prefix);
}
