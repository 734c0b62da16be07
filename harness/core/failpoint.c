#include "failpoint.h"
#include "util.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define MAX_FAILPOINTS 16
#define NAME_MAX_LEN 40

struct action {
	lb_failpoint_fn fn;
	void *arg;
	int remaining; /* -1 = forever */
};

struct slot {
	char name[NAME_MAX_LEN];
	struct action act[LB_FAILPOINT_MAX_ACTIONS]; /* called in this order */
	int n_act;
	unsigned hits;
};

/* Per process: a forked client arms its own copy. */
static struct slot slots[MAX_FAILPOINTS];

static struct slot *find(const char *name, int create)
{
	struct slot *free_slot = NULL;

	for (int i = 0; i < MAX_FAILPOINTS; i++) {
		if (slots[i].name[0] && !strcmp(slots[i].name, name))
			return &slots[i];
		if (!slots[i].name[0] && !free_slot)
			free_slot = &slots[i];
	}
	if (!create || !free_slot || strlen(name) >= NAME_MAX_LEN)
		return NULL;
	strcpy(free_slot->name, name);
	return free_slot;
}

int lb_failpoint_add(const char *name, lb_failpoint_fn fn, void *arg, int count)
{
	struct slot *s = find(name, 1);

	if (!s || !fn || s->n_act == LB_FAILPOINT_MAX_ACTIONS)
		return LB_EINVAL;
	s->act[s->n_act++] = (struct action){ .fn = fn, .arg = arg, .remaining = count };
	return 0;
}

int lb_failpoint_arm(const char *name, lb_failpoint_fn fn, void *arg, int count)
{
	struct slot *s = find(name, 1);

	if (!s || !fn)
		return LB_EINVAL;
	s->n_act = 0;
	return lb_failpoint_add(name, fn, arg, count);
}

void lb_failpoint_disarm_all(void)
{
	for (int i = 0; i < MAX_FAILPOINTS; i++)
		slots[i].n_act = 0;
}

void lb_failpoint(const char *name)
{
	struct slot *s = find(name, 1);

	if (!s)
		return;
	s->hits++;
	for (int i = 0; i < s->n_act; i++) {
		struct action *a = &s->act[i];
		if (a->remaining == 0)
			continue;
		if (a->remaining > 0)
			a->remaining--;
		a->fn(name, a->arg);
	}
}

unsigned lb_failpoint_hits(const char *name)
{
	struct slot *s = find(name, 0);
	return s ? s->hits : 0;
}

static const struct {
	const char *name, *where;
} known[] = {
	{ "after-setnx", "between SETNX and EXPIRE" },
	{ "between-get-del", "between its GET, which found its own token, and its DEL" },
	{ "after-send", "after sending its SET to every node, before reading a reply" },
	{ "between-get-getset", "between its GET, which found the lock expired, and its GETSET" },
	{ "before-renew", "in the watchdog, with the token in hand, before it sends a renewal" },
};

int lb_failpoint_code(const char *name)
{
	for (size_t i = 0; name && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(name, known[i].name))
			return (int)i + 1;
	return 0;
}

const char *lb_failpoint_name(int code)
{
	return code >= 1 && (size_t)code <= sizeof(known) / sizeof(known[0]) ? known[code - 1].name
									   : NULL;
}

const char *lb_failpoint_where(int code)
{
	return lb_failpoint_name(code) ? known[code - 1].where : NULL;
}

void lb_fp_crash(const char *name, void *arg)
{
	(void)name, (void)arg;
	kill(getpid(), SIGKILL);
}

void lb_fp_sleep(const char *name, void *arg)
{
	(void)name;
	lb_sleep_ns(*(const int64_t *)arg * LB_NS_PER_MS);
}

void lb_fp_stop(const char *name, void *arg)
{
	(void)name, (void)arg;
	raise(SIGSTOP);
}
