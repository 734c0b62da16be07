/*
 * consensus.c - etcd and ZooKeeper ensembles as lb_servers (consensus.h).
 *
 * Every member's directory and ports are chosen here; rserver.c forks, execs,
 * tracks, kills and removes. Readiness, leadership and quorum are asked of
 * the members over loopback with a deadline on every call: etcd through its
 * HTTP/JSON gateway (plain HTTP/1.0 over a socket), ZooKeeper through its
 * four-letter words.
 */
#include "consensus.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define START_ROUNDS 3         /* a port taken between probe and bind: new ports */
#define PROBE_MS 1000          /* one readiness or quorum look at the start */
/* one look after a fault: short, so a put stuck behind a dead leader does not
 * hide for long that another member already serves one (a loopback put takes
 * milliseconds) */
#define REPROBE_MS 250
#define TMPFS "/dev/shm"
#define TMPFS_MIN_FREE (512LL << 20) /* etcd preallocates a 64 MB WAL segment a member */

/* ZooKeeper's timing (docs/topologies.md says why): sessions may go down to
 * 2 x tickTime = 1 s */
#define ZK_TICK_MS 500
#define ZK_INIT_LIMIT 20
#define ZK_SYNC_LIMIT 4
#define ZK_MIN_SESSION_MS 1000
#define ZK_MAX_SESSION_MS 60000

const char *lb_consensus_name(enum lb_consensus_kind k)
{
	switch (k) {
	case LB_CONSENSUS_ETCD: return "etcd";
	case LB_CONSENSUS_ZOOKEEPER: return "zookeeper";
	case LB_CONSENSUS_NONE: break;
	}
	return "none";
}

int64_t lb_consensus_lease_ms(enum lb_consensus_kind k, int64_t asked_ms)
{
	if (k == LB_CONSENSUS_ZOOKEEPER)
		return asked_ms < ZK_MIN_SESSION_MS ? ZK_MIN_SESSION_MS :
		       asked_ms > ZK_MAX_SESSION_MS ? ZK_MAX_SESSION_MS : asked_ms;
	int64_t s = (asked_ms + 999) / 1000; /* etcd's TTL is whole seconds */
	return (s < 2 ? 2 : s) * 1000;
}

const char *lb_consensus_shown(enum lb_consensus_kind k)
{
	return k == LB_CONSENSUS_ZOOKEEPER ? "ZooKeeper" : lb_consensus_name(k);
}

int lb_consensus_parse(const char *name, enum lb_consensus_kind *k)
{
	if (name && !strcmp(name, "etcd"))
		*k = LB_CONSENSUS_ETCD;
	else if (name && !strcmp(name, "zookeeper"))
		*k = LB_CONSENSUS_ZOOKEEPER;
	else {
		lb_errorf("unknown consensus system '%.64s': expected etcd or zookeeper",
			  name ? name : "");
		return LB_EINVAL;
	}
	return 0;
}

/* ---- one request, one answer, a deadline on each step ---- */


/* Send @req to 127.0.0.1:@port and read until the peer closes (or @cap - 1
 * bytes): the number of bytes read into @out, or a negative status. */
static int exchange(int port, const char *req, size_t len, char *out, size_t cap, int timeout_ms)
{
	int64_t deadline = lb_now_ns() + (int64_t)timeout_ms * LB_NS_PER_MS;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	size_t got = 0, sent = 0;
	int rc = 0, err = 0;
	socklen_t elen = sizeof(err);

	if (fd < 0 || cap == 0)
		return fd < 0 ? LB_ESYS : LB_EINVAL;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS)
		rc = LB_ENOTHERE;
	else if ((rc = lb_wait_fd(fd, POLLOUT, deadline)) == 0 &&
		 (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err))
		rc = LB_ENOTHERE;
	while (rc == 0 && sent < len) {
		ssize_t n = send(fd, req + sent, len - sent, MSG_NOSIGNAL);
		if (n > 0)
			sent += (size_t)n;
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			rc = LB_ENOTHERE;
		else
			rc = lb_wait_fd(fd, POLLOUT, deadline);
	}
	while (rc == 0 && got < cap - 1) {
		ssize_t n = recv(fd, out + got, cap - 1 - got, 0);
		if (n > 0)
			got += (size_t)n;
		else if (n == 0)
			break;
		else if (errno != EAGAIN && errno != EINTR)
			rc = LB_ENOTHERE;
		else
			rc = lb_wait_fd(fd, POLLIN, deadline);
	}
	close(fd);
	out[got] = '\0';
	return rc < 0 ? rc : (int)got;
}

