/*
 * tunnel.c - the TLS tunnel in front of a rediss:// server or an https://
 * etcd member (tunnel.h).
 */
#include "esc.h"
#include "tunnel.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TUNNEL_READY_MS 5000
#define PROBE_MS 3000

/* The tunnel listens: a connection to its port is accepted. */
static int listening(const struct lb_server *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)s->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : 1;
}

/* @path made absolute (stunnel runs in its own directory): false when it
 * cannot be resolved. */
static bool absolute(const char *path, char *out)
{
	return path && realpath(path, out) != NULL;
}

static int write_config(const struct lb_server *s, const char *scheme, const char *host, int port,
			const struct lb_tls *tls)
{
	char path[PATH_MAX], ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
	struct in6_addr ip6;
	struct in_addr ip4;
	bool ip = inet_pton(AF_INET, host, &ip4) == 1 || inet_pton(AF_INET6, host, &ip6) == 1;
	bool v6 = strchr(host, ':') != NULL;

	snprintf(path, sizeof(path), "%s/tunnel.conf", s->dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		lb_errorf("cannot write %s: %s", path, strerror(errno));
		return LB_ESYS;
	}
	fprintf(f, "foreground = yes\npid =\nsyslog = no\ndebug = notice\n[%s]\nclient = yes\n"
		"accept = 127.0.0.1:%d\nconnect = %s%s%s:%d\n", scheme, s->port, v6 ? "[" : "", host,
		v6 ? "]" : "", port);
	if (tls->insecure) {
		fprintf(f, "verifyChain = no\n");
	} else {
		fprintf(f, "verifyChain = yes\nCAfile = %s\n%s = %s\n", absolute(tls->ca, ca) ? ca :
			"/etc/ssl/certs/ca-certificates.crt", ip ? "checkIP" : "checkHost", host);
	}
	if (!ip)
		fprintf(f, "sni = %s\n", host);
	if (absolute(tls->cert, cert))
		fprintf(f, "cert = %s\n", cert);
	if (absolute(tls->key, key))
		fprintf(f, "key = %s\n", key);
	return fclose(f) == 0 ? 0 : LB_ESYS;
}

/* What stunnel said last of the handshake (its log's last error), into @out;
 * with none, its log's last line, quoted: the log is in a directory removed
 * when lockbench stops, so its path would name nothing by then. */
static void last_error(const struct lb_server *s, char *out, size_t cap)
{
	char line[512], last[200] = "", prev[200] = "";
	FILE *f = fopen(s->log_path, "r");

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		/* its errors are marked "[!]" (the last two said), else its last line */
		bool err = !strncmp(line, "[!]", 3);
		if (err && !strncmp(last, "[!]", 3))
			snprintf(prev, sizeof(prev), "%s", last);
		if (line[0] && (err || strncmp(last, "[!]", 3)))
			lb_esc_snprintf(last, sizeof(last), LB_LANG_TERM, "%.190s", line);
	}
	snprintf(out, cap, "the connection was closed before a reply (stunnel's log ended: "
		 "'%s%s%s')", prev, prev[0] ? "; " : "", last[0] ? last : "(empty)");
	if (f)
		rewind(f);
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		const char *at = strstr(line, "LOG3[");
		if (!at)
			at = strstr(line, "LOG4[");
		if (at && (at = strstr(at, "]: ")))
			snprintf(out, cap, "%s", at + 3);
	}
	if (f)
		fclose(f);
}

/* A request through the tunnel: a reply of any kind says the handshake took;
 * a closed connection, that it did not. Redis: PING (+PONG, -NOAUTH); an
 * etcd member: GET /version (an HTTP answer of any status). */
static bool probe(const struct lb_server *s, bool http)
{
	static const char ping[] = "PING\r\n", get[] = "GET /version HTTP/1.0\r\n\r\n";
	const char *req = http ? get : ping;
	size_t len = http ? sizeof(get) - 1 : sizeof(ping) - 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)s->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char c = 0;
	bool ok = false;

	if (fd < 0)
		return false;
	struct timeval tv = { .tv_sec = PROBE_MS / 1000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    send(fd, req, len, MSG_NOSIGNAL) == (ssize_t)len)
		ok = recv(fd, &c, 1, 0) == 1 && (http ? c == 'H' : c == '+' || c == '-');
	close(fd);
	return ok;
}

/* What stunnel's reason @why most likely means, for the user to act on. */
static const char *hint(const char *why)
{
	if (strstr(why, "certificate verify failed") || strstr(why, "unable to get local issuer") ||
	    strstr(why, "self-signed certificate") || strstr(why, "self signed certificate"))
		return " (is --tls-ca the CA that signed the server's certificate?)";
	if (strstr(why, "alert bad certificate") || strstr(why, "alert certificate required") ||
	    strstr(why, "alert unknown ca"))
		return " (the server refused lockbench's side: does it ask a client certificate, "
		       "--tls-cert and --tls-key, signed by a CA it trusts?)";
	return "";
}

struct lb_server *lb_tunnel_start(const char *scheme, const char *host, int port,
				  const struct lb_tls *tls)
{
	/* runs: stunnel4 (stunnel4), exec'd by rserver.c */
	static const char *const argv[] = { "stunnel4", "./tunnel.conf", NULL };
	static const char *const drop[] = { "OPENSSL_", "SSL_CERT_", NULL };
	int free_port = lb_free_port();
	bool v6 = strchr(host, ':') != NULL;

	if (free_port < 0)
		return NULL;
	struct lb_server_opts o = { .command = argv, .port = free_port, .log_name = "stunnel.log",
				    .kind = "tunnel", .ready = listening, .drop_env = drop };
	struct lb_server *s = lb_server_prepare(&o);
	if (!s)
		return NULL;
	if (write_config(s, scheme, host, port, tls) < 0 || lb_server_respawn_begin(s) < 0) {
		lb_server_destroy(s);
		return NULL;
	}
	int64_t deadline = lb_now_ns() + TUNNEL_READY_MS * LB_NS_PER_MS;
	int rc;
	while ((rc = lb_server_poll_ready(s)) > 0 && lb_now_ns() < deadline)
		lb_sleep_ns(20 * LB_NS_PER_MS);
	char why[400];
	if (rc != 0) {
		last_error(s, why, sizeof(why));
		lb_errorf("%s://%s%s%s:%d: lockbench's TLS tunnel (stunnel4) did not start: %s",
			  scheme, v6 ? "[" : "", host, v6 ? "]" : "", port, why);
	} else if (!probe(s, !strcmp(scheme, "https"))) {
		last_error(s, why, sizeof(why));
		lb_errorf("%s://%s%s%s:%d: TLS: no reply through lockbench's tunnel: %s%s",
			  scheme, v6 ? "[" : "", host, v6 ? "]" : "", port, why,
			  hint(why));
		rc = LB_ENOTHERE;
	}
	if (rc == 0)
		return s;
	lb_server_destroy(s);
	return NULL;
}
