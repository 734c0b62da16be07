/*
 * cmd_agent.c - `lockbench agent`: a share of a run's clients on this host.
 * It says hello with its version, reads its share from standard input
 * (bounded lines, every field checked: the input is hostile), runs it
 * (run_agent.c) and streams the records on standard output; its input's end
 * stops it (docs/running.md, "Clients on many hosts").
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_wire.h"
#include "commands.h"
#include "faults.h"
#include "options.h"
#include "run.h"

#define MAX_ARGS 64

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench agent\n\n"
		   "Runs a share of a run's clients on this host, for `lockbench run --hosts`\n"
		   "(which starts it over ssh), or for any launcher that writes its share on its\n"
		   "standard input. It writes 'hello lockbench-agent %d VERSION' at once, reads\n"
		   "the share (lines, each at most %d bytes: 'lockbench-share %d', then 'arg WORD'\n"
		   "for each of `run`'s options, 'lock URL' for each lock node, 'resource URL',\n"
		   "'clients FIRST COUNT', 'prefix P', 'faults yes|no', 'share-end'), starts its\n"
		   "clients, says 'ready N', waits for 'go', and at the run's end streams the\n"
		   "clients' records ('client', 'rec', 'try', 'hist', 'event' lines), its clock's\n"
		   "offset to the first lock node before and after ('clock before|after OFFSET_NS\n"
		   "RTT_NS', by the server's TIME), and 'end'. When its input ends it stops its\n"
		   "clients and exits, leaving nothing behind. docs/running.md, \"Clients on many\n"
		   "hosts\", has the format.\n\n"
		   "Exit status: 0 its share ran and was streamed, 2 a share it cannot read\n"
		   "('error' names the line and the field), 3 its servers cannot be reached,\n"
		   "1 anything else.\n", LB_AGENT_PROTO, LB_AGENT_LINE_MAX - 1, LB_AGENT_PROTO);
}

struct share_in {
	struct lb_agent_share s;
	char args[MAX_ARGS][LB_AGENT_LINE_MAX];
	int n_args;
	bool clients_given, resource_given, prefix_given, faults_given;
};

static bool prefix_ok(const char *p)
{
	size_t n = strlen(p);
	if (n == 0 || n > 40)
		return false;
	for (; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr(":_-", *p))
			return false;
	return true;
}

/* One line of the share: 1 taken, 0 share-end, or an error said in @why. */
static int share_line(struct share_in *in, char *line, char *why, size_t wlen)
{
	char *sp = strchr(line, ' ');
	const char *v = sp ? sp + 1 : "";
	int64_t a, b;

	if (sp)
		*sp = '\0';
	if (!strcmp(line, "share-end") && !sp)
		return 0;
	if (!strcmp(line, "arg") && sp && in->n_args < MAX_ARGS) {
		snprintf(in->args[in->n_args++], LB_AGENT_LINE_MAX, "%s", v);
		return 1;
	}
	if (!strcmp(line, "lock") && sp && in->s.n_lock < LB_MAX_NODES &&
	    strlen(v) < sizeof(in->s.lock[0])) {
		snprintf(in->s.lock[in->s.n_lock++], sizeof(in->s.lock[0]), "%s", v);
		return 1;
	}
	if (!strcmp(line, "resource") && sp && strlen(v) < sizeof(in->s.resource)) {
		snprintf(in->s.resource, sizeof(in->s.resource), "%s", v);
		return in->resource_given = true;
	}
	char w2[64];
	if (!strcmp(line, "clients") && sp && strlen(v) < sizeof(w2)) {
		snprintf(w2, sizeof(w2), "%s", v);
		char *s2 = strchr(w2, ' ');
		if (s2 && (*s2++ = '\0', lb_parse_i64(w2, 0, LB_MAX_CLIENTS - 1, &a)) &&
		    lb_parse_i64(s2, 1, LB_MAX_CLIENTS - a, &b)) {
			in->s.first = (int)a, in->s.count = (int)b;
			return in->clients_given = true;
		}
		snprintf(why, wlen, "clients: expected FIRST COUNT (0 <= FIRST, 1 <= COUNT, "
			 "FIRST + COUNT <= %d)", LB_MAX_CLIENTS);
		return LB_EINVAL;
	}
	if (!strcmp(line, "prefix") && prefix_ok(v)) {
		snprintf(in->s.prefix, sizeof(in->s.prefix), "%s", v);
		return in->prefix_given = true;
	}
	if (!strcmp(line, "faults") && (!strcmp(v, "yes") || !strcmp(v, "no"))) {
		in->s.faults = !strcmp(v, "yes");
		return in->faults_given = true;
	}
	snprintf(why, wlen, "'%.40s': expected arg WORD (at most %d), lock URL (at most %d), "
		 "resource URL, clients FIRST COUNT, prefix P (1 to 40 of A-Z a-z 0-9 : _ -), "
		 "faults yes|no, or share-end", line, MAX_ARGS, LB_MAX_NODES);
	return LB_EINVAL;
}