int lb_consensus_http(int port, const char *path, const char *json_body, char *out, size_t cap,
		      int timeout_ms)
{
	char req[4096], resp[16384];
	int status = 0, n;

	if (json_body)
		n = snprintf(req, sizeof(req), "POST %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n"
			     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
			     path, port, strlen(json_body), json_body);
	else
		n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n", path,
			     port);
	if (n < 0 || (size_t)n >= sizeof(req))
		return LB_EINVAL;
	int rc = exchange(port, req, (size_t)n, resp, sizeof(resp), timeout_ms);
	if (rc < 0)
		return rc;
	const char *body = strstr(resp, "\r\n\r\n");
	if (sscanf(resp, "HTTP/1.%*1[01] %3d", &status) != 1 || status < 100 || !body)
		return LB_EPROTO;
	if (out && cap)
		snprintf(out, cap, "%s", body + 4);
	return status;
}

int lb_consensus_4lw(int port, const char *word, char *out, size_t cap, int timeout_ms)
{
	int rc = exchange(port, word, strlen(word), out, cap, timeout_ms);
	return rc < 0 ? rc : 0;
}

bool lb_json_field(const char *json, const char *name, char *out, size_t cap)
{
	char key[80];
	size_t n = 0;

	if (snprintf(key, sizeof(key), "\"%s\"", name) >= (int)sizeof(key) || cap == 0)
		return false;
	const char *p = json ? strstr(json, key) : NULL;
	if (!p)
		return false;
	p += strlen(key);
	while (*p == ' ')
		p++;
	if (*p++ != ':')
		return false;
	while (*p == ' ')
		p++;
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' || n + 1 >= cap)
				return false;
			out[n++] = *p;
		}
		if (*p != '"')
			return false;
	} else {
		for (; (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || (*p >= 'a' && *p <= 'z');
		     p++) {
			if (n + 1 >= cap)
				return false;
			out[n++] = *p;
		}
		if (n == 0)
			return false;
	}
	out[n] = '\0';
	return true;
}

bool lb_base64(const void *in, size_t n, char *out, size_t cap)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *b = in;
	size_t o = 0;

	if (cap < (n + 2) / 3 * 4 + 1)
		return false;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)b[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)b[i + 1] << 8;
		if (i + 2 < n)
			v |= b[i + 2];
		out[o++] = tab[(v >> 18) & 63];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = '\0';
	return true;
}

/* ---- readiness, quorum and leadership of each kind ---- */

/* An etcd member answers /version (no quorum needed). */
static int etcd_ready(const struct lb_server *s)
{
	char body[512];
	return lb_consensus_http(s->port, "/version", NULL, body, sizeof(body), 200) == 200 &&
		       strstr(body, "etcdserver") ? 0 : 1;
}

/* A ZooKeeper server answers ruok with imok (it runs; quorum or not). */
static int zk_ready(const struct lb_server *s)
{
	char out[16];
	return lb_consensus_4lw(s->port, "ruok", out, sizeof(out), 200) == 0 &&
		       !strcmp(out, "imok") ? 0 : 1;
}

/* The member can be asked: it runs and is not stopped. */
static bool askable(struct lb_server *s)
{
	return s && lb_server_alive(s) && !s->paused;
}

/* A put of lockbench's own probe key served through @s: a quorum wrote it. */
static bool etcd_put_served(const struct lb_server *s, int timeout_ms)
{
	char key[64], val[16], body[256], out[1024];

	lb_base64("lockbench:quorum-probe", 22, key, sizeof(key));
	lb_base64("1", 1, val, sizeof(val));
	snprintf(body, sizeof(body), "{\"key\":\"%s\",\"value\":\"%s\"}", key, val);
	return lb_consensus_http(s->port, "/v3/kv/put", body, out, sizeof(out), timeout_ms) == 200 &&
	       strstr(out, "\"revision\"");
}

