#include "relay.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shared.h"
#include "signals.h"

struct chunk {
	struct chunk *next;
	int64_t due_ns;
	size_t len;
	char data[];
};

struct conn {
	int cfd, sfd;             /* client side, server side; -1 when closed */
	int client, link;
	int flush_seen;           /* the link's flush_gen this connection has obeyed */
	struct chunk *head, *tail; /* client-to-server bytes waiting for their time */
};

struct relay {
	struct lb_shared *sh;
	int clients, n_lock, resource_port;
	int *lfd;                 /* [client * LB_RELAY_LINKS + link], -1 unused */
	struct conn *conns;
	size_t n_conns, cap_conns;
};

static int listen_local(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_local(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Close with a reset, as a cut link does. */
static void reset_close(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

static void send_all(int fd, const char *p, size_t n)
{
	while (fd >= 0 && n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void conn_close(struct conn *c, bool reset)
{
	if (reset) {
		reset_close(c->cfd);
		reset_close(c->sfd);
	} else {
		if (c->cfd >= 0)
			close(c->cfd);
		if (c->sfd >= 0)
			close(c->sfd);
	}
	c->cfd = c->sfd = -1;
	while (c->head) {
		struct chunk *n = c->head->next;
		free(c->head);
		c->head = n;
	}
	c->tail = NULL;
}

static struct lb_link_ctl *ctl(struct relay *r, int client, int link)
{
	return &r->sh->link[client][link];
}

static int upstream_port(struct relay *r, int link)
{
	return link == LB_RELAY_RESOURCE ? r->resource_port : atomic_load(&r->sh->node_port[link]);
}

static void on_accept(struct relay *r, int client, int link)
{
	int fd = accept4(r->lfd[client * LB_RELAY_LINKS + link], NULL, NULL, SOCK_CLOEXEC), one = 1;

	if (fd < 0)
		return;
	if (atomic_load(&ctl(r, client, link)->mode) == LB_LINK_CUT) {
		reset_close(fd);
		return;
	}
	int sfd = connect_local(upstream_port(r, link));
	if (sfd < 0) { /* the server is down: so is the link */
		reset_close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (r->n_conns == r->cap_conns) {
		size_t cap = r->cap_conns ? 2 * r->cap_conns : 64;
		struct conn *nc = realloc(r->conns, cap * sizeof(*nc));
		if (!nc) {
			close(fd);
			close(sfd);
			return;
		}
		r->conns = nc;
		r->cap_conns = cap;
	}
	r->conns[r->n_conns++] = (struct conn){
		.cfd = fd, .sfd = sfd, .client = client, .link = link,
		.flush_seen = atomic_load(&ctl(r, client, link)->flush_gen),
	};
}

/* Bytes from the client: dropped, queued for later, or passed on now. */
static void from_client(struct relay *r, struct conn *c)
{
	char buf[16384];
	ssize_t n = read(c->cfd, buf, sizeof(buf));
	struct lb_link_ctl *k = ctl(r, c->client, c->link);

	if (n <= 0) {
		close(c->cfd); /* the client gave up; queued bytes still go out */
		c->cfd = -1;
		if (!c->head)
			conn_close(c, false);
		return;
	}
	if (atomic_load(&k->mode) == LB_LINK_BLACKHOLE)
		return;
	int delay = atomic_load(&k->delay_ms);
	if (delay <= 0 && !c->head) {
		send_all(c->sfd, buf, (size_t)n);
		return;
	}
	struct chunk *ch = malloc(sizeof(*ch) + (size_t)n);
	if (!ch)
		return;
	ch->next = NULL;
	ch->due_ns = lb_now_ns() + (int64_t)(delay > 0 ? delay : 0) * LB_NS_PER_MS;
	ch->len = (size_t)n;
	memcpy(ch->data, buf, (size_t)n);
	if (c->tail)
		c->tail->next = ch;
	else
		c->head = ch;
	c->tail = ch;
}

static void from_server(struct relay *r, struct conn *c)
{
	char buf[16384];
	ssize_t n = read(c->sfd, buf, sizeof(buf));

	if (n <= 0) {
		conn_close(c, false);
		return;
	}
	if (atomic_load(&ctl(r, c->client, c->link)->mode) != LB_LINK_BLACKHOLE)
		send_all(c->cfd, buf, (size_t)n);
}

/* Send what is due; true while something waits. */
static bool flush_due(struct conn *c, int64_t now, int64_t *next)
{
	while (c->head && c->head->due_ns <= now) {
		struct chunk *ch = c->head;
		send_all(c->sfd, ch->data, ch->len);
		c->head = ch->next;
		free(ch);
	}
	if (!c->head) {
		c->tail = NULL;
		if (c->cfd < 0 && c->sfd >= 0)
			conn_close(c, false);
		return false;
	}
	if (c->head->due_ns < *next)
		*next = c->head->due_ns;
	return true;
}

static void __attribute__((noreturn)) relay_loop(struct relay *r)
{
	size_t n_l = (size_t)r->clients * LB_RELAY_LINKS;
	struct pollfd *pf = NULL;
	size_t cap_pf = 0;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	for (;;) {
		int64_t now = lb_now_ns(), next = now + 20 * LB_NS_PER_MS;
		size_t k = 0, live = 0;

		/* cut links, finished connections, due bytes */
		for (size_t i = 0; i < r->n_conns; i++) {
			struct conn *c = &r->conns[i];
			if (c->sfd >= 0 && atomic_load(&ctl(r, c->client, c->link)->mode) == LB_LINK_CUT)
				conn_close(c, true);
			int gen = atomic_load(&ctl(r, c->client, c->link)->flush_gen);
			if (gen != c->flush_seen) { /* the fault ended: everything is due */
				c->flush_seen = gen;
				for (struct chunk *ch = c->head; ch; ch = ch->next)
					ch->due_ns = now;
			}
			if (c->sfd >= 0)
				flush_due(c, now, &next);
			if (c->sfd >= 0)
				r->conns[live++] = *c;
		}
		r->n_conns = live;
		size_t want = n_l + 2 * r->n_conns;
		if (want > cap_pf) {
			struct pollfd *np = realloc(pf, want * sizeof(*np));
			if (!np)
				_exit(1);
			pf = np;
			cap_pf = want;
		}
		for (size_t i = 0; i < n_l; i++)
			pf[k++] = (struct pollfd){ .fd = r->lfd[i], .events = POLLIN };
		for (size_t i = 0; i < r->n_conns; i++) {
			pf[k++] = (struct pollfd){ .fd = r->conns[i].cfd, .events = POLLIN };
			pf[k++] = (struct pollfd){ .fd = r->conns[i].sfd, .events = POLLIN };
		}
		int64_t wait_ms = (next - now) / LB_NS_PER_MS;
		if (poll(pf, k, (int)(wait_ms < 1 ? 1 : wait_ms)) <= 0)
			continue;
		for (size_t i = 0; i < n_l; i++)
			if (pf[i].fd >= 0 && (pf[i].revents & POLLIN))
				on_accept(r, (int)(i / LB_RELAY_LINKS), (int)(i % LB_RELAY_LINKS));
		/* accepted connections join the poll set next round */
		size_t polled = (k - n_l) / 2;
		for (size_t i = 0; i < polled; i++) {
			struct conn *c = &r->conns[i];
			short ce = pf[n_l + 2 * i].revents, se = pf[n_l + 2 * i + 1].revents;
			if (c->cfd >= 0 && (ce & (POLLIN | POLLHUP | POLLERR)))
				from_client(r, c);
			if (c->sfd >= 0 && (se & (POLLIN | POLLHUP | POLLERR)))
				from_server(r, c);
		}
	}
}

pid_t lb_relay_start(struct lb_shared *sh, int clients, int n_lock, int resource_port)
{
	struct relay r = { .sh = sh, .clients = clients, .n_lock = n_lock,
			   .resource_port = resource_port };
	size_t n_l = (size_t)clients * LB_RELAY_LINKS;
	pid_t parent = getpid(), pid;

	r.lfd = malloc(n_l * sizeof(int));
	if (!r.lfd)
		return LB_ENOMEM;
	for (size_t i = 0; i < n_l; i++) {
		int link = (int)(i % LB_RELAY_LINKS), port = 0;
		r.lfd[i] = -1;
		if (link >= n_lock && link != LB_RELAY_RESOURCE)
			continue;
		if ((r.lfd[i] = listen_local(&port)) < 0) {
			lb_errorf("relay: cannot listen on loopback: %s", strerror(errno));
			for (size_t j = 0; j < i; j++)
				if (r.lfd[j] >= 0)
					close(r.lfd[j]);
			free(r.lfd);
			return LB_ESYS;
		}
		atomic_store(&sh->link[i / LB_RELAY_LINKS][link].port, port);
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (!lb_child_bind_to_parent(parent))
			_exit(1);
		relay_loop(&r);
	}
	for (size_t i = 0; i < n_l; i++)
		if (r.lfd[i] >= 0)
			close(r.lfd[i]);
	free(r.lfd);
	if (pid < 0) {
		lb_errorf("relay: fork failed: %s", strerror(errno));
		return LB_ESYS;
	}
	lb_signals_track_child(pid);
	return pid;
}
