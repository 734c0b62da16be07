#include "plumbing.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define MAX_FANOUT 16
#define MAX_ARGV 16

const struct lb_script lb_script_cad = {
	.src = "if redis.call(\"get\", KEYS[1]) == ARGV[1] then "
	       "return redis.call(\"del\", KEYS[1]) else return 0 end",
	.sha = "cf0e94b2e9ffc7e04395cf88f7583fc309985910",
};

/* The release of the notify policy: the lock is not freed but reserved for
 * the waiter that takes the signal ("handoff", for ARGV[3] ms), so a releaser
 * that comes straight back cannot barge ahead of the queue. */
const struct lb_script lb_script_cad_notify = {
	.src = "if redis.call(\"get\", KEYS[1]) == ARGV[1] then redis.call(\"set\", KEYS[1], \"handoff\", \"PX\", ARGV["
	       "3]) redis.call(\"del\", KEYS[2]) redis.call(\"rpush\", KEYS[2], \"1\") redis.call(\"pexpire\", KEYS[2],"
	       " ARGV[2]) return 1 else return 0 end",
	.sha = "25266e152c335dbc6a875dc460594a8fe74fcd15",
};

/* A woken waiter's acquire: take the lock if it is free or reserved. */
const struct lb_script lb_script_claim = {
	.src = "local v = redis.call(\"get\", KEYS[1]) if v == false or v == \"handoff\" then redis.call(\"set\""
	       ", KEYS[1], ARGV[1], \"PX\", ARGV[2]) return 1 else return 0 end",
	.sha = "546ed7fdbd44345f13239d67c8e35ccdb95f7437",
};

/* fenced: take the lock and draw the next fence from a counter beside it. */
const struct lb_script lb_script_fence_acquire = {
	.src = "if redis.call(\"set\", KEYS[1], ARGV[1], \"NX\", \"PX\", ARGV[2]) then return redis.call(\"incr\", "
	       "KEYS[2]) else return 0 end",
	.sha = "e70b0df3f0b082dd11723bf7b6bdee577c86991f",
};

/* renewal: extend the lease only while it still holds our token. */
const struct lb_script lb_script_cas_pexpire = {
	.src = "if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"pexpire\", KEYS[1], ARGV[2]) "
	       "else return 0 end",
	.sha = "a7aba3bc5d6e99b3003da8b9d80a63b9f4092ecf",
};

/* The protected resource's side of fencing: it keeps the highest fence it has
 * accepted and who presented it ("<fence> <section>"), and refuses a fence
 * below it, or equal to it from another section (two holders with one fence:
 * a counter that went backwards). A read accepts its fence too, so that a
 * read-modify-write with an older fence cannot land after a newer reader. */
const struct lb_script lb_script_fenced_read = {
	.src = "local cur = redis.call(\"get\", KEYS[2]) local h, o = 0, \"\" if cur then local sp = string.fi"
	       "nd(cur, \" \") h = tonumber(string.sub(cur, 1, sp - 1)) o = string.sub(cur, sp + 1) end loca"
	       "l f = tonumber(ARGV[1]) if f < h or (f == h and ARGV[2] ~= o) then redis.call(\"incr\", KEYS"
	       "[3]) return redis.error_reply(\"STALE fence \" .. ARGV[1] .. \" not above \" .. h) end redis.c"
	       "all(\"set\", KEYS[2], ARGV[1] .. \" \" .. ARGV[2]) return redis.call(\"get\", KEYS[1]) or \"0\"",
	.sha = "70ee055ca4f9b7ad93f457d7d996eef9b9a895c7",
};

const struct lb_script lb_script_fenced_write = {
	.src = "local cur = redis.call(\"get\", KEYS[2]) local h, o = 0, \"\" if cur then local sp = string."
	       "find(cur, \" \") h = tonumber(string.sub(cur, 1, sp - 1)) o = string.sub(cur, sp + 1) end lo"
	       "cal f = tonumber(ARGV[1]) if f < h or (f == h and ARGV[2] ~= o) then redis.call(\"incr\", KE"
	       "YS[3]) return redis.error_reply(\"STALE fence \" .. ARGV[1] .. \" not above \" .. h) end red"
	       "is.call(\"set\", KEYS[2], ARGV[1] .. \" \" .. ARGV[2]) redis.call(\"set\", KEYS[1], ARGV[3])"
	       " return redis.call(\"incr\", KEYS[4])",
	.sha = "e0e6ed8728431488be406ccc8b4609b2af9d2a82",
};