/* What `srvr` says the server's mode is: 'L'eader, 'F'ollower, 0 otherwise. */
static char zk_mode(const struct lb_server *s, int timeout_ms)
{
	char out[2048];

	if (lb_consensus_4lw(s->port, "srvr", out, sizeof(out), timeout_ms) < 0)
		return 0;
	if (strstr(out, "Mode: leader"))
		return 'L';
	return strstr(out, "Mode: follower") ? 'F' : 0;
}

/* One look: a write would be served now. @all: every member must take part
 * (the start); else a majority. */
static bool quorum_now(const struct lb_consensus *c, bool all, int timeout_ms)
{
	int leaders = 0, followers = 0, served = 0;

	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		struct lb_server *s = c->member[i];
		if (!askable(s))
			continue;
		if (c->kind == LB_CONSENSUS_ETCD) {
			/* any member forwards a put to the leader: every one must
			 * serve one at the start, one will do after */
			if (etcd_put_served(s, timeout_ms) && (served++, !all))
				return true;
			continue;
		}
		char m = zk_mode(s, timeout_ms);
		leaders += m == 'L';
		followers += m == 'F';
	}
	if (c->kind == LB_CONSENSUS_ETCD)
		return all && served == LB_CONSENSUS_MEMBERS;
	if (all)
		return leaders == 1 && leaders + followers == LB_CONSENSUS_MEMBERS;
	return leaders == 1 && leaders + followers > LB_CONSENSUS_MEMBERS / 2;
}

int lb_consensus_wait_quorum(const struct lb_consensus *c, int timeout_ms)
{
	int64_t deadline = lb_now_ns() + (int64_t)timeout_ms * LB_NS_PER_MS;

	do {
		int64_t left = (deadline - lb_now_ns()) / LB_NS_PER_MS;
		if (quorum_now(c, false, (int)(left < REPROBE_MS ? (left > 50 ? left : 50) : REPROBE_MS)))
			return 0;
		lb_sleep_ns(20 * LB_NS_PER_MS);
	} while (lb_now_ns() < deadline);
	return LB_ETIMEOUT;
}

/* etcd: the member whose id the member with the highest raft term names as
 * its leader; -1 when none answers or names one of ours. */
static int etcd_leader_now(const struct lb_consensus *c)
{
	char out[2048], id[32], leader[32] = "", v[32];
	long long best_term = -1;

	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		if (!askable(c->member[i]) ||
		    lb_consensus_http(c->member[i]->port, "/v3/maintenance/status", "{}", out,
				      sizeof(out), 500) != 200 ||
		    !lb_json_field(out, "member_id", id, sizeof(id)))
			continue;
		long long term = lb_json_field(out, "raft_term", v, sizeof(v)) ? atoll(v) : 0;
		if (term > best_term && lb_json_field(out, "leader", v, sizeof(v)) && strcmp(v, "0")) {
			best_term = term;
			snprintf(leader, sizeof(leader), "%s", v);
		}
	}
	for (int i = 0; i < LB_CONSENSUS_MEMBERS && leader[0]; i++)
		if (!strcmp(c->member_id[i], leader))
			return i;
	return -1;
}

int lb_consensus_leader(const struct lb_consensus *c, int timeout_ms)
{
	int64_t deadline = lb_now_ns() + (int64_t)timeout_ms * LB_NS_PER_MS;

	do {
		for (int i = 0; c->kind == LB_CONSENSUS_ZOOKEEPER && i < LB_CONSENSUS_MEMBERS; i++)
			if (askable(c->member[i]) && zk_mode(c->member[i], 500) == 'L')
				return i;
		if (c->kind == LB_CONSENSUS_ETCD) {
			int i = etcd_leader_now(c);
			if (i >= 0)
				return i;
		}
		lb_sleep_ns(20 * LB_NS_PER_MS);
	} while (lb_now_ns() < deadline);
	return LB_ETIMEOUT;
}

/* ---- starting an ensemble ---- */

/* A free loopback port none of @taken[0..n) is. */
static int fresh_port(const int *taken, int n)
{
	for (int tries = 0; tries < 20; tries++) {
		int p = lb_free_port(), dup = 0;
		if (p < 0)
			return p;
		for (int i = 0; i < n; i++)
			dup |= taken[i] == p;
		if (!dup)
			return p;
	}
	return LB_ESYS;
}

