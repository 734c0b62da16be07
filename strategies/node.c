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
#include <ctype.h>
#include <stdarg.h>
#include <strings.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy @len bytes of @s into @out (@cap bytes), %XX decoded; false when it
 * does not fit, a %XX is broken, or it decodes to a NUL or a control byte. */
static bool url_decode(const char *s, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned c = (unsigned char)s[i];
		if (c == '%') {
			if (i + 2 >= len || !isxdigit((unsigned char)s[i + 1]) ||
			    !isxdigit((unsigned char)s[i + 2]))
				return false;
			char hex[3] = { s[i + 1], s[i + 2], '\0' };
			c = (unsigned)strtoul(hex, NULL, 16);
			i += 2;
		}
		if (c < 0x20 || c == 0x7f || o + 1 >= cap)
			return false;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return true;
}

static int url_fail(char *why, size_t len, const char *fmt, const char *arg)
{
	if (why && len)
		snprintf(why, len, fmt, arg);
	return LB_EINVAL;
}

/* "[user]:pass@" before the host: percent-decoded into @n. */
static int parse_userinfo(const char *p, size_t len, struct lb_node *n, char *why, size_t wlen)
{
	const char *sep = memchr(p, ':', len);

	if (!sep)
		return url_fail(why, wlen, "a user name needs a password: %s",
				"redis://user:password@host:port (or redis://:password@host:port)");
	if (!url_decode(p, (size_t)(sep - p), n->user, sizeof(n->user)))
		return url_fail(why, wlen, "the user name is too long (at most %s bytes) or has a "
				"broken %%XX or a control character", "63");
	if (!url_decode(sep + 1, (size_t)(p + len - sep - 1), n->pass, sizeof(n->pass)) || !n->pass[0])
		return url_fail(why, wlen, "the password is empty, too long (at most %s bytes) or has "
				"a broken %%XX or a control character", "127");
	return 0;
}

/* "host", "host:port", "[v6]" or "[v6]:port" of @len bytes at @p. */
static int parse_hostport(const char *p, size_t len, struct lb_node *n, char *why, size_t wlen)
{
	const char *host = p, *rest;
	size_t hlen;

	if (len && *p == '[') {
		const char *close = memchr(p, ']', len);
		if (!close)
			return url_fail(why, wlen, "an IPv6 address opens with '[' and no '%s' closes it", "]");
		host = p + 1;
		hlen = (size_t)(close - host);
		rest = close + 1;
	} else {
		const char *colon = memchr(p, ':', len);
		hlen = colon ? (size_t)(colon - p) : len;
		rest = p + hlen;
		if (colon && memchr(colon + 1, ':', len - hlen - 1))
			return url_fail(why, wlen, "several ':' in the address: write an IPv6 address "
					"in brackets, [%s]:port", "::1");
	}
	if (hlen == 0 || hlen >= sizeof(n->host))
		return url_fail(why, wlen, "the host is empty or longer than %s bytes", "127");
	for (size_t i = 0; i < hlen; i++)
		if (!isalnum((unsigned char)host[i]) && !strchr(".-_:%", host[i]))
			return url_fail(why, wlen, "the host has a character a host name or an IP "
					"address does not have%s", "");
	memcpy(n->host, host, hlen);
	n->host[hlen] = '\0';
	n->port = 6379;
	if (rest == p + len)
		return 0;
	if (*rest != ':' || rest + 1 == p + len)
		return url_fail(why, wlen, "expected ':port' after the host%s", "");
	long port = 0;
	for (const char *d = rest + 1; d < p + len; d++) {
		if (!isdigit((unsigned char)*d) || port > 65535)
			return url_fail(why, wlen, "the port is not a number from 1 to 65535%s", "");
		port = port * 10 + (*d - '0');
	}
	if (port < 1 || port > 65535)
		return url_fail(why, wlen, "the port is not a number from 1 to 65535%s", "");
	n->port = (int)port;
	n->port_given = true;
	return 0;
}