/* The resource's plain write, counted: the resource itself knows how many
 * writes it applied, even those whose sender never heard back. */
const struct lb_script lb_script_counted_write = {
	.src = "redis.call(\"set\", KEYS[1], ARGV[1]) return redis.call(\"incr\", KEYS[2])",
	.sha = "9f9c27a420932bba6858760d2605c56c4510a530",
};

/* fair: one script for both ends (ARGV[1] "acquire" or "release"), so that
 * the queue's rules are written once (strategies/fair.c explains them).
 * A waiter's wake list holds "1" (the lock is yours) or "0" (you are first
 * in the queue now: poll at the short interval). */
const struct lb_script lb_script_fair = {
	.src =
	       "local key, q, lease, handed = KEYS[1], KEYS[2], KEYS[3], KEYS[4]\n"
	       "local op, me, ttl = ARGV[1], ARGV[2], ARGV[3]\n"
	       "local t = redis.call('time')\n"
	       "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	       "local function wake(who, v)\n"
	       "  redis.call('rpush', key .. ':w:' .. who, v)\n"
	       "  redis.call('pexpire', key .. ':w:' .. who, ttl)\n"
	       "end\n"
	       "local function pop_head(head)\n"
	       "  redis.call('lpop', q)\n"
	       "  redis.call('zrem', lease, head)\n"
	       "  local nxt = redis.call('lindex', q, 0)\n"
	       "  if nxt then wake(nxt, '0') end\n"
	       "end\n"
	       "local function first_alive()\n"
	       "  while true do\n"
	       "    local head = redis.call('lindex', q, 0)\n"
	       "    if not head then return nil end\n"
	       "    local e = redis.call('zscore', lease, head)\n"
	       "    if e and tonumber(e) >= now then return head end\n"
	       "    pop_head(head)\n"
	       "  end\n"
	       "end\n"
	       "local function hand_to(head)\n"
	       "  redis.call('set', key, head, 'PX', ttl)\n"
	       "  pop_head(head)\n"
	       "  redis.call('del', key .. ':w:' .. head)\n"
	       "  wake(head, '1')\n"
	       "  redis.call('set', handed, head .. ' ' .. now, 'PX', ttl)\n"
	       "end\n"
	       "local holder = redis.call('get', key)\n"
	       "if op == 'release' then\n"
	       "  if holder ~= me then return 0 end\n"
	       "  local head = first_alive()\n"
	       "  if head then hand_to(head) else redis.call('del', key) end\n"
	       "  return 1\n"
	       "end\n"
	       "local lease_ms, grace, far = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])\n"
	       "if holder == me then\n"
	       "  redis.call('pexpire', key, ttl)\n"
	       "  redis.call('del', key .. ':w:' .. me, handed)\n"
	       "  return 1\n"
	       "end\n"
	       "if holder then\n"
	       "  local h = redis.call('get', handed)\n"
	       "  if h then\n"
	       "    local sp = string.find(h, ' ')\n"
	       "    if string.sub(h, 1, sp - 1) == holder and now - tonumber(string.sub(h, sp + 1)) >= grace\n"
	       "       and redis.call('exists', key .. ':w:' .. holder) == 1 then\n"
	       "      redis.call('del', key, key .. ':w:' .. holder, handed)\n"
	       "      holder = false\n"
	       "    end\n"
	       "  end\n"
	       "end\n"
	       "if not holder then\n"
	       "  local head = first_alive()\n"
	       "  if not head or head == me then\n"
	       "    redis.call('set', key, me, 'PX', ttl)\n"
	       "    if head then pop_head(me) end\n"
	       "    return 1\n"
	       "  end\n"
	       "  hand_to(head)\n"
	       "end\n"
	       "if not redis.call('zscore', lease, me) then redis.call('rpush', q, me) end\n"
	       "if redis.call('lindex', q, 0) == me then\n"
	       "  redis.call('zadd', lease, now + lease_ms, me)\n"
	       "  return 2\n"
	       "end\n"
	       "redis.call('zadd', lease, now + lease_ms + far, me)\n"
	       "return 0",
	.sha = "c3bcfdd4fa0abb504a3de17753295326cede275d",
};

uint64_t lb_token_hash(const char *s, size_t len)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	if (len == 0)
		return 0;
	if (len > 32)
		len = 32;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h ? h : 1;
}