/* tmpfs for the data (etcd 3.4 cannot skip fsync) when it is writable and
 * roomy; else NULL: $TMPDIR or /tmp. */
static const char *data_parent(void)
{
	struct statvfs v;

	if (access(TMPFS, W_OK | X_OK) == 0 && statvfs(TMPFS, &v) == 0 &&
	    (long long)v.f_bavail * (long long)v.f_frsize >= TMPFS_MIN_FREE)
		return TMPFS;
	return NULL;
}

/* The ports of one ensemble, all distinct, chosen before any member starts:
 * each member's command names the others'. */
struct ports {
	int client[LB_CONSENSUS_MEMBERS], peer[LB_CONSENSUS_MEMBERS], election[LB_CONSENSUS_MEMBERS];
};

static int choose_ports(struct ports *p, bool election)
{
	int taken[3 * LB_CONSENSUS_MEMBERS], n = 0;

	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		int *slot[3] = { &p->client[i], &p->peer[i], &p->election[i] };
		for (int k = 0; k < (election ? 3 : 2); k++) {
			if ((*slot[k] = fresh_port(taken, n)) < 0)
				return *slot[k];
			taken[n++] = *slot[k];
		}
	}
	return 0;
}

/* Arguments of one member's command: fixed strings and formatted ones. */
struct command {
	const char *argv[40];
	char store[8][200];
	int n, k;
};

static void add(struct command *m, const char *arg) { m->argv[m->n++] = arg; }

static void addf(struct command *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(struct command *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->store[m->k], sizeof(m->store[m->k]), fmt, ap);
	va_end(ap);
	add(m, m->store[m->k++]);
}

/* etcd member @i: default heartbeat (100 ms) and election timeout (1000 ms),
 * its data in its directory, the cluster named by a token of its own. */
static void etcd_command(const struct ports *p, int i, struct command *m)
{
	add(m, "etcd"); /* runs: etcd (etcd-server), exec'd by rserver.c */
	add(m, "--name");
	addf(m, "m%d", i);
	add(m, "--data-dir");
	add(m, "data");
	add(m, "--listen-client-urls");
	addf(m, "http://127.0.0.1:%d", p->client[i]);
	add(m, "--advertise-client-urls");
	add(m, m->store[m->k - 1]);
	add(m, "--listen-peer-urls");
	addf(m, "http://127.0.0.1:%d", p->peer[i]);
	add(m, "--initial-advertise-peer-urls");
	add(m, m->store[m->k - 1]);
	add(m, "--initial-cluster");
	addf(m, "m0=http://127.0.0.1:%d,m1=http://127.0.0.1:%d,m2=http://127.0.0.1:%d", p->peer[0],
	     p->peer[1], p->peer[2]);
	add(m, "--initial-cluster-state");
	add(m, "new");
	/* no member of another ensemble (another run's) can join this one */
	add(m, "--initial-cluster-token");
	addf(m, "lockbench-%d-%d", (int)getpid(), p->peer[0]);
	add(m, "--logger");
	add(m, "zap");
	add(m, "--log-outputs");
	add(m, "stderr");
	m->argv[m->n] = NULL;
}

/* A ZooKeeper server: its zoo.cfg is in its directory (zk_write_config). */
static void zk_command(struct command *m)
{
	add(m, "java"); /* runs: java (openjdk-17-jre-headless), exec'd by rserver.c */
	add(m, "-Xmx128m");
	add(m, "-XX:-UsePerfData"); /* no hsperfdata file in /tmp to outlive a kill -9 */
	add(m, "-Djava.io.tmpdir=.");
	add(m, "-Djava.net.preferIPv4Stack=true");
	/* slf4j-simple: ZooKeeper's log to stderr, which rserver.c puts in the log */
	add(m, "-Dorg.slf4j.simpleLogger.showDateTime=true");
	add(m, "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS");
	add(m, "-cp");
	add(m, "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar");
	add(m, "org.apache.zookeeper.server.quorum.QuorumPeerMain");
	add(m, "./zoo.cfg");
	m->argv[m->n] = NULL;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(text, f) >= 0;
	if (!f || fclose(f) != 0 || !ok) {
		lb_errorf("cannot write %s: %s", path, strerror(errno));
		return LB_ESYS;
	}
	return 0;
}