static int read_share(struct lb_lines *l, struct share_in *in, FILE *out)
{
	char line[LB_AGENT_LINE_MAX], why[400];
	char head[32];
	int no = 0, rc;

	snprintf(head, sizeof(head), "lockbench-share %d", LB_AGENT_PROTO);
	while ((rc = lb_lines_next(l, line, sizeof(line), lb_now_ns() + 60 * LB_NS_PER_S, why,
				   sizeof(why))) == 1) {
		no++;
		if (no == 1 && strcmp(line, head)) {
			snprintf(why, sizeof(why), "expected '%s' (the share's format)", head);
			rc = LB_EINVAL;
			break;
		}
		if (no > 1 && (rc = share_line(in, line, why, sizeof(why))) <= 0)
			break;
	}
	if (rc == 0 && (!in->clients_given || !in->resource_given || !in->prefix_given ||
			!in->faults_given || in->s.n_lock == 0)) {
		snprintf(why, sizeof(why), "the share ended without %s", in->s.n_lock == 0 ? "a lock" :
			 !in->resource_given ? "resource" : !in->clients_given ? "clients" :
			 !in->prefix_given ? "prefix" : "faults");
		rc = LB_EINVAL;
	} else if (rc == LB_ETIMEOUT) {
		snprintf(why, sizeof(why), "no share within 60 s");
	} else if (rc == LB_EPROTO) {
		no++; /* the line that could not be read */
	}
	if (rc < 0) {
		lb_errorf("agent: share line %d: %s", no, why);
		fprintf(out, "error share line %d: %s\n", no, why);
		fflush(out);
	}
	return rc;
}

int lb_cmd_agent(int argc, char **argv)
{
	static struct share_in in;
	static struct lb_lines lines = { .fd = STDIN_FILENO };
	struct lb_run_opts o;
	char *av[MAX_ARGS + 4], dir[4096];

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return LB_EXIT_OK;
	}
	if (argc > 1) {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	printf("hello lockbench-agent %d %s\n", LB_AGENT_PROTO, LOCKBENCH_VERSION);
	fflush(stdout);
	if (read_share(&lines, &in, stdout) < 0)
		return LB_EXIT_USAGE;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/lockbench-agent-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stdout, "error cannot make a directory in %s\n", tmp && *tmp ? tmp : "/tmp");
		return LB_EXIT_FAIL;
	}
	int n = 0;
	av[n++] = "run";
	for (int i = 0; i < in.n_args; i++)
		av[n++] = in.args[i];
	av[n++] = "--out";
	av[n++] = dir;
	av[n] = NULL;
	int rc = lb_run_opts_parse(n, av, LB_OPTS_RUN, &o);
	if (rc != 0 || lb_scenario_fits(&o.cfg) < 0 || in.s.first + in.s.count > o.cfg.clients) {
		fprintf(stdout, "error the share's run options are refused (its clients past "
			"--clients, or the message above)\n");
		rmdir(dir);
		return LB_EXIT_USAGE;
	}
	o.cfg.status_line = false; /* standard output is the stream */
	rc = lb_run_agent(&o.cfg, &in.s, &lines, stdout);
	rmdir(dir);
	return rc == 0 ? LB_EXIT_OK : rc == LB_ECANCELED ? LB_EXIT_OK :
	       rc == LB_EINVAL ? LB_EXIT_USAGE : rc == LB_ENOTHERE ? LB_EXIT_SKIPPED : LB_EXIT_FAIL;
}