int lb_token_new(char out[LB_TOKEN_HEX + 1])
{
	unsigned char raw[LB_TOKEN_HEX / 2];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t k = getrandom(raw + got, sizeof(raw) - got, 0);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return LB_ESYS;
		}
		got += (size_t)k;
	}
	static const char hex[] = "0123456789abcdef";
	/* a table, not snprintf: this runs once per acquire (callgrind: snprintf
	 * here was a third of a client's instructions per section) */
	for (size_t i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[LB_TOKEN_HEX] = '\0';
	return 0;
}

/* A reply to SET NX / SETNX: 0 set, LB_EBUSY not set, LB_EREDIS; frees @r. */
static int set_outcome(redisReply *r)
{
	long long v;
	int rc = LB_EREDIS;

	if (lb_reply_ok(r) || (lb_reply_int(r, &v) && v == 1))
		rc = 0;
	else if (lb_reply_nil(r) || (lb_reply_int(r, &v) && v == 0))
		rc = LB_EBUSY;
	if (r)
		freeReplyObject(r);
	return rc;
}

int lb_set_nx_px(struct lb_node *n, const char *key, const char *val, int64_t ttl_ms)
{
	char px[24];
	int len = snprintf(px, sizeof(px), "%lld", (long long)ttl_ms);
	const char *argv[] = { "SET", key, val, "NX", "PX", px };
	size_t argvlen[] = { 3, strlen(key), strlen(val), 2, 2, (size_t)len };

	/* the argv form: hiredis need not parse a format string on the hot path */
	return set_outcome(lb_node_cmd_argv(n, 6, argv, argvlen));
}

int lb_setnx(struct lb_node *n, const char *key, const char *val)
{
	return set_outcome(lb_node_cmd(n, "SETNX %s %s", key, val));
}

int lb_getdel_release(struct lb_node *n, const char *key, const char *mine)
{
	redisReply *r = lb_node_cmd(n, "GETDEL %s", key);
	int rc = LB_EREDIS;

	if (lb_reply_nil(r))
		rc = LB_ELOST;
	else if (r && r->type == REDIS_REPLY_STRING)
		rc = lb_reply_str_eq(r, mine) ? 0 : LB_EFOREIGN;
	if (r)
		freeReplyObject(r);
	return rc;
}

static bool is_noscript(const redisReply *r)
{
	return r && r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8);
}

/* argv for EVAL/EVALSHA: cmd body numkeys keys... args... */
static int eval_argv(const char *cmd, const char *body, int nkeys, int nargs,
		     const char **kv, char numkeys[16], const char **argv)
{
	int argc = 0;

	if (nkeys + nargs + 3 > MAX_ARGV)
		return -1;
	snprintf(numkeys, 16, "%d", nkeys);
	argv[argc++] = cmd;
	argv[argc++] = body;
	argv[argc++] = numkeys;
	for (int i = 0; i < nkeys + nargs; i++)
		argv[argc++] = kv[i];
	return argc;
}

static redisReply *eval_src(struct lb_node *n, const struct lb_script *s, int nkeys, int nargs,
			    const char **kv)
{
	const char *argv[MAX_ARGV];
	char numkeys[16];
	int argc = eval_argv("EVAL", s->src, nkeys, nargs, kv, numkeys, argv);

	return argc < 0 ? NULL : lb_node_cmd_argv(n, argc, argv, NULL);
}

redisReply *lb_eval(struct lb_node *n, const struct lb_script *s, int nkeys, int nargs,
		    const char **kv)
{
	const char *argv[MAX_ARGV];
	char numkeys[16];
	int argc = eval_argv("EVALSHA", s->sha, nkeys, nargs, kv, numkeys, argv);
	redisReply *r;

	if (argc < 0)
		return NULL;
	r = lb_node_cmd_argv(n, argc, argv, NULL);
	if (is_noscript(r)) {
		freeReplyObject(r);
		r = eval_src(n, s, nkeys, nargs, kv);
	}
	return r;
}

/* A compare-and-delete reply: 0 deleted, LB_ELOST not ours, LB_EREDIS; frees @r. */
static int cad_outcome(redisReply *r)
{
	long long v;
	int rc = LB_EREDIS;

	if (lb_reply_int(r, &v))
		rc = v == 1 ? 0 : LB_ELOST;
	if (r)
		freeReplyObject(r);
	return rc;
}

int lb_cad_release(struct lb_node *n, const char *key, const char *mine)
{
	const char *kv[2] = { key, mine };
	return cad_outcome(lb_eval(n, &lb_script_cad, 1, 1, kv));
}