/* ZooKeeper server @i's zoo.cfg and data/myid (myid = i + 1). */
static int zk_write_config(const struct lb_server *s, const struct ports *p, int i)
{
	char cfg[2048], data[300], myid[16];

	snprintf(data, sizeof(data), "%s/data", s->dir);
	if (mkdir(data, 0700) < 0) {
		lb_errorf("cannot create %s: %s", data, strerror(errno));
		return LB_ESYS;
	}
	snprintf(cfg, sizeof(cfg),
		 "tickTime=%d\ninitLimit=%d\nsyncLimit=%d\nminSessionTimeout=%d\n"
		 "maxSessionTimeout=%d\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"
		 "maxClientCnxns=0\nadmin.enableServer=false\n"
		 "4lw.commands.whitelist=ruok,srvr,stat,mntr,dump\n"
		 "server.1=127.0.0.1:%d:%d\nserver.2=127.0.0.1:%d:%d\nserver.3=127.0.0.1:%d:%d\n",
		 ZK_TICK_MS, ZK_INIT_LIMIT, ZK_SYNC_LIMIT, ZK_MIN_SESSION_MS, ZK_MAX_SESSION_MS, data,
		 p->client[i], p->peer[0], p->election[0], p->peer[1], p->election[1], p->peer[2],
		 p->election[2]);
	snprintf(myid, sizeof(myid), "%d\n", i + 1);
	int rc = write_file(s->dir, "zoo.cfg", cfg);
	return rc < 0 ? rc : write_file(s->dir, "data/myid", myid);
}

/* The last line of @s's log (what it said before it failed), into @out; true
 * when its last 4 KiB say a port was taken. */
static bool last_log_line(const struct lb_server *s, char *out, size_t cap)
{
	char buf[4096];
	FILE *f = fopen(s->log_path, "r");
	size_t n = 0;

	out[0] = '\0';
	if (!f)
		return false;
	if (fseek(f, -(long)(sizeof(buf) - 1), SEEK_END) < 0)
		rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	char *line = strrchr(buf, '\n');
	snprintf(out, cap, "%.300s", line ? line + 1 : buf);
	return strcasestr(buf, "address already in use") != NULL;
}

/* Prepare the members' directories and commands (nothing runs yet). */
static int prepare_members(struct lb_consensus *c, const struct ports *p)
{
	const char *name = lb_consensus_name(c->kind);
	char log_name[32];

	snprintf(log_name, sizeof(log_name), "%s.log", name);
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		struct command m = { .n = 0 };
		if (c->kind == LB_CONSENSUS_ETCD)
			etcd_command(p, i, &m);
		else
			zk_command(&m);
		static const char *const etcd_env[] = { "ETCD_", NULL };
		static const char *const java_env[] = { "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
							"JDK_JAVA_OPTIONS", "CLASSPATH", "JVMFLAGS",
							NULL };
		struct lb_server_opts o = {
			.command = m.argv, .port = p->client[i], .log_name = log_name, .kind = name,
			.parent_dir = data_parent(),
			.drop_env = c->kind == LB_CONSENSUS_ETCD ? etcd_env : java_env,
			.ready = c->kind == LB_CONSENSUS_ETCD ? etcd_ready : zk_ready,
		};
		c->member[i] = lb_server_prepare(&o);
		if (!c->member[i])
			return LB_ESYS;
		c->peer_port[i] = p->peer[i];
		c->election_port[i] = c->kind == LB_CONSENSUS_ZOOKEEPER ? p->election[i] : 0;
		if (c->kind == LB_CONSENSUS_ZOOKEEPER &&
		    zk_write_config(c->member[i], p, i) < 0)
			return LB_ESYS;
	}
	return 0;
}

/* Every member answers (or one died: its index as -1 - i), by @deadline. */
static int members_answer(struct lb_consensus *c, int64_t deadline)
{
	bool up[LB_CONSENSUS_MEMBERS] = { false };
	int n = 0;

	while (n < LB_CONSENSUS_MEMBERS) {
		for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
			if (up[i])
				continue;
			int rc = lb_server_poll_ready(c->member[i]);
			if (rc < 0)
				return -1 - i;
			if (rc == 0)
				up[i] = true, n++;
		}
		if (n < LB_CONSENSUS_MEMBERS && lb_now_ns() > deadline)
			for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
				if (!up[i])
					return -1 - i;
		lb_sleep_ns(20 * LB_NS_PER_MS);
	}
	return 0;
}