int lb_node_parse_url(const char *url, struct lb_node *n, char *why, size_t wlen)
{
	const char *p = url, *scheme_end = strstr(url, "://");

	memset(n, 0, sizeof(*n));
	n->timeout_ms = 2000;
	if (why && wlen)
		why[0] = '\0';
	if (scheme_end) {
		size_t sl = (size_t)(scheme_end - url);
		n->tls = sl == 6 && !strncasecmp(url, "rediss", 6);
		if (sl == 4 && !strncasecmp(url, "unix", 4))
			return url_fail(why, wlen, "unix:// sockets are not supported: give %s",
					"redis://host:port");
		if (!n->tls && (sl != 5 || strncasecmp(url, "redis", 5)))
			return url_fail(why, wlen, "an unknown scheme: expected %s",
					"redis://[[user]:password@]host[:port][/db]");
		p = scheme_end + 3;
	}
	size_t len = strcspn(p, "/?#");
	const char *at = NULL;
	for (const char *q = p; q < p + len; q++)
		at = *q == '@' ? q : at; /* the last '@': a password may hold one, encoded or not */
	if (at && parse_userinfo(p, (size_t)(at - p), n, why, wlen) < 0)
		return LB_EINVAL;
	const char *hp = at ? at + 1 : p;
	if (parse_hostport(hp, (size_t)(p + len - hp), n, why, wlen) < 0)
		return LB_EINVAL;
	p += len;
	if (*p == '?' || *p == '#')
		return url_fail(why, wlen, "'%s...': options in the URL are not supported", p);
	if (*p == '/' && p[1]) {
		long db = 0;
		for (const char *d = p + 1; *d; d++) {
			if (!isdigit((unsigned char)*d) || db > 1000000)
				return url_fail(why, wlen, "'%s': expected /DB, a database number", p);
			db = db * 10 + (*d - '0');
		}
		n->db = (int)db;
	}
	return 0;
}

/* The URL of @n as lb_node_parse_url reads it, its user and password
 * %XX-encoded (no space nor control byte), into @buf. */
void lb_node_url(const struct lb_node *n, char *buf, size_t len)
{
	char user[3 * sizeof(n->user)], pass[3 * sizeof(n->pass)];
	const char *fields[2] = { n->user, n->pass };
	char *outs[2] = { user, pass };

	for (int f = 0; f < 2; f++) {
		size_t o = 0;
		for (const char *c = fields[f]; *c; c++) {
			if (isalnum((unsigned char)*c) || strchr("-._~*", *c))
				outs[f][o++] = *c;
			else
				o += (size_t)sprintf(outs[f] + o, "%%%02X", (unsigned char)*c);
		}
		outs[f][o] = '\0';
	}
	bool v6 = strchr(n->host, ':') != NULL;
	if (n->scheme[0]) { /* a consensus member: its address alone */
		snprintf(buf, len, "%s://%s%s%s:%d", n->scheme, v6 ? "[" : "", n->host, v6 ? "]" : "",
			 n->port);
		return;
	}
	/* rediss://: the server's own address, not the tunnel's in front of it */
	const char *host = n->tls && n->tls_host[0] ? n->tls_host : n->host;
	int port = n->tls && n->tls_host[0] ? n->tls_port : n->port;
	v6 = strchr(host, ':') != NULL;
	int k = snprintf(buf, len, "%s://%s%s%s%s%s%s%s:%d", n->tls ? "rediss" : "redis", user,
			 pass[0] ? ":" : "", pass,
			 pass[0] ? "@" : "", v6 ? "[" : "", host, v6 ? "]" : "", port);
	if (n->db > 0 && k > 0 && (size_t)k < len)
		snprintf(buf + k, len - (size_t)k, "/%d", n->db);
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
/* A list of addresses; a port left out is @sentinel_port (26379 for
 * Sentinels), or 6379 when that is 0. */
static int parse_addrs(const char *urls, struct lb_addr *out, int max, int sentinel_port,
		       char *why, size_t wlen)
{
	char buf[512], *save = NULL;
	int n = 0;

	if (strlen(urls) >= sizeof(buf))
		return url_fail(why, wlen, "the list is longer than %s bytes", "511");
	snprintf(buf, sizeof(buf), "%s", urls);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		struct lb_node one;
		char w[200];
		if (n == max) {
			char m[16];
			snprintf(m, sizeof(m), "%d", max);
			return url_fail(why, wlen, "more than %s addresses", m);
		}
		if (lb_node_parse_url(t, &one, w, sizeof(w)) < 0 || one.db ||
		    strlen(one.host) >= sizeof(out[0].host)) {
			char shown[128];
			lb_url_list_masked(t, shown, sizeof(shown));
			if (why && wlen)
				snprintf(why, wlen, "'%.100s': %s", shown, one.db ? "a Sentinel or seed "
					 "has no database: drop /DB" : w[0] ? w : "the host is too long");
			return LB_EINVAL;
		}
		memcpy(out[n].host, one.host, strlen(one.host) + 1); /* fits: checked */
		memcpy(out[n].user, one.user, sizeof(out[n].user));
		memcpy(out[n].pass, one.pass, sizeof(out[n].pass));
		out[n++].port = one.port_given || sentinel_port == 0 ? one.port : sentinel_port;
	}
	return n ? n : url_fail(why, wlen, "no address in the list%s", "");
}

