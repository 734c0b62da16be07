/*
 * results.c - a run's files: the directory, history.csv, waiters.csv,
 * latency.csv, events.csv, keyevents.csv, meta.txt, summary.json and summary.csv, each
 * whole or absent (outfile.h).
 */
#include "adapter.h"
#include "consensus.h"
#include "esc.h"
#include "outfile.h"
#include "owned.h"
#include "results.h"
#include "shared.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

int lb_results_prepare_dir(const char *dir)
{
	if (strlen(dir) > 3000) { /* a directory of LB_DIR_MAX and what lockbench adds below */
		lb_errorf("output directory path too long (%zu bytes): %.100s...", strlen(dir), dir);
		return LB_EINVAL;
	}
	return lb_owned_claim("--out", dir);
}

static void write_history(FILE *f, const struct lb_run_result *res)
{
	fprintf(f, "%s\n", LB_HISTORY_HEADER);
	for (size_t i = 0; i < res->n_sections; i++) {
		const struct lb_section *s = &res->sections[i];
		fprintf(f, "%d,%u,%lld,%lld,%lld,", s->client, s->seq,
			(long long)s->acquire_start_ns, (long long)s->enter_ns,
			(long long)s->exit_ns);
		if (s->release_ns >= 0)
			fprintf(f, "%lld", (long long)s->release_ns);
		fprintf(f, ",%s,", lb_outcome_name(s->outcome));
		if (s->fence >= 0)
			fprintf(f, "%lld", (long long)s->fence);
		fputc(',', f); /* nodes: "0+1+2", empty when not known */
		for (int b = 0, first = 1; b < 32; b++)
			if (s->nodes >> b & 1) {
				fprintf(f, "%s%d", first ? "" : "+", b);
				first = 0;
			}
		/* lease_end_ns: empty when the lock could not tell, never without a TTL */
		if (s->lease_end_ns == LB_LEASE_NEVER)
			fprintf(f, ",never");
		else if (lb_lease_known(s))
			fprintf(f, ",%lld", (long long)s->lease_end_ns);
		else
			fputc(',', f);
		fputc(',', f); /* token: its hash, empty when not known */
		if (s->token)
			fprintf(f, "%llx", (unsigned long long)s->token);
		fputc('\n', f);
	}
}

static void write_waiters(FILE *f, const struct lb_run_result *res)
{
	fprintf(f, "%s\n", LB_WAITERS_HEADER);
	for (size_t i = 0; i < res->n_waiters; i++) {
		const struct lb_waiter *w = &res->waiters[i];
		fprintf(f, "%d,%u,%lld,", w->client, w->calls, (long long)w->start_ns);
		if (w->last_try_ns >= 0)
			fprintf(f, "%lld", (long long)w->last_try_ns);
		fprintf(f, ",%lld,%s\n", (long long)w->end_ns, lb_wait_end_name(w->ended));
	}
}

static void write_latency(FILE *f, const struct lb_hist *h)
{
	uint64_t low, high;

	fprintf(f, "bucket_low_us,bucket_high_us,count\n");
	for (size_t i = 0; i < LB_HIST_BUCKETS; i++)
		if (h->counts[i]) {
			lb_hist_bucket_range(i, &low, &high);
			fprintf(f, "%llu,%llu,%llu\n", (unsigned long long)low,
				(unsigned long long)high, (unsigned long long)h->counts[i]);
		}
}

void lb_events_write(FILE *f, const struct lb_run_result *res)
{
	fprintf(f, "t_ns,event,client,node,value\n");
	for (size_t i = 0; i < res->n_events; i++) {
		const struct lb_event *e = &res->events[i];
		fprintf(f, "%lld,%s,", (long long)e->t_ns, lb_event_name(e->kind));
		if (e->client >= 0)
			fprintf(f, "%d", e->client);
		fputc(',', f);
		if (e->node >= 0)
			fprintf(f, "%d", e->node);
		fprintf(f, ",%lld\n", (long long)e->value);
	}
}

