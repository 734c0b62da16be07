/* shared.c - what any process of a run may do to the shared region. */
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shared.h"

void lb_event_emit(struct lb_shared *sh, int kind, int client, int node, int64_t value)
{
	lb_event_emit_at(sh, kind, client, node, value, lb_now_ns() - sh->t0_ns);
}

void lb_event_emit_at(struct lb_shared *sh, int kind, int client, int node, int64_t value,
		      int64_t t_ns)
{
	uint32_t i = atomic_fetch_add(&sh->n_events, 1);

	if (i >= LB_MAX_EVENTS)
		return;
	sh->events[i] = (struct lb_event){ .t_ns = t_ns, .kind = kind,
					   .client = client, .node = node, .value = value };
	/* last: a process killed between reserving the slot and here leaves a
	 * slot that is never read, not a zeroed "kill client 0 at 0 s" */
	atomic_store(&sh->event_ready[i], 1);
}

void lb_event_emit_incident(struct lb_shared *sh, int kind, int client, int64_t value)
{
	if (atomic_load(&sh->n_events) < LB_MAX_EVENTS / 2)
		lb_event_emit(sh, kind, client, -1, value);
}

int lb_client_signal(struct lb_shared *sh, int client, int sig)
{
	pid_t pid = sh->client[client].pid;

	if (pid <= 0)
		return -1;
	/* the client leads its own process group, with its adapter if it has one:
	 * a pause or a kill stops the whole program, as a GC pause or a crash does */
	return kill(-pid, sig) == 0 || kill(pid, sig) == 0 ? 0 : -1;
}

void lb_shared_mark_dead(struct lb_shared *sh, int client, int64_t t_ns)
{
	struct lb_client_slot *c = &sh->client[client];
	int64_t none = 0;

	atomic_compare_exchange_strong(&c->death_ns, &none, t_ns > 0 ? t_ns : 1);
	atomic_store(&c->dead, 1);
	atomic_store(&c->inside, 0);
}

uint64_t lb_shared_events_dropped(struct lb_shared *sh)
{
	uint32_t n = atomic_load(&sh->n_events);
	return n > LB_MAX_EVENTS ? n - LB_MAX_EVENTS : 0;
}

size_t lb_shared_events(struct lb_shared *sh, struct lb_event *out, size_t max)
{
	size_t n = atomic_load(&sh->n_events), k = 0;

	if (n > LB_MAX_EVENTS)
		n = LB_MAX_EVENTS;
	for (size_t i = 0; i < n && k < max; i++) /* a slot whose writer died unwritten */
		if (atomic_load(&sh->event_ready[i]))
			out[k++] = sh->events[i];
	return k;
}

void lb_record_section(const struct lb_record *rec, int client, int key, uint32_t seq,
		       int64_t death_ns, bool cut, struct lb_section *s)
{
	int state = atomic_load(&((struct lb_record *)rec)->state);

	*s = (struct lb_section){
		.client = client, .key = key, .seq = seq,
		.acquire_start_ns = rec->acquire_start_ns, .enter_ns = rec->enter_ns,
		.exit_ns = rec->exit_ns, .release_ns = rec->release_ns,
		.outcome = (enum lb_outcome)rec->outcome, .fence = rec->fence, .nodes = rec->nodes,
		.lease_end_ns = rec->lease_end_ns,
		.token = rec->token,
	};
	if (state == LB_REC_RELEASED)
		return;
	/* died inside, or after its exit but before its release returned. The
	 * parent stamps a death when it sees it, after the kill; a holder whose
	 * enter was stamped a moment later is still inside until then, never
	 * "open until the end" */
	if (state == LB_REC_ENTERED)
		s->exit_ns = death_ns > s->enter_ns ? death_ns : s->enter_ns;
	s->release_ns = -1;
	s->outcome = cut ? LB_OUT_CUT : LB_OUT_KILLED;
}

bool lb_shared_note_server(struct lb_shared *sh, int client, const char *host, int port,
			   const char *run_id, int64_t t_ns)
{
	uint32_t n = atomic_load(&sh->n_seen);

	for (uint32_t i = 0; i < n && i < LB_MAX_SEEN; i++)
		if (atomic_load(&sh->seen[i].ready) && sh->seen[i].port == port &&
		    !strcmp(sh->seen[i].host, host) && !strcmp(sh->seen[i].run_id, run_id))
			return true;
	/* two clients may add the same server at once: servers.csv keeps one */
	uint32_t i = atomic_fetch_add(&sh->n_seen, 1);
	if (i >= LB_MAX_SEEN)
		return false;
	struct lb_server_seen *s = &sh->seen[i];
	snprintf(s->host, sizeof(s->host), "%s", host);
	snprintf(s->run_id, sizeof(s->run_id), "%s", run_id);
	s->port = port;
	s->first_client = client;
	s->first_ns = t_ns;
	atomic_store(&s->ready, 1);
	return true;
}

/* The region is MAP_SHARED between processes: the futex is not private. */
static void wake_all(_Atomic int *word)
{
	syscall(SYS_futex, (int *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void lb_shared_wait_go(struct lb_shared *sh)
{
	/* a timeout all the same: a wake lost to a parent killed between its
	 * store and its wake still ends here (the client's death signal) */
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200 * 1000 * 1000 };

	while (!atomic_load(&sh->go) && !atomic_load(&sh->stop))
		syscall(SYS_futex, (int *)&sh->go, FUTEX_WAIT, 0, &ts, NULL, 0);
}

void lb_shared_go(struct lb_shared *sh)
{
	atomic_store(&sh->go, 1);
	wake_all(&sh->go);
}

void lb_shared_stop(struct lb_shared *sh)
{
	atomic_store(&sh->stop, 1);
	wake_all(&sh->go); /* those still waiting for go see stop */
}