int lb_node_use_sentinels_why(struct lb_node *n, const char *urls, const char *master,
			      char *why, size_t len)
{
	if (!master[0] || strlen(master) >= sizeof(n->master))
		return url_fail(why, len, "the master name is empty or longer than %s bytes", "63");
	int got = parse_addrs(urls, n->sentinel, LB_MAX_SENTINELS, 26379, why, len);
	if (got < 0)
		return got;
	n->n_sentinels = got;
	snprintf(n->master, sizeof(n->master), "%s", master);
	return 0;
}

int lb_node_use_sentinels(struct lb_node *n, const char *urls, const char *master)
{
	return lb_node_use_sentinels_why(n, urls, master, NULL, 0);
}

int lb_node_use_cluster(struct lb_node *n, const char *urls, int slot)
{
	if (slot < 0 || slot > 16383)
		return LB_EINVAL;
	int got = parse_addrs(urls, n->seed, LB_MAX_SEEDS, 0, NULL, 0);
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

/* rediss:// Sentinels or cluster seeds: every address a connection may be
 * sent to, and the loopback port of the TLS tunnel in front of it (set in
 * the parent before the clients fork; they inherit it). */
static struct {
	char host[128];
	int port, via;
} routes[LB_MAX_ROUTES];
static int n_routes;

int lb_node_route_add(const char *host, int port, int via)
{
	if (lb_node_route(host, port) > 0)
		return 0;
	if (n_routes == LB_MAX_ROUTES || strlen(host) >= sizeof(routes[0].host))
		return LB_EINVAL;
	snprintf(routes[n_routes].host, sizeof(routes[0].host), "%s", host);
	routes[n_routes].port = port;
	routes[n_routes++].via = via;
	return 0;
}

int lb_node_route(const char *host, int port)
{
	for (int i = 0; i < n_routes; i++)
		if (routes[i].port == port && !strcmp(routes[i].host, host))
			return routes[i].via;
	return n_routes ? -1 : 0;
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
	int via = n->tls ? lb_node_route(host, port) : 0;

	if (via < 0) { /* never plain text on a TLS deployment */
		errno = EHOSTUNREACH;
		return NULL;
	}
	if (via > 0) {
		host = "127.0.0.1";
		dst.sin_port = htons((uint16_t)via);
		port = via;
	}
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

/* What a failed connect means, from hiredis's or the system's words. */
static void say_connect_failure(const struct lb_node *n, const char *err, char *why, size_t len)
{
	if (strstr(err, "No route to host") && lb_node_route("", 0) < 0)
		snprintf(why, len, "not one of the servers whose TLS tunnel lockbench started when "
			 "the run began (a node the deployment named later): never reached in plain "
			 "text");
	else if (strstr(err, "refused"))
		snprintf(why, len, "connection refused: nothing listens there");
	else if (strstr(err, "not known") || strstr(err, "name resolution") ||
		 strstr(err, "No address associated"))
		snprintf(why, len, "unknown host: the name does not resolve");
	else if (strstr(err, "timed out") || strstr(err, "temporarily unavailable") ||
		 strstr(err, "in progress"))
		snprintf(why, len, "no answer within %lld ms (connect timed out)",
			 (long long)n->timeout_ms);
	else
		snprintf(why, len, "cannot connect: %.100s", err);
}

/* Does the server at @c answer a PING with a whole reply line within the
 * node's timeout? hiredis's timeout restarts with every byte, so a server
 * that trickles bytes (or is not Redis, or is stopped half-way) would hold a
 * blocking connection for ever: the user's servers are probed on a
 * connection of their own first. Any reply is whole enough: +PONG, -NOAUTH. */
static bool probe_ok(const struct lb_node *n, redisContext *c, char *why, size_t len)
{
	static const char ping[] = "PING\r\n";
	char buf[256];
	size_t got = 0;
	int64_t until = lb_now_ns() + n->timeout_ms * LB_NS_PER_MS;

	if (write(c->fd, ping, sizeof(ping) - 1) != (ssize_t)(sizeof(ping) - 1)) {
		snprintf(why, len, "the connection closed at once");
		return false;
	}
	while (got < sizeof(buf) - 1 && !memchr(buf, '\n', got)) {
		int64_t left = (until - lb_now_ns()) / LB_NS_PER_MS;
		struct pollfd pf = { .fd = c->fd, .events = POLLIN };
		if (left <= 0 || poll(&pf, 1, (int)left) != 1) {
			snprintf(why, len, "%s within %lld ms", got ? "no whole reply to PING (it sends "
				 "bytes, not Redis replies)" : "no answer to PING",
				 (long long)n->timeout_ms);
			return false;
		}
		ssize_t k = read(c->fd, buf + got, sizeof(buf) - 1 - got);
		if (k <= 0) {
			snprintf(why, len, "the server closed the connection (one that wants TLS "
				 "does: rediss://)");
			return false;
		}
		got += (size_t)k;
	}
	if (!strchr("+-:$*_,#!=(%~>|", buf[0])) {
		snprintf(why, len, "it does not speak Redis's protocol (its reply began with '%s%c')",
			 (unsigned char)buf[0] < 0x20 ? "\\x" : "", buf[0] >= 0x20 ? buf[0] : '?');
		return false;
	}
	return true;
}

bool lb_node_probe(const struct lb_node *n, const char *host, int port, char *why, size_t len)
{
	errno = 0;
	redisContext *p = connect_from(n, host, port);
	bool ok = p && !p->err && probe_ok(n, p, why, len);
	if (!ok && (!p || p->err))
		say_connect_failure(n, p && p->err ? p->errstr : errno ? strerror(errno) :
				    "no reason given", why, len);
	if (p)
		redisFree(p);
	return ok;
}

/* A connection to @host:@port with the node's timeout set, or NULL with
 * the reason in @why. */
static redisContext *open_conn(const struct lb_node *n, const char *host, int port, char *why,
			       size_t len)
{
	if (n->probe && !lb_node_probe(n, host, port, why, len))
		return NULL;
	errno = 0;
	redisContext *c = connect_from(n, host, port);

	if (c && !c->err && redisSetTimeout(c, ms_tv(n->timeout_ms)) == REDIS_OK)
		return c;
	say_connect_failure(n, c && c->err ? c->errstr : errno ? strerror(errno) : "no reason given",
			    why, len);
	if (c)
		redisFree(c);
	return NULL;
}

/* AUTH (when @pass is set) and SELECT (when @db > 0) on a new connection:
 * 0, or LB_EREDIS with what the server said, told as what to do, in @why. */
static int hello_server(redisContext *c, const char *user, const char *pass, int db,
			int64_t timeout_ms, char *why, size_t len)
{
	redisReply *r;
	int rc = 0;

	if (pass[0]) {
		r = user[0] ? redisCommand(c, "AUTH %s %s", user, pass) : redisCommand(c, "AUTH %s", pass);
		if (!r && c->err && !strstr(c->errstr, "temporarily unavailable"))
			snprintf(why, len, "AUTH: %.100s", c->errstr); /* closed, not Redis */
		else if (!r)
			snprintf(why, len, "no answer to AUTH within %lld ms", (long long)timeout_ms);
		else if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "WRONGPASS", 9))
			snprintf(why, len, "authentication refused: the server does not accept this "
				 "user name and password (WRONGPASS)");
		else if (r->type == REDIS_REPLY_ERROR && strstr(r->str, "without any password"))
			snprintf(why, len, "authentication refused: the URL gives a password but the "
				 "server has none set (drop it from the URL)");
		else if (r->type == REDIS_REPLY_ERROR)
			snprintf(why, len, "authentication refused: %.100s", r->str);
		rc = lb_reply_ok(r) ? 0 : LB_EREDIS;
		if (r)
			freeReplyObject(r);
	}
	if (rc == 0 && db > 0) {
		r = redisCommand(c, "SELECT %d", db);
		if (!lb_reply_ok(r)) {
			snprintf(why, len, "SELECT %d: %.100s", db, !r ? "no answer" :
				 r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected reply");
			rc = LB_EREDIS;
		}
		if (r)
			freeReplyObject(r);
	}
	return rc;
}

/* Ask Sentinel @i where the primary is: host and port. 0, or LB_EREDIS
 * with why not in n->why, naming the Sentinel. */
static int ask_sentinel(struct lb_node *n, int i)
{
	const struct lb_addr *s = &n->sentinel[i];
	char why[160] = "";
	redisContext *c = open_conn(n, s->host, s->port, why, sizeof(why));
	redisReply *r = NULL;

	if (c && hello_server(c, s->user, s->pass, 0, n->timeout_ms, why, sizeof(why)) == 0 &&
	    !(r = redisCommand(c, "SENTINEL get-master-addr-by-name %s", n->master)))
		snprintf(why, sizeof(why), "no answer within %lld ms", (long long)n->timeout_ms);
	bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
		  r->element[0]->type == REDIS_REPLY_STRING &&
		  r->element[1]->type == REDIS_REPLY_STRING && strlen(r->element[0]->str) < sizeof(n->host);
	if (ok) {
		snprintf(n->host, sizeof(n->host), "%s", r->element[0]->str);
		n->port = atoi(r->element[1]->str);
		n->lookups++;
	} else if (r && r->type == REDIS_REPLY_NIL) {
		snprintf(why, sizeof(why), "knows no master named '%.63s' (SENTINEL MASTERS lists "
			 "the names it monitors)", n->master);
	} else if (r) {
		snprintf(why, sizeof(why), "%s: %.100s", r->type == REDIS_REPLY_ERROR ?
			 "refused SENTINEL get-master-addr-by-name" : "an unexpected reply",
			 r->type == REDIS_REPLY_ERROR ? r->str : "(not a Sentinel?)");
	}
	if (!ok)
		snprintf(n->why, sizeof(n->why), "Sentinel %s:%d: %s", s->host, s->port, why);
	if (r)
		freeReplyObject(r);
	if (c)
		redisFree(c);
	return ok ? 0 : LB_EREDIS;
}

redisReply *lb_node_sentinel_cmd(const struct lb_node *n, int i, const char *cmd, char *why,
				 size_t len)
{
	const struct lb_addr *s = &n->sentinel[i];
	redisContext *c = open_conn(n, s->host, s->port, why, len);
	redisReply *r = NULL;

	if (c && hello_server(c, s->user, s->pass, 0, n->timeout_ms, why, len) == 0 &&
	    !(r = redisCommand(c, "SENTINEL %s %s", cmd, n->master)))
		snprintf(why, len, "no answer within %lld ms", (long long)n->timeout_ms);
	if (c)
		redisFree(c);
	return r;
}

static int connect_once(struct lb_node *n);
static bool is_primary(struct lb_node *n);

/* Which server process the Sentinels led to (INFO server's run_id): a
 * restart or another server behind the same address is told apart. */
static void note_run_id(struct lb_node *n)
{
	redisReply *r = redisCommand(n->ctx, "INFO server");
	const char *at = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "run_id:") : NULL;

	n->run_id[0] = '\0';
	if (at && sscanf(at + 7, "%40[0-9a-f]", n->run_id) != 1)
		n->run_id[0] = '\0';
	if (r)
		freeReplyObject(r);
}