int lb_cad_release_notify(struct lb_node *n, const char *key, const char *mine, int64_t ttl_ms)
{
	char signal[256], ttl[24], reserve[24];

	snprintf(signal, sizeof(signal), "%.240s:signal", key);
	snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	/* long enough for the woken waiter to claim it, never longer than the lease */
	snprintf(reserve, sizeof(reserve), "%lld", (long long)(ttl_ms < 100 ? ttl_ms : 100));
	const char *kv[5] = { key, signal, mine, ttl, reserve };
	return cad_outcome(lb_eval(n, &lb_script_cad_notify, 2, 3, kv));
}

int lb_claim(struct lb_node *n, const char *key, const char *mine, int64_t ttl_ms)
{
	char ttl[24];
	long long v;
	int rc = LB_EREDIS;

	snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	const char *kv[3] = { key, mine, ttl };
	redisReply *r = lb_eval(n, &lb_script_claim, 1, 2, kv);
	if (lb_reply_int(r, &v))
		rc = v == 1 ? 0 : LB_EBUSY;
	if (r)
		freeReplyObject(r);
	return rc;
}

int lb_notify_wait(struct lb_node *n, const char *key, int64_t timeout_ms)
{
	char signal[256];

	snprintf(signal, sizeof(signal), "%.240s:signal", key);
	return lb_blpop(n, signal, timeout_ms, NULL, 0);
}

int lb_blpop(struct lb_node *n, const char *list, int64_t timeout_ms, char *val, size_t len)
{
	char secs[32];
	int rc = LB_EREDIS;

	/* BLPOP takes seconds with decimals (Redis >= 6); 0 would block forever */
	snprintf(secs, sizeof(secs), "%.3f", (double)(timeout_ms > 1 ? timeout_ms : 1) / 1000.0);
	/* a wait longer than the socket's timeout would be cut by it and
	 * reconnect on every wait: give this command the wait plus a margin */
	bool longer = timeout_ms + 500 > n->timeout_ms;
	if (longer && lb_node_connect(n) == 0)
		lb_node_set_timeout(n, timeout_ms + 1000);
	redisReply *r = lb_node_cmd(n, "BLPOP %s %s", list, secs);
	if (longer && n->ctx)
		lb_node_set_timeout(n, n->timeout_ms);
	if (r && r->type == REDIS_REPLY_ARRAY) {
		rc = 0;
		if (val && len > 0 && r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING)
			snprintf(val, len, "%s", r->element[1]->str);
		else if (val && len > 0)
			val[0] = '\0';
	} else if (lb_reply_nil(r))
		rc = LB_ETIMEOUT;
	if (r)
		freeReplyObject(r);
	return rc;
}

void lb_fanout(struct lb_node **nodes, size_t n, int64_t timeout_ms, const char *failpoint,
	       int argc, const char **argv, redisReply **replies)
{
	struct pollfd pfd[MAX_FANOUT];
	bool pending[MAX_FANOUT] = { false };
	size_t left = 0;
	int64_t deadline;

	for (size_t i = 0; i < n && i < MAX_FANOUT; i++) {
		int done = 0;

		replies[i] = NULL;
		if (lb_node_connect(nodes[i]) < 0)
			continue;
		nodes[i]->commands++;
		redisAppendCommandArgv(nodes[i]->ctx, argc, argv, NULL);
		while (!done)
			if (redisBufferWrite(nodes[i]->ctx, &done) != REDIS_OK)
				break;
		if (!done) {
			lb_node_close(nodes[i]);
			continue;
		}
		pending[i] = true;
		left++;
	}
	if (failpoint)
		lb_failpoint(failpoint);
	/* Counted from when reading starts: a client paused at the failpoint
	 * finds the replies that arrived meanwhile in its socket buffers. */
	deadline = lb_now_ns() + timeout_ms * LB_NS_PER_MS;
	while (left > 0) {
		int64_t wait_ms = (deadline - lb_now_ns()) / LB_NS_PER_MS;
		nfds_t k = 0;
		size_t idx[MAX_FANOUT];

		if (wait_ms < 0)
			break;
		for (size_t i = 0; i < n; i++)
			if (pending[i]) {
				pfd[k] = (struct pollfd){ .fd = nodes[i]->ctx->fd, .events = POLLIN };
				idx[k++] = i;
			}
		int ready = poll(pfd, k, (int)(wait_ms + 1));
		if (ready < 0 && errno != EINTR)
			break;
		for (nfds_t j = 0; ready > 0 && j < k; j++) {
			size_t i = idx[j];
			void *reply = NULL;

			if (!pfd[j].revents)
				continue;
			if (redisBufferRead(nodes[i]->ctx) != REDIS_OK ||
			    redisGetReplyFromReader(nodes[i]->ctx, &reply) != REDIS_OK) {
				lb_node_close(nodes[i]);
			} else if (!reply) {
				continue; /* a partial reply: wait for the rest */
			}
			replies[i] = reply;
			pending[i] = false;
			left--;
		}
	}
	for (size_t i = 0; i < n && i < MAX_FANOUT; i++)
		if (pending[i]) /* timed out: a reply is still owed on this context */
			lb_node_close(nodes[i]);
}

