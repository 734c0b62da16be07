#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "signals.h"
#include "util.h"

#define READ_CHUNK 65536
#define QUEUE_CAP (4u << 20)      /* bytes a link queues before it stops reading */
#define ACCEPT_PAUSE_NS (20 * LB_NS_PER_MS) /* after EMFILE: try again later */
#define IDLE_WAKE_NS (20 * LB_NS_PER_MS)   /* control words are read this often */

struct chunk {
	struct chunk *next;
	int64_t due_ns;
	size_t len, off;          /* off: bytes of data already sent */
	char data[];
};

struct queue {
	struct chunk *head, *tail;
	size_t bytes;
};

/* Side 0 is the client (accepted), side 1 the server (connected).
 * q[s] holds the bytes read from side s, to be written to side 1 - s. */
struct conn {
	int fd[2];
	bool eof[2];              /* side s sent its last byte */
	bool dead[2];             /* side s cannot be written to any more */
	bool connecting;          /* the server side's connect is under way */
	struct queue q[2];
	struct lb_link_ctl *ctl;  /* the control word it obeys (relay.h: parties) */
	int flush_seen;
	short ev[2];              /* revents of the last poll, per side */
	struct lb_resp_parse parse; /* the client's requests, counted */
	enum { LOSE_NONE, LOSE_RESET, LOSE_HANG } lose; /* a reply to lose (relay.h) */
	bool reset_now;           /* the lost reply came: reset the connection */
};

struct relay {
	const struct lb_relay_link *links;
	size_t n_links;
	int *lfd;
	_Atomic uint64_t *epoch;
	struct conn **conns;
	size_t n_conns, cap_conns;
	int64_t accept_paused_until;
};