void lb_key_events_write(FILE *f, const struct lb_run_result *res)
{
	fprintf(f, "%s\n", LB_KEY_EVENTS_HEADER);
	for (size_t i = 0; i < res->n_key_events; i++) {
		const struct lb_key_event *e = &res->key_events[i];
		fprintf(f, "%lld,%d,%d,%d,", (long long)e->t_ns, e->server, e->port, e->node);
		if (e->key >= 0)
			fprintf(f, "%d", e->key);
		fprintf(f, ",%s,", lb_key_kind_name(e->kind));
		if ((e->kind == LB_KEY_SET || e->kind == LB_KEY_FOUND) && e->value)
			fprintf(f, "%llx", (unsigned long long)e->value);
		fputc(',', f);
		if (((e->kind == LB_KEY_SET || e->kind == LB_KEY_EXPIRE) && e->ttl_ms >= -1) ||
		    (e->kind == LB_KEY_FOUND && e->ttl_ms >= -2))
			fprintf(f, "%d", (int)e->ttl_ms);
		fputc('\n', f);
	}
}

static void cpu_model(char *buf, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10)) {
			char *c = strchr(line, ':');
			if (c)
				snprintf(buf, len, "%s", c + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	fclose(f);
}

void lb_remote_bounds_write(FILE *f, const struct lb_run_result *res)
{
	for (int i = 0; i < res->n_remote; i++) {
		const struct lb_remote_bound *b = &res->remote[i];
		char drift[48];
		if (b->drift_ns == INT64_MIN)
			snprintf(drift, sizeof(drift), "n/a (not measured after)");
		else
			snprintf(drift, sizeof(drift), "%.3f ms", (double)b->drift_ns / 1e6);
		lb_esc_fprintf(f, LB_LANG_TERM, "host %s: clients %d to %d, clock %+.3f ms from this "
			       "one's, within +/- %.3f ms (its round trip %.3f ms, this one's %.3f "
			       "ms, drift %s)\n", b->name, b->first, b->first + b->count - 1,
			       (double)b->offset_ns / 1e6, (double)b->bound_ns / 1e6,
			       (double)b->rtt_ns / 1e6, (double)b->here_rtt_ns / 1e6, drift);
	}
	if (res->n_remote && res->cross_known)
		fprintf(f, "hosts overlaps: %zu certain, %zu possible (each host's stamps off by up "
			"to its bound)\n", res->cross_certain, res->cross_possible);
	else if (res->n_remote)
		lb_esc_fprintf(f, LB_LANG_TERM, "hosts overlaps: n/a (%s)\n", res->cross_why);
}

int lb_meta_write(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res)
{
	struct utsname u;
	char cpu[128], when[32];
	time_t now = time(NULL);

	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	lb_esc_fprintf(f, LB_LANG_TERM, "command: %s\n", cfg->cmdline);
	lb_esc_fprintf(f, LB_LANG_TERM, "seed: %llu\n", (unsigned long long)cfg->seed);
	lb_esc_fprintf(f, LB_LANG_TERM, "lockbench: %s\n", LOCKBENCH_VERSION);
	lb_esc_fprintf(f, LB_LANG_TERM, "redis: %s\n", res->redis_version[0] ? res->redis_version :
		       lb_consensus_of(cfg->strategy) ? "n/a (the lock is not on Redis)" : "unknown");
	if (res->consensus_ready_ms > 0)
		fprintf(f, "ensemble: 3 %s members, started and serving writes in %lld ms\n",
			lb_consensus_shown((enum lb_consensus_kind)lb_consensus_of(cfg->strategy)),
			(long long)res->consensus_ready_ms);
	char urls[3][2048]; /* never a password in a file */
	lb_url_list_masked(cfg->cluster_urls ? cfg->cluster_urls : "", urls[0], sizeof(urls[0]));
	lb_url_list_masked(cfg->sentinel_urls ? cfg->sentinel_urls : "", urls[1], sizeof(urls[1]));
	lb_url_list_masked(cfg->redis_urls ? cfg->redis_urls : "", urls[2], sizeof(urls[2]));
	if (cfg->cluster_urls)
		lb_esc_fprintf(f, LB_LANG_TERM, "servers: the primary of the run's slot in the cluster "
			       "of seeds %s\n", urls[0]);
	else if (cfg->etcd_urls || cfg->zk_urls)
		lb_esc_fprintf(f, LB_LANG_TERM, "servers: yours, %s %s; the resource embedded\n",
			       cfg->etcd_urls ? "etcd" : "ZooKeeper", cfg->etcd_urls ? cfg->etcd_urls :
			       cfg->zk_urls);
	else if (cfg->sentinel_urls)
		lb_esc_fprintf(f, LB_LANG_TERM, "servers: the primary Sentinels %s name %s%s%s\n", urls[1],
			cfg->sentinel_master, cfg->redis_urls ? "; resource " : "", urls[2]);
	else
		lb_esc_fprintf(f, LB_LANG_TERM, "servers: %s\n", cfg->redis_urls ? urls[2] : "embedded (started by lockbench)");
	lb_remote_bounds_write(f, res); /* run --hosts */
	if (cfg->adapter_hosts > 0 && lb_strategy_is_external(cfg->strategy)) {
		int n = cfg->adapter_hosts < cfg->clients ? cfg->adapter_hosts : cfg->clients;
		fprintf(f, "adapters: %d host process%s (--adapter-hosts), client i's session in host "
			"i %% %d\n", n, n == 1 ? "" : "es", n);
	}
	const struct lb_adapter_def *d =
		lb_strategy_is_external(cfg->strategy) ? lb_adapter_def_of(cfg->strategy) : NULL;
	if (d && !d->exec) { /* what ran: the library's own word, what was asked, from where */
		const char *ran = lb_adapter_ran_version(cfg->strategy);
		lb_esc_fprintf(f, LB_LANG_TERM, "library: %s %s (its own metadata)%s%s%s%s\n",
			       d->library, ran ? ran : "unknown",
			       d->version[0] ? ", asked " : "", d->version,
			       d->env_dir[0] ? ", installed in " : "", d->env_dir);
	}
	lb_esc_fprintf(f, LB_LANG_TERM, "key_prefix: %s\n", res->run_prefix);
	lb_esc_fprintf(f, LB_LANG_TERM, "written_utc: %s\n", when);
	lb_esc_fprintf(f, LB_LANG_TERM, "machine: %s %s %s, %ld cores, %s\n", u.sysname, u.release, u.machine,
		sysconf(_SC_NPROCESSORS_ONLN), cpu);
	lb_esc_fprintf(f, LB_LANG_TERM, "clock: history times are CLOCK_MONOTONIC ns after the run's start\n");
	lb_esc_fprintf(f, LB_LANG_TERM, "interrupted: %s\n", res->interrupted ? "yes (Ctrl-C or SIGTERM)" : "no");
	return 0;
}

/* The run's settings as summary.csv writes them (a control character a
 * space), one "setting NAME: VALUE" line each, in the terminal's escaping:
 * `check` compares them with the summary's, so a summary edited to another
 * seed, strategy or length no longer agrees with the run it sits beside. */
const char *const lb_meta_settings[] = { "strategy", "scenario", "variant", "clients", "keys",
					 "nodes", "duration_s", "ttl_ms", "hold_ms", "think_ms",
					 "wait", "work", "seed", NULL };

void lb_meta_setting_text(const char *value, char *buf, size_t len)
{
	char v[256];

	snprintf(v, sizeof(v), "%s", value);
	for (char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	lb_esc_snprintf(buf, len, LB_LANG_TERM, "%s", v);
}

void lb_meta_settings_write(FILE *f, const struct lb_summary *s)
{
	char text[1100];

	for (int i = 0; lb_meta_settings[i]; i++) {
		const char *v = lb_summary_get(s, lb_meta_settings[i]);
		if (!v)
			continue;
		lb_meta_setting_text(v, text, sizeof(text));
		fprintf(f, "setting %s: %s\n", lb_meta_settings[i], text);
	}
}

/* The header, then the row, each value a CSV field (RFC 4180, esc.h): a
 * name with a comma or a quote is quoted, never split. A control character
 * (a newline in a program's path) is written as a space: the file stays one
 * header line and one row. */
void lb_summary_csv(FILE *f, const struct lb_summary *s)
{
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "%s%c", s->name[i], i + 1 < s->n ? ',' : '\n');
	for (size_t i = 0; i < s->n; i++) {
		char v[sizeof(s->value[0])];
		snprintf(v, sizeof(v), "%s", s->value[i]);
		for (char *p = v; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = ' ';
		lb_esc_fprintf(f, LB_LANG_CSV, i ? ",%s" : "%s", v);
	}
	fputc('\n', f);
}

/* servers.csv: each server the clients took for the primary behind the
 * user's Sentinels, with its process (run_id) and who took it first when. */
static void write_seen(FILE *f, const struct lb_run_result *res)
{
	fprintf(f, "# the servers the clients took for the primary (the Sentinels or the "
		   "cluster named it, and it answered); events.csv's primary-seen names them by "
		   "port\n"
		   "host,port,run_id,first_s,first_client\n");
	for (int i = 0; i < res->n_seen; i++) {
		const struct lb_server_seen_copy *s = &res->seen[i];
		lb_esc_fprintf(f, LB_LANG_CSV, "%s,%d,%s,%.6f,%d\n", s->host, s->port,
			       s->run_id[0] ? s->run_id : "n/a", (double)s->first_ns / 1e9,
			       s->first_client);
	}
	if (res->seen_overflow)
		fprintf(f, "# more servers than %d: the rest are not listed\n", LB_MAX_SEEN);
}

int lb_results_write(const struct lb_run_cfg *cfg, const struct lb_run_result *res,
		     const struct lb_summary *s)
{
	struct lb_outfile o;
	int rc = 0;

	/* each file whole or absent; summary.csv last, so that a summary is
	 * always beside the history it summarises */
	if ((rc = lb_outfile_open(&o, cfg->out_dir, "history.csv", true)) == 0) {
		write_history(o.f, res);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "waiters.csv", true)) == 0) {
		write_waiters(o.f, res);
		rc = lb_outfile_close(&o);
	}
	/* every attempt and its answer: check recomputes busy_while_free */
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "attempts.csv", true)) == 0) {
		lb_attempts_write(o.f, res->tries, res->n_tries);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "latency.csv", true)) == 0) {
		write_latency(o.f, &res->latency);
		rc = lb_outfile_close(&o);
	}
	/* the calls that never entered, at their length: check recomputes the
	 * acquire figures from both */
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "latency-censored.csv", true)) == 0) {
		write_latency(o.f, &res->censored);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "events.csv", true)) == 0) {
		lb_events_write(o.f, res);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && res->key_events &&
	    (rc = lb_outfile_open(&o, cfg->out_dir, "keyevents.csv", true)) == 0) {
		lb_key_events_write(o.f, res);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && res->n_seen &&
	    (rc = lb_outfile_open(&o, cfg->out_dir, "servers.csv", true)) == 0) {
		write_seen(o.f, res);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "meta.txt", true)) == 0) {
		lb_meta_write(o.f, cfg, res);
		lb_meta_settings_write(o.f, s);
		rc = lb_outfile_close(&o);
	}
	/* summary.json before summary.csv: a summary.csv is never without it */
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "summary.json", true)) == 0) {
		lb_summary_json(o.f, s);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "summary.csv", true)) == 0) {
		lb_summary_csv(o.f, s);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && s->invalid)
		rc = LB_EINVAL; /* written, to be looked at; reported by lb_summary_build */
	return rc;
}