void lb_fanout_eval(struct lb_node **nodes, size_t n, int64_t timeout_ms, const char *failpoint,
		    const struct lb_script *s, int nkeys, int nargs, const char **kv,
		    redisReply **replies)
{
	const char *argv[MAX_ARGV];
	char numkeys[16];
	int argc = eval_argv("EVALSHA", s->sha, nkeys, nargs, kv, numkeys, argv);

	if (argc < 0) {
		for (size_t i = 0; i < n; i++)
			replies[i] = NULL;
		return;
	}
	lb_fanout(nodes, n, timeout_ms, failpoint, argc, argv, replies);
	for (size_t i = 0; i < n; i++)
		if (is_noscript(replies[i])) {
			freeReplyObject(replies[i]);
			replies[i] = eval_src(nodes[i], s, nkeys, nargs, kv);
		}
}

int lb_fence_acquire(struct lb_node *n, const char *key, const char *fence_key, const char *mine,
		     int64_t ttl_ms, int64_t *fence)
{
	char ttl[24];
	long long v;
	int rc = LB_EREDIS;

	snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	const char *kv[4] = { key, fence_key, mine, ttl };
	redisReply *r = lb_eval(n, &lb_script_fence_acquire, 2, 2, kv);
	if (lb_reply_int(r, &v)) {
		rc = v > 0 ? 0 : LB_EBUSY;
		*fence = v;
	}
	if (r)
		freeReplyObject(r);
	return rc;
}

int lb_cas_pexpire(struct lb_node *n, const char *key, const char *mine, int64_t ttl_ms)
{
	char ttl[24];

	snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	const char *kv[3] = { key, mine, ttl };
	return cad_outcome(lb_eval(n, &lb_script_cas_pexpire, 1, 2, kv));
}

int lb_counted_write(struct lb_node *n, const char *key, long long value)
{
	char v[24], ak[256];

	snprintf(ak, sizeof(ak), "%.240s:applied", key);
	snprintf(v, sizeof(v), "%lld", value);
	const char *kv[3] = { key, ak, v };
	redisReply *r = lb_eval(n, &lb_script_counted_write, 2, 1, kv);
	/* no reply: unknown whether it landed, unless it was never sent */
	int rc = !r ? (n->last == LB_SENT_NOT ? LB_EREDIS : LB_ETIMEOUT) :
		 r->type == REDIS_REPLY_INTEGER ? 0 : LB_EREDIS;
	if (r)
		freeReplyObject(r);
	return rc;
}

/* A fenced reply: an error starting STALE is a refusal, not a failure; no
 * reply at all leaves the outcome unknown. */
static int fenced_status(const struct lb_node *n, const redisReply *r)
{
	if (!r)
		return n->last == LB_SENT_NOT ? LB_EREDIS : LB_ETIMEOUT;
	if (r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "STALE", 5))
		return LB_ESTALE;
	return lb_reply_error(r) ? LB_EREDIS : 0;
}

/* The resource's three keys for @key: value, highest fence, refusals. */
static void fence_keys(const char *key, char fk[256], char sk[256])
{
	snprintf(fk, 256, "%.240s:fence", key);
	snprintf(sk, 256, "%.240s:stale", key);
}

int lb_fenced_read(struct lb_node *n, const char *key, int64_t fence, const char *section,
		   long long *value)
{
	char f[24], fk[256], sk[256];

	fence_keys(key, fk, sk);
	snprintf(f, sizeof(f), "%lld", (long long)fence);
	const char *kv[5] = { key, fk, sk, f, section };
	redisReply *r = lb_eval(n, &lb_script_fenced_read, 3, 2, kv);
	int rc = fenced_status(n, r);
	if (rc == 0 && r->type == REDIS_REPLY_STRING)
		*value = atoll(r->str);
	else if (rc == 0)
		rc = LB_EREDIS;
	if (r)
		freeReplyObject(r);
	return rc;
}