static int listen_local(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* A non-blocking connect to 127.0.0.1:@port; *pending when it is under way. */
/* 127.0.0.1:@port, or @far when it is given (a server of the user's). */
static int connect_local(int port, const struct sockaddr_storage *far, socklen_t far_len,
			 bool *pending)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const struct sockaddr *to = far_len ? (const struct sockaddr *)far : (struct sockaddr *)&a;
	int fd = socket(far_len ? far->ss_family : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0), one = 1;

	*pending = false;
	if (fd < 0 || (port <= 0 && !far_len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (connect(fd, to, far_len ? far_len : sizeof(a)) < 0) {
		if (errno != EINPROGRESS) {
			close(fd);
			return -1;
		}
		*pending = true;
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

static void queue_clear(struct queue *q)
{
	while (q->head) {
		struct chunk *n = q->head->next;
		free(q->head);
		q->head = n;
	}
	q->tail = NULL;
	q->bytes = 0;
}

static void conn_free(struct conn *c, bool reset)
{
	for (int s = 0; s < 2; s++) {
		if (reset)
			reset_close(c->fd[s]);
		else if (c->fd[s] >= 0)
			close(c->fd[s]);
		queue_clear(&c->q[s]);
	}
	free(c);
}

#define PARTY_BASE 0x7f010001u /* 127.1.0.1 */

void lb_party_addr(int p, char *buf, size_t len)
{
	uint32_t a = PARTY_BASE + (uint32_t)p;

	snprintf(buf, len, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

int lb_party_of(uint32_t addr)
{
	return addr >= PARTY_BASE && addr < PARTY_BASE + LB_MAX_PARTIES ? (int)(addr - PARTY_BASE)
									 : -1;
}

/* The control word a connection from @peer obeys on link @l. */
static struct lb_link_ctl *ctl_for(const struct lb_relay_link *l, const struct sockaddr_in *peer)
{
	int p = lb_party_of(ntohl(peer->sin_addr.s_addr));

	if (l->party_ctl && p >= 0 && p < l->n_parties)
		return &l->party_ctl[(size_t)p * l->party_stride];
	return l->ctl;
}

static int upstream_port(const struct lb_relay_link *l)
{
	return l->follow ? atomic_load(l->follow) : l->upstream;
}

static void on_accept(struct relay *r, size_t link)
{
	const struct lb_relay_link *l = &r->links[link];
	struct sockaddr_in peer = { 0 };
	socklen_t plen = sizeof(peer);
	int fd = accept4(r->lfd[link], (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC | SOCK_NONBLOCK),
	    one = 1;
	bool pending;

	if (fd < 0) {
		/* out of descriptors: the pending connection stays in the backlog
		 * and the listener stays readable; wait instead of spinning */
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			r->accept_paused_until = lb_now_ns() + ACCEPT_PAUSE_NS;
		return;
	}
	struct lb_link_ctl *k = ctl_for(l, &peer);
	if (atomic_load(&k->mode) == LB_LINK_CUT) {
		reset_close(fd);
		return;
	}
	int sfd = connect_local(upstream_port(l), &l->far, l->far_len, &pending);
	if (sfd < 0) { /* the server is down: so is the link */
		reset_close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct conn *c = calloc(1, sizeof(*c));
	if (c && r->n_conns == r->cap_conns) {
		size_t cap = r->cap_conns ? 2 * r->cap_conns : 64;
		struct conn **nc = realloc(r->conns, cap * sizeof(*nc));
		if (!nc) {
			free(c);
			c = NULL;
		} else {
			r->conns = nc;
			r->cap_conns = cap;
		}
	}
	if (!c) {
		reset_close(fd);
		reset_close(sfd);
		return;
	}
	*c = (struct conn){ .fd = { fd, sfd }, .connecting = pending, .ctl = k,
			    .flush_seen = atomic_load(&k->flush_gen) };
	r->conns[r->n_conns++] = c;
}

enum { P_START, P_ARRAY_LEN, P_BULK_HEAD, P_BULK_LEN, P_BULK_DATA, P_INLINE };

/* A length's digits, up to its LF (a CR before it, and anything not a digit,
 * skipped): true when the LF came. Capped: a hostile length is still finite. */
static bool length_digit(struct lb_resp_parse *p, char ch)
{
	if (ch == '\n')
		return true;
	if (ch >= '0' && ch <= '9' && p->num < (1LL << 40))
		p->num = p->num * 10 + (ch - '0');
	return false;
}

uint64_t lb_resp_count(struct lb_resp_parse *p, const char *buf, size_t n)
{
	uint64_t count = 0;

	for (size_t i = 0; i < n; i++) {
		char ch = buf[i];
		switch (p->state) {
		case P_START:
			if (ch == '*') {
				count++;
				p->state = P_ARRAY_LEN;
				p->num = 0;
			} else if (ch != '\r' && ch != '\n') {
				count++; /* an inline command, to its LF */
				p->state = P_INLINE;
			}
			break;
		case P_ARRAY_LEN:
			if (length_digit(p, ch)) {
				p->elems = p->num;
				p->state = p->elems > 0 ? P_BULK_HEAD : P_START;
			}
			break;
		case P_BULK_HEAD:
			p->num = 0;
			p->state = ch == '$' ? P_BULK_LEN : P_START;
			break;
		case P_BULK_LEN:
			if (length_digit(p, ch)) {
				p->left = p->num + 2;
				p->state = P_BULK_DATA;
			}
			break;
		case P_BULK_DATA: {
			size_t take = n - i < (size_t)p->left ? n - i : (size_t)p->left;
			p->left -= (long long)take;
			i += take - 1;
			if (p->left == 0)
				p->state = --p->elems > 0 ? P_BULK_HEAD : P_START;
			break;
		}
		case P_INLINE:
			if (ch == '\n')
				p->state = P_START;
			break;
		}
	}
	return count;
}

/* @got requests began in what the client sent: counted, and if the one
 * whose reply is to be lost is among them, this connection loses it. */
static void take_lose(struct conn *c, struct lb_link_ctl *k, uint64_t got)
{
	uint64_t before = atomic_fetch_add(&k->requests, got), at = atomic_load(&k->lose_at);

	if (!at || at <= before || at > before + got ||
	    !atomic_compare_exchange_strong(&k->lose_at, &at, 0))
		return;
	c->lose = atomic_load(&k->lose_hang) ? LOSE_HANG : LOSE_RESET;
	atomic_fetch_add(&k->lost, 1);
}

/* Read what side @s has for the other side: dropped (blackhole) or queued. */
static void read_side(struct conn *c, int s)
{
	struct lb_link_ctl *k = c->ctl;
	struct chunk *ch = malloc(sizeof(*ch) + READ_CHUNK);
	ssize_t n;

	if (!ch)
		return; /* try again next round */
	n = read(c->fd[s], ch->data, READ_CHUNK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		free(ch);
		return;
	}
	if (n <= 0) {
		free(ch);
		c->eof[s] = true;
		if (n < 0)
			c->dead[s] = true;
		return;
	}
	if (atomic_load(&k->mode) == LB_LINK_BLACKHOLE) {
		free(ch);
		return;
	}
	if (s == 0) /* what the server will be asked */
		take_lose(c, k, lb_resp_count(&c->parse, ch->data, (size_t)n));
	if (s == 1 && c->lose != LOSE_NONE) { /* the reply to lose, and after it */
		free(ch);
		c->reset_now = c->lose == LOSE_RESET;
		return;
	}
	int delay = atomic_load(s == 0 ? &k->delay_ms : &k->reply_delay_ms);
	struct chunk *small = realloc(ch, sizeof(*ch) + (size_t)n);
	if (small)
		ch = small;
	*ch = (struct chunk){ .due_ns = lb_now_ns() + (int64_t)(delay > 0 ? delay : 0) * LB_NS_PER_MS,
			      .len = (size_t)n };
	struct queue *q = &c->q[s];
	if (q->tail)
		q->tail->next = ch;
	else
		q->head = ch;
	q->tail = ch;
	q->bytes += (size_t)n;
}

/* Send what is due from q[s] to the other side, without blocking. Lowers
 * *next to the next due time; *want_out when the socket is full. */
static void send_due(struct conn *c, int s, int64_t now, int64_t *next, bool *want_out)
{
	struct queue *q = &c->q[s];
	int to = 1 - s;

	while (q->head && !c->dead[to]) {
		struct chunk *ch = q->head;
		if (ch->due_ns > now) {
			if (ch->due_ns < *next)
				*next = ch->due_ns;
			return;
		}
		ssize_t w = send(c->fd[to], ch->data + ch->off, ch->len - ch->off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			*want_out = true;
			return;
		}
		if (w < 0) { /* that side is gone: nothing more reaches it */
			c->dead[to] = true;
			queue_clear(q);
			return;
		}
		ch->off += (size_t)w;
		q->bytes -= (size_t)w;
		if (ch->off < ch->len)
			continue;
		q->head = ch->next;
		if (!q->head)
			q->tail = NULL;
		free(ch);
	}
}

/* Has a non-blocking connect finished? false while under way; on failure the
 * server side is dead. */
static void finish_connect(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (!(c->ev[1] & (POLLOUT | POLLERR | POLLHUP)))
		return;
	c->connecting = false;
	if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
		c->dead[1] = true;
		c->eof[1] = true;
	}
}

/* Is the connection over? The server is gone, or a side that finished has
 * had everything it sent delivered. */
static bool finished(const struct conn *c)
{
	if (c->dead[1])
		return true;
	if (c->eof[1] && !c->q[1].head)
		return true;
	return (c->eof[0] || c->dead[0]) && !c->q[0].head;
}

/* One connection's round: obey its control word, send what is due. */
static bool pump(struct conn *c, int64_t now, int64_t *next)
{
	struct lb_link_ctl *k = c->ctl;
	int mode = atomic_load(&k->mode);
	bool want_out[2] = { false, false };

	if (mode == LB_LINK_CUT || c->reset_now)
		return false;
	int gen = atomic_load(&k->flush_gen);
	if (gen != c->flush_seen) { /* the fault ended: everything is due */
		c->flush_seen = gen;
		for (int s = 0; s < 2; s++)
			for (struct chunk *ch = c->q[s].head; ch; ch = ch->next)
				ch->due_ns = now;
	}
	if (c->connecting)
		finish_connect(c);
	if (mode == LB_LINK_PASS && !c->connecting)
		for (int s = 0; s < 2; s++)
			send_due(c, s, now, next, &want_out[s]);
	c->ev[0] = c->ev[1] = 0;
	return !finished(c);
}

static short events_of(const struct conn *c, int s, int mode)
{
	short ev = 0;

	if (s == 1 && c->connecting)
		return POLLOUT;
	/* read while the queue to the other side has room (a blackhole drops) */
	if (!c->eof[s] && (mode == LB_LINK_BLACKHOLE || c->q[s].bytes < QUEUE_CAP))
		ev |= POLLIN;
	if (mode == LB_LINK_PASS && c->q[1 - s].head && !c->dead[s] &&
	    c->q[1 - s].head->due_ns <= lb_now_ns())
		ev |= POLLOUT;
	return ev;
}

static void __attribute__((noreturn)) relay_loop(struct relay *r)
{
	struct pollfd *pf = NULL;
	size_t cap_pf = 0;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN); /* the parent decides when the relay stops */
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	for (;;) {
		atomic_fetch_add(r->epoch, 1);
		int64_t now = lb_now_ns(), next = now + IDLE_WAKE_NS;
		size_t live = 0, k = 0;

		for (size_t i = 0; i < r->n_conns; i++) {
			struct conn *c = r->conns[i];
			if (pump(c, now, &next))
				r->conns[live++] = c;
			else
				conn_free(c, atomic_load(&c->ctl->mode) == LB_LINK_CUT ||
					     c->reset_now || c->dead[0] || c->dead[1]);
		}
		r->n_conns = live;
		size_t want = r->n_links + 2 * r->n_conns;
		if (want > cap_pf) {
			struct pollfd *np = realloc(pf, want * sizeof(*np));
			if (!np) { /* keep going with what fits */
				lb_sleep_ns(LB_NS_PER_MS);
				continue;
			}
			pf = np;
			cap_pf = want;
		}
		bool accepting = now >= r->accept_paused_until;
		if (!accepting && r->accept_paused_until < next)
			next = r->accept_paused_until;
		for (size_t i = 0; i < r->n_links; i++)
			pf[k++] = (struct pollfd){ .fd = accepting ? r->lfd[i] : -1, .events = POLLIN };
		for (size_t i = 0; i < r->n_conns; i++) {
			struct conn *c = r->conns[i];
			int mode = atomic_load(&c->ctl->mode);
			for (int s = 0; s < 2; s++) {
				/* nothing to wait for on a side: leave it out, or a hung-up
				 * socket would wake the loop at once, every round */
				short ev = events_of(c, s, mode);
				pf[k++] = (struct pollfd){ .fd = ev ? c->fd[s] : -1, .events = ev };
			}
		}
		int64_t wait_ms = (next - now + LB_NS_PER_MS - 1) / LB_NS_PER_MS;
		int ready = poll(pf, k, (int)(wait_ms < 1 ? 1 : wait_ms));
		if (ready <= 0)
			continue;
		size_t polled = r->n_conns; /* accepted connections join next round */
		for (size_t i = 0; i < polled; i++) {
			struct conn *c = r->conns[i];
			for (int s = 0; s < 2; s++) {
				short ev = pf[r->n_links + 2 * i + (size_t)s].revents;
				c->ev[s] = ev;
				if ((ev & (POLLIN | POLLHUP | POLLERR)) && !c->eof[s] &&
				    !(s == 1 && c->connecting))
					read_side(c, s);
			}
		}
		for (size_t i = 0; i < r->n_links; i++)
			if (pf[i].fd >= 0 && (pf[i].revents & POLLIN))
				on_accept(r, i);
	}
}

size_t lb_relay_fds_needed(size_t links, size_t conns)
{
	return links + 2 * conns + 16; /* + stdio, the shared mapping, slack */
}

bool lb_relay_settled(_Atomic uint64_t *epoch, uint64_t since)
{
	return atomic_load(epoch) >= since + 2;
}

pid_t lb_relay_start(const struct lb_relay_link *links, size_t n, _Atomic uint64_t *epoch)
{
	struct relay r = { .links = links, .n_links = n, .epoch = epoch };
	pid_t parent = getpid(), pid;
	size_t opened = 0;
	int rc = 0;

	r.lfd = malloc((n ? n : 1) * sizeof(int));
	if (!r.lfd)
		return LB_ENOMEM;
	for (; opened < n; opened++) {
		int port = 0;
		if ((r.lfd[opened] = listen_local(&port)) < 0) {
			struct rlimit rl = { 0 };
			getrlimit(RLIMIT_NOFILE, &rl);
			if (errno == EMFILE)
				lb_errorf("relay: out of file descriptors after %zu of %zu listeners "
					  "(RLIMIT_NOFILE %llu; raise it with ulimit -n, or run fewer "
					  "clients)", opened, n, (unsigned long long)rl.rlim_cur);
			else
				lb_errorf("relay: cannot listen on loopback: %s", strerror(errno));
			rc = LB_ESYS;
			break;
		}
		atomic_store(&links[opened].ctl->port, port);
	}
	if (rc == 0) {
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			if (!lb_child_bind_to_parent(parent))
				_exit(1);
			relay_loop(&r);
		}
		if (pid < 0) {
			lb_errorf("relay: fork failed: %s", strerror(errno));
			rc = LB_ESYS;
		}
	}
	for (size_t i = 0; i < opened; i++)
		close(r.lfd[i]);
	free(r.lfd);
	if (rc < 0)
		return rc;
	lb_signals_track_child(pid);
	return pid;
}