/* etcd: each member's id, for lb_consensus_leader; ZooKeeper: its myid. */
static int read_member_ids(struct lb_consensus *c)
{
	char out[2048];

	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		if (c->kind == LB_CONSENSUS_ZOOKEEPER) {
			snprintf(c->member_id[i], sizeof(c->member_id[i]), "%d", i + 1);
			continue;
		}
		if (lb_consensus_http(c->member[i]->port, "/v3/maintenance/status", "{}", out,
				      sizeof(out), PROBE_MS) != 200 ||
		    !lb_json_field(out, "member_id", c->member_id[i], sizeof(c->member_id[i])))
			return -1 - i;
	}
	return 0;
}

/* One attempt on fresh ports. *@clash: a member found its port taken. */
static int start_once(struct lb_consensus *c, int64_t deadline, bool *clash)
{
	const char *name = lb_consensus_name(c->kind);
	struct ports p;
	int rc, bad = -1;
	const char *why = "did not start";

	if ((rc = choose_ports(&p, c->kind == LB_CONSENSUS_ZOOKEEPER)) < 0 ||
	    (rc = prepare_members(c, &p)) < 0) {
		if (rc != LB_ESYS || !c->member[0])
			lb_errorf("cannot prepare the %s ensemble's ports and directories", name);
		return rc < 0 ? rc : LB_ESYS;
	}
	int64_t t0 = lb_now_ns();
	for (int i = 0; i < LB_CONSENSUS_MEMBERS && bad < 0; i++)
		if (lb_server_respawn_begin(c->member[i]) < 0)
			bad = i;
	if (bad < 0 && (rc = members_answer(c, deadline)) < 0)
		bad = -1 - rc, why = lb_server_alive(c->member[-1 - rc]) ? "did not answer in time" : "died";
	while (bad < 0 && !quorum_now(c, true, PROBE_MS)) {
		if (lb_now_ns() > deadline) {
			bad = 0, why = "answers, but the ensemble served no write in time; member 0";
			break;
		}
		lb_sleep_ns(20 * LB_NS_PER_MS);
	}
	c->ready_ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
	if (bad < 0 && (rc = read_member_ids(c)) < 0)
		bad = -1 - rc, why = "did not say its member id";
	if (bad < 0)
		return 0;
	char line[320];
	struct lb_server *s = c->member[bad];
	*clash = last_log_line(s, line, sizeof(line));
	if (!*clash)
		lb_errorf("%s member %d (127.0.0.1:%d, log %s) %s after %lld ms; its log ends: %s", name,
			  bad, s->port, s->log_path, why, (long long)c->ready_ms,
			  line[0] ? line : "(empty)");
	return LB_ENOTHERE;
}

static void stop_members(struct lb_consensus *c)
{
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		lb_server_destroy(c->member[i]);
		c->member[i] = NULL;
	}
}

int lb_consensus_start(struct lb_consensus *c, enum lb_consensus_kind kind, int64_t ready_timeout_ms)
{
	int64_t deadline = lb_now_ns() + ready_timeout_ms * LB_NS_PER_MS;
	int rc = LB_EINVAL;

	memset(c, 0, sizeof(*c));
	if (kind != LB_CONSENSUS_ETCD && kind != LB_CONSENSUS_ZOOKEEPER) {
		lb_errorf("no consensus system of kind %d: expected etcd or zookeeper", (int)kind);
		return LB_EINVAL;
	}
	for (int round = 0; round < START_ROUNDS; round++) {
		bool clash = false;
		c->kind = kind;
		rc = start_once(c, deadline, &clash);
		if (rc == 0)
			return 0;
		stop_members(c);
		memset(c, 0, sizeof(*c));
		if (!clash)
			break;
	}
	return rc;
}

void lb_consensus_destroy(struct lb_consensus *c)
{
	if (!c)
		return;
	/* SIGTERM first: a graceful leave, then the directories go */
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		lb_server_stop(c->member[i]);
	stop_members(c);
	memset(c, 0, sizeof(*c));
}