int lb_fenced_write(struct lb_node *n, const char *key, int64_t fence, const char *section,
		    long long value)
{
	char f[24], v[24], fk[256], sk[256], ak[256];

	fence_keys(key, fk, sk);
	snprintf(ak, sizeof(ak), "%.240s:applied", key);
	snprintf(f, sizeof(f), "%lld", (long long)fence);
	snprintf(v, sizeof(v), "%lld", value);
	const char *kv[7] = { key, fk, sk, ak, f, section, v };
	redisReply *r = lb_eval(n, &lb_script_fenced_write, 4, 3, kv);
	int rc = fenced_status(n, r);
	if (r)
		freeReplyObject(r);
	return rc;
}

/* A command whose reply only needs to be "not an error"; 0 or LB_EREDIS. */
static int cmd_ok(struct lb_node *n, const char *cmd, const char *key)
{
	redisReply *r = key ? lb_node_cmd(n, "%s %s", cmd, key) : lb_node_cmd(n, "%s", cmd);
	int rc = lb_reply_error(r) ? LB_EREDIS : 0;

	if (r)
		freeReplyObject(r);
	return rc;
}

/* Leave a failed transaction: DISCARD, or drop the connection if even that
 * fails, so that no later WATCH finds it still inside MULTI. */
static int discard(struct lb_node *n)
{
	if (cmd_ok(n, "DISCARD", NULL) < 0)
		lb_node_close(n);
	return LB_EREDIS;
}

int lb_watch_get(struct lb_node *n, const char *key, const char *mine, bool *held, bool *is_mine)
{
	redisReply *r;

	if (cmd_ok(n, "WATCH", key) < 0)
		return LB_EREDIS;
	r = lb_node_cmd(n, "GET %s", key);
	if (lb_reply_error(r)) {
		if (r) { /* a wrong type: leave nothing watched behind */
			freeReplyObject(r);
			cmd_ok(n, "UNWATCH", NULL);
		}
		return LB_EREDIS;
	}
	*held = !lb_reply_nil(r);
	*is_mine = mine && lb_reply_str_eq(r, mine);
	freeReplyObject(r);
	return 0;
}

int lb_multi_exec(struct lb_node *n, int argc, const char **argv)
{
	redisReply *r;
	int rc = LB_EREDIS;

	if (cmd_ok(n, "MULTI", NULL) < 0)
		return LB_EREDIS;
	r = lb_node_cmd_argv(n, argc, argv, NULL);
	if (!r) /* the connection died inside MULTI: it is closed */
		return LB_EREDIS;
	bool queued = r->type == REDIS_REPLY_STATUS;
	freeReplyObject(r);
	if (!queued) /* refused at queue time (READONLY, a bad argument) */
		return discard(n);
	r = lb_node_cmd(n, "EXEC");
	if (r && r->type == REDIS_REPLY_ARRAY) /* committed, unless the command failed in it */
		rc = r->elements == 1 && r->element[0]->type != REDIS_REPLY_ERROR ? 1 : LB_EREDIS;
	else if (lb_reply_nil(r))
		rc = 0;
	if (r)
		freeReplyObject(r);
	return rc;
}

int lb_watch_release(struct lb_node *n, const char *key, const char *mine)
{
	const char *del[] = { "DEL", key };
	bool held, is_mine;
	int rc;

	for (int i = 0; i < LB_WATCH_RELEASE_TRIES; i++) {
		if ((rc = lb_watch_get(n, key, mine, &held, &is_mine)) < 0)
			return rc;
		if (!is_mine) /* pipe.unwatch(); break: not ours, left alone */
			return cmd_ok(n, "UNWATCH", NULL) < 0 ? LB_EREDIS : LB_ELOST;
		rc = lb_multi_exec(n, 2, del);
		if (rc != 0) /* 0: WatchError, the key changed: try again */
			return rc == 1 ? 0 : LB_EREDIS;
	}
	return LB_EREDIS;
}

int64_t lb_lease_never(void *self)
{
	(void)self;
	return LB_LEASE_NEVER;
}

int64_t lb_lease_unknown(void *self)
{
	(void)self;
	return LB_LEASE_UNKNOWN;
}