/* Through the Sentinels: ask each in turn, and keep the first answer that
 * leads to a server which says it is the primary (one Sentinel may not have
 * learnt of a failover yet, or name a server that is down). */
static int connect_via_sentinels(struct lb_node *n)
{
	char first[sizeof(n->why)] = "";

	for (int tried = 0; tried < n->n_sentinels; tried++) {
		/* on the user's Sentinels, the one that answered last first: a
		 * stopped Sentinel costs one timeout, not one at every reconnect
		 * (lockbench's own keep their order: the lessons count on it) */
		int i = n->probe ? (n->sentinel_at + tried) % n->n_sentinels : tried;
		if (ask_sentinel(n, i) == 0) {
			if (connect_once(n) == 0 && is_primary(n)) {
				if (n->want_run_id)
					note_run_id(n);
				n->sentinel_at = i;
				return 0;
			}
			{
				/* at most 289 bytes before the reason: all of the reason's
				 * first 99 fit (why[] is sized for it) */
				char w[100];
				snprintf(w, sizeof(w), "%.99s", n->why);
				snprintf(n->why, sizeof(n->why), "Sentinel %.63s:%d names %.100s:%d as the "
					 "primary of '%.63s': %s", n->sentinel[i].host, n->sentinel[i].port,
					 n->host, n->port, n->master, w);
			}
			lb_node_close(n);
		}
		if (!first[0])
			snprintf(first, sizeof(first), "%s", n->why);
	}
	if (n->n_sentinels > 1 && first[0]) /* the first Sentinel's reason, and how many */
		snprintf(n->why, sizeof(n->why), "%.200s (and %d more Sentinels did not help)", first,
			 n->n_sentinels - 1);
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

/* Why seed @sd's answer @r to CLUSTER SLOTS named no primary of our slot,
 * into n->why: what the server is when it is not a cluster's node. */
static void cluster_slots_why(struct lb_node *n, const struct lb_addr *sd, const redisReply *r)
{
	if (r->type == REDIS_REPLY_ERROR && strstr(r->str, "cluster support disabled"))
		snprintf(n->why, sizeof(n->why), "seed %s:%d is a plain Redis server, with cluster "
			 "support disabled (CLUSTER SLOTS: %.80s): --cluster needs a node of a Redis "
			 "Cluster; give a plain server with --redis", sd->host, sd->port, r->str);
	else if (r->type == REDIS_REPLY_ERROR)
		snprintf(n->why, sizeof(n->why), "seed %s:%d: CLUSTER SLOTS: %.100s", sd->host,
			 sd->port, r->str);
	else
		snprintf(n->why, sizeof(n->why), "seed %s:%d: no primary serves slot %d (CLUSTER "
			 "SLOTS): the cluster is not yet, or no longer, whole", sd->host, sd->port,
			 n->slot);
}

/* Through the seeds: the first that answers CLUSTER SLOTS names the primary
 * of our slot (a seed may be down, or behind a partition: the next one).
 * The one that answered is asked first next time, so a seed that does not
 * answer costs one timeout, not one per lookup. */
static int connect_via_cluster(struct lb_node *n)
{
	for (int tried = 0; tried < n->n_seeds; tried++) {
		int i = (n->seed_at + tried) % n->n_seeds;
		const struct lb_addr *sd = &n->seed[i];
		char why[160] = "";
		redisContext *c = open_conn(n, sd->host, sd->port, why, sizeof(why));
		redisReply *r = NULL;
		bool found = false;
		if (c && hello_server(c, sd->user, sd->pass, 0, n->timeout_ms, why, sizeof(why)) == 0)
			r = redisCommand(c, "CLUSTER SLOTS");
		if (!r && why[0])
			snprintf(n->why, sizeof(n->why), "seed %s:%d: %s", sd->host, sd->port, why);
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
		if (!found && r)
			cluster_slots_why(n, sd, r);
		if (r)
			freeReplyObject(r);
		if (c)
			redisFree(c);
		if (found) {
			n->seed_at = i;
			n->lookups++;
			if (connect_once(n) == 0) {
				if (n->want_run_id)
					note_run_id(n);
				return 0;
			}
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
	if (!r)
		snprintf(n->why, sizeof(n->why), "no answer to ROLE within %lld ms",
			 (long long)n->timeout_ms);
	else if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOAUTH", 6))
		snprintf(n->why, sizeof(n->why), "it needs a password (NOAUTH): give it with "
			 "--master-auth [USER]:PASSWORD");
	else if (r->type == REDIS_REPLY_ERROR)
		snprintf(n->why, sizeof(n->why), "ROLE: %.100s", r->str);
	else if (!ok)
		snprintf(n->why, sizeof(n->why), "it says it is not a primary (ROLE)");
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
	int rc = connect_once(n);
	if (rc == 0 && n->want_run_id) /* a MOVED may have led to another server */
		note_run_id(n);
	return rc;
}

/* Connect to host:port as they are now (and AUTH). */
static int connect_once(struct lb_node *n)
{
	n->ctx = open_conn(n, n->host, n->port, n->why, sizeof(n->why));
	if (n->ctx && hello_server(n->ctx, n->user, n->pass, n->db, n->timeout_ms, n->why,
				   sizeof(n->why)) < 0)
		lb_node_close(n);
	return n->ctx ? 0 : LB_EREDIS;
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
	n->unanswered += !reply;
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
		n->unanswered += !r;
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
		n->unanswered += !r;
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

void lb_url_list_masked(const char *list, char *out, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	while (*list && o + 1 < len) {
		size_t k = strcspn(list, ",");
		const char *scheme = strstr(list, "://"), *start = list;
		if (scheme && (size_t)(scheme - list) < k)
			start = scheme + 3;
		size_t auth = strcspn(start, "/?#,");
		const char *at = NULL;
		for (const char *q = start; q < start + auth; q++)
			at = *q == '@' ? q : at;
		const char *colon = at ? memchr(start, ':', (size_t)(at - start)) : NULL;
		if (colon) { /* up to the password, "***", then from the '@' on */
			o += (size_t)snprintf(out + o, len - o, "%.*s***", (int)(colon + 1 - list), list);
			if (o < len)
				o += (size_t)snprintf(out + o, len - o, "%.*s", (int)(list + k - at), at);
		} else {
			o += (size_t)snprintf(out + o, len - o, "%.*s", (int)k, list);
		}
		list += k;
		if (*list == ',' && o + 1 < len) {
			out[o++] = ',';
			list++;
		}
	}
	out[o < len ? o : len - 1] = '\0';
}
