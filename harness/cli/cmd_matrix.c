/*
 * cmd_matrix.c - `lockbench matrix`: every strategy against every scenario,
 * each cell on fresh servers, repeated; matrix.csv and a matrix.md a teacher
 * can project. --check exits 1 when any cell's observed class differs from
 * its expectation in any repetition.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "esc.h"
#include "commands.h"
#include "junit.h"
#include "options.h"
#include "outfile.h"
#include "report.h"
#include "results.h"
#include "signals.h"

#define MAX_SCENARIOS 64
#define MAX_REPEAT 100
#define MAX_JOBS 16

struct cell {
	const struct lock_strategy *s;
	int scenario;          /* index into the loaded scenarios */
	int expected;          /* enum lb_class or -1 */
	int repeat;            /* repetitions of this cell */
	int runs, passes;
	int observed[MAX_REPEAT];
	char skipped[512];     /* non-empty: the cell could not run here, and why */
	char differs[300];     /* how the first repetition that differed did */
	int failed;            /* repetitions whose run failed or was void (it said why) */
	/* figures of the repetitions, summed */
	uint64_t overlaps, foreign, lost_leases, errors, stale, aborted;
	uint64_t hidden;       /* busy answers given with no quorum of nodes up */
	bool foreign_na;       /* a repetition could not measure foreign releases */
	long long lost_updates;
	double orphan_ms;      /* worst */
	int deadlocks;
	double seconds;        /* its repetitions' wall-clock time, summed (its JUnit time) */
};

struct matrix {
	struct lb_scenario *sc;
	int n_sc;
	const struct lock_strategy *strategies[LB_MAX_STRATEGIES];
	size_t n_strategies;
	int repeat;
	int lesson_repeat;     /* for the cells lesson pages show (0: as repeat) */
	int jobs;              /* cells run side by side */
	bool check;
	bool allow_skipped;
	bool no_report;
	char junit[4096];      /* --junit FILE: each cell a test case, or "" */
	uint64_t seed;
	char out[PATH_MAX - 256];
	struct cell *cells;
	int n_cells;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench matrix [--strategies a,b] [--scenarios x,y] [--repeat K]\n"
		   "                        [--strategy NAME] [--scenario NAME|PATH]\n"
		   "                        [--lesson-repeat L] [--jobs J] [--check]\n"
		   "                        [--allow-skipped] [--seed N] [--out DIR]\n"
		   "                        [--no-report] [--chart-scale X] [--junit FILE]\n"
		   "                        [--library-env DIR]\n\n"
		   "Runs every strategy against every scenario that applies to it, each cell on\n"
		   "fresh servers, K times (1); the cells lesson pages show (`lessons` in the\n"
		   "scenario, `lockbench list --lessons`) L times (default K, never fewer).\n"
		   "--library-env DIR: a library with an environment hook runs as installed in\n"
		   "DIR (a virtualenv), as `lockbench run --help` says.\n"
		   "--strategy and --scenario add one each, taken whole (a name or path with a\n"
		   "comma); all four may repeat and add to the lists.\n"
		   "--jobs J runs J cells side by side (1): each on its own servers, ports and\n"
		   "directories, so they share only the CPUs (docs/running.md says when that\n"
		   "keeps timing honest). Writes DIR/matrix.csv and DIR/matrix.md (default\n"
		   "DIR: results/matrix/<UTC time>). --check: exit 1 when any repetition of any\n"
		   "cell observed another class than the scenario expects, or when a cell could\n"
		   "not run here (skipped, with its reason) unless --allow-skipped; --junit FILE\n"
		   "writes what it judged as JUnit XML, a test case a cell. Probabilistic\n"
		   "scenarios (chaos) are left out unless named: see `lockbench chaos`.\n"
		   "Each cell's run gets its charts and report.md, the matrix a matrix.png,\n"
		   "unless --no-report; --chart-scale X draws them X times larger (0.5 to 4).\n\n"
		   "Exit status: 0 done (without --check, differences are results), 1 a check\n"
		   "failed (a cell differs, or one was skipped) or a runtime failure (a run\n"
		   "failed or was void: the matrix goes on, and its row in matrix.csv and its\n"
		   "cell in matrix.md say failed, never a pass), 2 usage,\n"
		   "130 or 143 interrupted (Ctrl-C, SIGTERM): the run cut short is classed\n"
		   "interrupted and compared with nothing, the cells not run are marked so.\n");
}

static int parse_list(char *list, const char *what, struct matrix *m, bool strategies, bool whole)
{
	char *save = NULL;

	for (char *t = whole ? list : strtok_r(list, ",", &save); t;
	     t = whole ? NULL : strtok_r(NULL, ",", &save)) {
		if (strategies) {
			const struct lock_strategy *s = lb_strategy_or_usage(t);
			if (!s || m->n_strategies == LB_MAX_STRATEGIES)
				return LB_EINVAL;
			m->strategies[m->n_strategies++] = s;
		} else {
			if (m->n_sc == MAX_SCENARIOS || lb_scenario_load(t, &m->sc[m->n_sc]) < 0)
				return LB_EINVAL;
			m->n_sc++;
		}
	}
	if ((strategies ? (int)m->n_strategies : m->n_sc) == 0) {
		lb_errorf("--%s: empty list", what);
		return LB_EINVAL;
	}
	return 0;
}

/* --@name's value (optarg), an integer from 1 to @max, into @out. */
static int int_arg(const char *name, int max, int *out)
{
	int64_t v;

	if (!lb_parse_i64(optarg, 1, max, &v)) {
		lb_errorf("--%s '%s': expected 1 to %d", name, optarg, max);
		return LB_EINVAL;
	}
	*out = (int)v;
	return 0;
}

/* What the command line left out: every scenario but the probabilistic
 * ones, every strategy, a directory named by the time. */
static int defaults(struct matrix *m)
{
	if (m->n_sc == 0) {
		char names[MAX_SCENARIOS][64];
		int n = lb_scenario_names(names, MAX_SCENARIOS);
		for (int i = 0; i < n; i++)
			if (lb_scenario_load(names[i], &m->sc[m->n_sc]) == 0 &&
			    !m->sc[m->n_sc].probabilistic && /* chaos: see lockbench chaos */
			    !m->sc[m->n_sc].alone)           /* a stampede: make stampede */
				m->n_sc++;
		if (m->n_sc == 0) {
			lb_errorf("no scenarios found");
			return LB_EINVAL;
		}
	}
	for (int i = 0; i < m->n_sc && m->jobs > 1; i++)
		if (m->sc[i].alone) { /* a crowd of thousands beside another cell measures both badly */
			lb_errorf("note: %s needs the machine to itself (alone = yes): cells run one "
				  "at a time, not --jobs %d", m->sc[i].name, m->jobs);
			m->jobs = 1;
		}
	if (m->n_strategies == 0 && lb_strategy_count() > LB_MAX_STRATEGIES) {
		lb_errorf("%zu strategies, more than a matrix holds (%d): name them with "
			  "--strategies", lb_strategy_count(), LB_MAX_STRATEGIES);
		return LB_EINVAL;
	}
	if (m->n_strategies == 0)
		for (size_t i = 0; i < lb_strategy_count(); i++)
			m->strategies[m->n_strategies++] = lb_strategy_at(i);
	if (!m->out[0]) {
		char when[32];
		time_t now = time(NULL);
		strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", gmtime(&now));
		snprintf(m->out, sizeof(m->out), "results/matrix/%s", when);
	}
	return 0;
}

static int parse(int argc, char **argv, struct matrix *m)
{
	static const struct option opts[] = {
		{ "strategies", required_argument, NULL, 's' },
		{ "scenarios", required_argument, NULL, 'c' },
		{ "strategy", required_argument, NULL, 'S' },
		{ "scenario", required_argument, NULL, 'C' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "lesson-repeat", required_argument, NULL, 'l' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "check", no_argument, NULL, 'k' },
		{ "allow-skipped", no_argument, NULL, 'a' },
		{ "seed", required_argument, NULL, 'e' },
		{ "out", required_argument, NULL, 'o' },
		{ "no-report", no_argument, NULL, 'n' },
		{ "chart-scale", required_argument, NULL, 'x' },
		{ "junit", required_argument, NULL, 'J' },
		{ "library-env", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t v;
	int c;

	if (lb_library_env_option(argc, argv) < 0)
		return LB_EINVAL;
	m->repeat = 1;
	m->jobs = 1;
	m->seed = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'S':
			if (parse_list(optarg, "strategies", m, true, c == 'S') < 0)
				return LB_EINVAL;
			break;
		case 'c':
		case 'C':
			if (parse_list(optarg, "scenarios", m, false, c == 'C') < 0)
				return LB_EINVAL;
			break;
		case 'r':
			if (int_arg("repeat", MAX_REPEAT, &m->repeat) < 0)
				return LB_EINVAL;
			break;
		case 'l':
			if (int_arg("lesson-repeat", MAX_REPEAT, &m->lesson_repeat) < 0)
				return LB_EINVAL;
			break;
		case 'j':
			if (int_arg("jobs", MAX_JOBS, &m->jobs) < 0)
				return LB_EINVAL;
			break;
		case 'k':
			m->check = true;
			break;
		case 'a':
			m->allow_skipped = true;
			break;
		case 'e':
			if (!lb_parse_i64(optarg, 0, INT64_MAX, &v)) {
				lb_errorf("--seed '%s': expected a non-negative integer", optarg);
				return LB_EINVAL;
			}
			m->seed = (uint64_t)v;
			break;
		case 'o':
			if (!lb_dir_arg_ok("--out", optarg))
				return LB_EINVAL;
			snprintf(m->out, sizeof(m->out), "%s", optarg);
			break;
		case 'n':
			m->no_report = true;
			break;
		case 'x':
			if (lb_chart_scale_arg(optarg) < 0)
				return LB_EINVAL;
			break;
		case 'J':
			if (!lb_file_arg_ok("--junit", optarg))
				return LB_EINVAL;
			snprintf(m->junit, sizeof(m->junit), "%s", optarg);
			break;
		case 'L': /* taken before the options: lb_library_env_option */
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			lb_errorf("unknown or incomplete option '%s'", argv[optind - 1]);
			usage(stderr);
			return LB_EINVAL;
		}
	}
	if (optind < argc) {
		lb_errorf("unexpected argument '%s'", argv[optind]);
		return LB_EINVAL;
	}
	if (m->junit[0] && !m->check) {
		lb_errorf("--junit FILE records what --check judges: add --check");
		return LB_EINVAL;
	}
	if (m->junit[0] && !strcmp(m->junit, m->out)) {
		lb_errorf("--junit %s is the matrix's directory (--out): name a file beside it",
			  m->junit);
		return LB_EINVAL;
	}
	return defaults(m);
}

/* What one repetition of one cell measured: made in the process that ran
 * it (a worker under --jobs, written whole into a pipe), recorded by the
 * matrix. */
struct rep_result {
	int rc;                /* < 0: the run failed (it said why) */
	int observed;          /* enum lb_class */
	int recovered;         /* enum lb_recovered */
	char skipped[512];
	uint64_t seed, sections, overlaps, foreign, lost_leases, errors, timeouts, stale, aborted;
	uint64_t hidden;       /* busy answers with no quorum of nodes up (attempts.h) */
	bool hidden_na;        /* not measured there (printed n/a, never 0) */
	bool foreign_na;       /* foreign releases not measured (printed n/a, never 0) */
	bool pass;             /* the scenario's [expect] section met (its summary read) */
	char why[256];         /* if not, how it differs */
	double overlap_ms, orphan_ms;
	long long lost_updates;
	char dir[PATH_MAX];
	double seconds;        /* how long it took, wall clock (its JUnit time) */
};

static void measure_one(const struct matrix *m, const struct cell *cell, int rep,
			struct rep_result *out);

/* Run repetition @rep of @cell, timed. */
static void measure(const struct matrix *m, const struct cell *cell, int rep,
		    struct rep_result *out)
{
	int64_t t0 = lb_now_ns();

	measure_one(m, cell, rep, out);
	out->seconds = (double)(lb_now_ns() - t0) / LB_NS_PER_S;
}

/* Run repetition @rep of @cell: servers, clients, faults, results, report. */
static void measure_one(const struct matrix *m, const struct cell *cell, int rep,
			struct rep_result *out)
{
	const struct lb_scenario *sc = &m->sc[cell->scenario];
	struct lb_run_opts o;
	struct lb_run_result res = { 0 };
	struct lb_summary sum;
	char *argv[] = { "matrix", NULL };

	memset(out, 0, sizeof(*out));
	lb_run_opts_parse(1, argv, LB_OPTS_RUN_DEFAULTS, &o);
	o.cfg.strategy = cell->s;
	o.cfg.seed = m->seed + (uint64_t)rep;
	o.cfg.status_line = false;
	lb_run_opts_apply_scenario(&o, sc);
	char seed_text[24];
	snprintf(seed_text, sizeof(seed_text), "%llu", (unsigned long long)o.cfg.seed);
	char *words[] = { "run", "--scenario", (char *)lb_scenario_arg(sc), "--strategy",
			  (char *)cell->s->name, "--seed", seed_text };
	lb_sh_cmdline(o.cfg.cmdline, sizeof(o.cfg.cmdline), "lockbench", 7, words);
	char scw[72], stw[72];
	lb_path_word(sc->name, scw, sizeof(scw));
	lb_path_word(cell->s->name, stw, sizeof(stw));
	snprintf(o.cfg.out_dir, sizeof(o.cfg.out_dir), "%.3000s/%s/%s/%d", m->out, scw, stw, rep + 1);
	out->seed = o.cfg.seed;
	snprintf(out->dir, sizeof(out->dir), "%s", o.cfg.out_dir);
	if ((out->rc = lb_results_prepare_dir(o.cfg.out_dir)) < 0)
		return;
	if ((out->rc = lb_run(&o.cfg, &res)) < 0) {
		lb_run_result_free(&res);
		return;
	}
	if (res.skipped[0]) {
		snprintf(out->skipped, sizeof(out->skipped), "%s", res.skipped);
		lb_run_result_free(&res);
		return;
	}
	lb_summary_build(&o.cfg, &res, &sum);
	out->rc = lb_results_write(&o.cfg, &res, &sum);
	if (out->rc == 0 && !m->no_report)
		out->rc = lb_report_dir(o.cfg.out_dir);
	const struct lb_verdict *v = &res.verdict;
	struct lb_observed ob = { res.observed, lb_summary_value, &sum };
	out->pass = lb_scenario_expect_met(sc, cell->s->name, &ob, out->why, sizeof(out->why));
	out->observed = (int)res.observed;
	out->recovered = (int)v->recovered;
	out->sections = v->sections;
	out->overlaps = v->overlaps;
	out->overlap_ms = v->overlap_ms;
	out->foreign = v->foreign_releases;
	out->foreign_na = v->foreign_source == LB_FOREIGN_NA;
	out->lost_leases = v->lost_leases;
	out->orphan_ms = v->orphan_ms;
	out->errors = res.acquire_errors;
	out->timeouts = res.acquire_timeouts;
	out->hidden = res.busy.down;
	out->hidden_na = !res.tries_known;
	out->stale = res.stale_writes_rejected;
	out->aborted = res.writes_aborted;
	out->lost_updates = res.lost_updates;
	lb_run_result_free(&res);
}

/* Count repetition @rep of @cell: its row in matrix.csv, its line on the terminal. */
static int record(struct matrix *m, struct cell *cell, int rep, const struct rep_result *r,
		  FILE *csv, int done, int total)
{
	const struct lb_scenario *sc = &m->sc[cell->scenario];
	const char *expected = cell->expected >= 0 ? lb_class_name((enum lb_class)cell->expected) : "-";

	cell->seconds += r->seconds;
	if (r->rc == LB_ECANCELED && lb_stop_requested()) { /* stopped before it started */
		lb_esc_fprintf(csv, LB_LANG_CSV, "%s,%s,%s,interrupted,%d,-,0,,,,,,,,,,%llu,%s\n",
			       sc->name, cell->s->name, expected, rep + 1, (unsigned long long)r->seed,
			       r->dir);
		fflush(csv);
		lb_esc_fprintf(stdout, LB_LANG_TERM, "[%d/%d] %-28s x %-13s #%d: interrupted before "
			       "it started (not compared with the expectation)\n", done, total, sc->name,
			       cell->s->name, rep + 1);
		return 0;
	}
	if (r->rc < 0) { /* void: lockbench said why on stderr; never a pass */
		cell->failed++;
		lb_esc_fprintf(csv, LB_LANG_CSV, "%s,%s,%s,failed,%d,no,,,,,,,,,,,,%llu,%s\n",
			       sc->name, cell->s->name, expected, rep + 1, (unsigned long long)r->seed,
			       r->dir);
		fflush(csv);
		lb_esc_fprintf(stdout, LB_LANG_TERM, "[%d/%d] %-28s x %-13s #%d: FAILED (the run is "
			       "void: why is said above)\n", done, total, sc->name, cell->s->name,
			       rep + 1);
		fflush(stdout);
		return r->rc;
	}
	if (r->skipped[0]) {
		snprintf(cell->skipped, sizeof(cell->skipped), "%s", r->skipped);
		lb_esc_fprintf(csv, LB_LANG_CSV, "%s,%s,%s,skipped,%d,skipped,,,,,,,,,,,,%llu,%s\n",
			       sc->name, cell->s->name, expected, rep + 1, (unsigned long long)r->seed,
			       r->dir);
		fflush(csv);
		lb_esc_fprintf(stdout, LB_LANG_TERM, "[%d/%d] %-28s x %-13s #%d: SKIPPED: %s\n", done,
			       total, sc->name, cell->s->name, rep + 1, r->skipped);
		return 0;
	}
	if (r->observed == LB_CLASS_INTERRUPTED) { /* cut short: neither a pass nor a failure */
		lb_esc_fprintf(csv, LB_LANG_CSV, "%s,%s,%s,interrupted,%d,-,%llu,,,,,,,,,,%llu,%s\n",
			       sc->name, cell->s->name, expected, rep + 1,
			       (unsigned long long)r->sections, (unsigned long long)r->seed, r->dir);
		fflush(csv);
		lb_esc_fprintf(stdout, LB_LANG_TERM, "[%d/%d] %-28s x %-13s #%d: interrupted (not "
			       "compared with the expectation)\n", done, total, sc->name, cell->s->name,
			       rep + 1);
		return 0;
	}
	bool pass = r->pass;
	if (!pass && !cell->differs[0])
		snprintf(cell->differs, sizeof(cell->differs), "#%d: %.256s", rep + 1, r->why);
	cell->observed[cell->runs++] = r->observed;
	cell->passes += pass;
	cell->overlaps += r->overlaps;
	cell->foreign += r->foreign;
	cell->lost_leases += r->lost_leases;
	cell->errors += r->errors;
	cell->hidden += r->hidden_na ? 0 : r->hidden;
	cell->stale += r->stale;
	cell->aborted += r->aborted;
	cell->lost_updates += r->lost_updates;
	cell->deadlocks += r->recovered == LB_REC_NO;
	if (r->orphan_ms > cell->orphan_ms)
		cell->orphan_ms = r->orphan_ms;
	char foreign[24];
	snprintf(foreign, sizeof(foreign), r->foreign_na ? "n/a" : "%llu", (unsigned long long)r->foreign);
	cell->foreign_na |= r->foreign_na;
	char hidden[24];
	snprintf(hidden, sizeof(hidden), r->hidden_na ? "n/a" : "%llu", (unsigned long long)r->hidden);
	lb_esc_fprintf(csv, LB_LANG_CSV,
		       "%s,%s,%s,%s,%d,%s,%llu,%llu,%.3f,%lld,%s,%llu,%.1f,%s,%llu,%llu,%s,%llu,%s\n",
		sc->name, cell->s->name, expected, lb_class_name((enum lb_class)r->observed), rep + 1,
		pass ? "yes" : "no", (unsigned long long)r->sections,
		(unsigned long long)r->overlaps, r->overlap_ms, r->lost_updates,
		foreign, (unsigned long long)r->lost_leases, r->orphan_ms,
		lb_recovered_name((enum lb_recovered)r->recovered), (unsigned long long)r->errors,
		(unsigned long long)r->timeouts, hidden, (unsigned long long)r->seed, r->dir);
	fflush(csv);
	lb_esc_fprintf(stdout, LB_LANG_TERM, "[%d/%d] %-28s x %-13s #%d: %-15s %s%s\n", done, total,
		       sc->name, cell->s->name,
	       rep + 1, lb_class_name((enum lb_class)r->observed),
	       cell->expected < 0 && pass ? "(no expectation)" : pass ? "as expected" : "DIFFERENT: ",
	       pass ? "" : r->why);
	fflush(stdout);
	return 0;
}

/* One job: a repetition of a cell, run here or in a worker. */
struct job {
	int cell, rep;
};

struct worker {
	pid_t pid;             /* 0: free */
	int fd;                /* the result comes down this pipe */
	struct job job;
};

static bool write_full(int fd, const void *buf, size_t len)
{
	for (size_t n = 0; n < len;) {
		ssize_t w = write(fd, (const char *)buf + n, len - n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		n += (size_t)w;
	}
	return true;
}

/* Up to @len bytes; fewer only at the end of the pipe or on an error. */
static size_t read_full(int fd, void *buf, size_t len)
{
	size_t n = 0;
	while (n < len) {
		ssize_t r = read(fd, (char *)buf + n, len - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	return n;
}

/* Fork a worker for @j: it runs the repetition and writes its rep_result
 * into a pipe. It dies with the matrix (PR_SET_PDEATHSIG), and its servers
 * and clients die with it; Ctrl-C reaches it too, and it stops its run in
 * order and still reports. */
static int start_worker(const struct matrix *m, struct worker *w, struct job j)
{
	pid_t parent = getpid();
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0) {
		lb_errorf("matrix: pipe: %s", strerror(errno));
		return LB_ESYS;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		lb_errorf("matrix: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return LB_ESYS;
	}
	if (pid == 0) {
		static struct rep_result r;
		close(p[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		measure(m, &m->cells[j.cell], j.rep, &r);
		fflush(NULL);
		_exit(write_full(p[1], &r, sizeof(r)) ? 0 : 1);
	}
	close(p[1]);
	lb_signals_track_child(pid);
	*w = (struct worker){ .pid = pid, .fd = p[0], .job = j };
	return 0;
}

/* Wait for any worker to finish; its result in @r. */
static int finish_worker(struct worker *ws, int n, struct rep_result *r, struct job *j)
{
	static bool passed_on;

	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR && lb_stop_requested() && !passed_on) {
				/* a kill -INT of the matrix alone (Ctrl-C reaches them
				 * anyway): the workers stop their runs in order */
				for (int i = 0; i < n; i++)
					if (ws[i].pid)
						kill(ws[i].pid, lb_stop_signal());
				passed_on = true;
			}
			if (errno == EINTR)
				continue;
			lb_errorf("matrix: waitpid: %s", strerror(errno));
			return LB_ESYS;
		}
		for (int i = 0; i < n; i++) {
			if (ws[i].pid != pid)
				continue;
			size_t got = read_full(ws[i].fd, r, sizeof(*r));
			close(ws[i].fd);
			lb_signals_untrack_child(pid);
			*j = ws[i].job;
			ws[i].pid = 0;
			if (got != sizeof(*r)) {
				memset(r, 0, sizeof(*r));
				lb_errorf("matrix worker for job %d.%d died (status %d) without a result",
					  j->cell, j->rep + 1, status);
				r->rc = LB_ESYS;
			}
			return 0;
		}
	}
}

/* Every repetition of every cell, @m->jobs at a time. */
static int run_all(struct matrix *m, FILE *csv, int total)
{
	struct worker ws[MAX_JOBS] = { 0 };
	struct rep_result *r = malloc(sizeof(*r));
	struct job j, next = { 0, 0 };
	int running = 0, done = 0, rc = 0;

	if (!r)
		return LB_ESYS;
	for (;;) {
		while (next.cell < m->n_cells && next.rep >= m->cells[next.cell].repeat)
			next = (struct job){ next.cell + 1, 0 };
		bool more = next.cell < m->n_cells && !lb_stop_requested();
		if (more && m->jobs == 1) { /* here: no fork, as a debugger likes it */
			measure(m, &m->cells[next.cell], next.rep, r);
			if (record(m, &m->cells[next.cell], next.rep, r, csv, ++done, total) < 0)
				rc = LB_ESYS;
			next.rep++;
			continue;
		}
		if (more && running < m->jobs) {
			int i = 0;
			while (ws[i].pid)
				i++;
			if (start_worker(m, &ws[i], next) < 0) {
				rc = LB_ESYS;
				next.cell = m->n_cells; /* start no more: finish those running */
				continue;
			}
			running++;
			next.rep++;
			continue;
		}
		if (running == 0)
			break;
		if (finish_worker(ws, m->jobs, r, &j) < 0) {
			rc = LB_ESYS;
			break;
		}
		running--;
		if (record(m, &m->cells[j.cell], j.rep, r, csv, ++done, total) < 0)
			rc = LB_ESYS;
	}
	free(r);
	return rc;
}

/* The figures that show a cell's class. */
static void figures(const struct cell *c, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (c->overlaps)
		n += (size_t)snprintf(buf + n, len - n, "%llu overlaps · ", (unsigned long long)c->overlaps);
	if (c->lost_updates)
		n += (size_t)snprintf(buf + n, len - n, "%lld lost updates · ", c->lost_updates);
	if (c->stale && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%llu stale writes refused · ",
				      (unsigned long long)c->stale);
	if (c->aborted && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%llu writes aborted · ",
				      (unsigned long long)c->aborted);
	if (c->foreign && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%llu foreign · ", (unsigned long long)c->foreign);
	else if (c->foreign_na && n < len)
		n += (size_t)snprintf(buf + n, len - n, "foreign n/a · ");
	if (c->deadlocks && n < len)
		n += (size_t)snprintf(buf + n, len - n, "never recovered · ");
	else if (c->orphan_ms > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, "orphaned ≤ %.1f s · ", c->orphan_ms / 1000);
	if (c->errors && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%llu failed attempts · ", (unsigned long long)c->errors);
	if (c->hidden && n < len) /* a failure reported as busy: its class hides it */
		n += (size_t)snprintf(buf + n, len - n, "hidden: %llu busy with no quorum up · ",
				      (unsigned long long)c->hidden);
	if (n >= 4 && n < len)
		buf[n - 4] = '\0'; /* drop the last " · " (4 bytes: the dot is 2) */
}

/* How many repetitions failed or were void. */
static int count_failed_runs(const struct matrix *m)
{
	int n = 0;
	for (int k = 0; k < m->n_cells; k++)
		n += m->cells[k].failed;
	return n;
}

/* How many cells could not run here. */
static int count_skipped(const struct matrix *m)
{
	int n = 0;
	for (int k = 0; k < m->n_cells; k++)
		n += m->cells[k].skipped[0] != '\0';
	return n;
}

static int write_md(struct matrix *m, const char *cmdline)
{
	struct lb_outfile out;
	char fig[256];
	FILE *f;
	int failures = 0;

	if (lb_outfile_open(&out, m->out, "matrix.md", true) < 0)
		return LB_ESYS;
	f = out.f;
	int most = m->repeat;
	for (int k = 0; k < m->n_cells; k++)
		most = m->cells[k].repeat > most ? m->cells[k].repeat : most;
	fprintf(f, "# lockbench matrix\n\n");
	lb_md_code(f, cmdline);
	fprintf(f, " — %d repetition%s per cell", m->repeat, m->repeat == 1 ? "" : "s");
	if (most > m->repeat)
		fprintf(f, ", %d for the cells lesson pages show (marked ★)", most);
	fprintf(f, ", seeds %llu..%llu.\n\n"
		   "✔ every repetition observed the class the scenario expects; ✘ at least one did "
		   "not (the classes observed follow). Figures are summed over the repetitions.\n\n",
		(unsigned long long)m->seed, (unsigned long long)(m->seed + (uint64_t)most - 1));
	fprintf(f, "| scenario |");
	for (size_t j = 0; j < m->n_strategies; j++)
		lb_esc_fprintf(f, LB_LANG_MD, " %s |", m->strategies[j]->name);
	fprintf(f, "\n|---|");
	for (size_t j = 0; j < m->n_strategies; j++)
		fprintf(f, "---|");
	fprintf(f, "\n");
	for (int i = 0; i < m->n_sc; i++) {
		lb_esc_fprintf(f, LB_LANG_MD, "| %s |", m->sc[i].name);
		for (size_t j = 0; j < m->n_strategies; j++) {
			const struct cell *c = NULL;
			for (int k = 0; k < m->n_cells; k++)
				if (m->cells[k].scenario == i && m->cells[k].s == m->strategies[j])
					c = &m->cells[k];
			if (!c) {
				fprintf(f, " n/a |");
				continue;
			}
			if (c->skipped[0]) {
				lb_esc_fprintf(f, LB_LANG_MD, " ⚠ skipped: %s |", c->skipped);
				continue;
			}
			if (c->runs == 0 && !c->failed) {
				fprintf(f, " not run (%s) |", lb_stop_requested() ? "the matrix was "
					"interrupted" : "the matrix stopped before it");
				continue;
			}
			figures(c, fig, sizeof(fig));
			if (c->repeat > m->repeat)
				fprintf(f, " ★");
			if (c->runs && c->passes == c->runs && !c->failed) {
				fprintf(f, " ✔ %s", lb_class_name((enum lb_class)c->observed[0]));
			} else {
				char want[128];
				failures++;
				lb_scenario_expect_text(&m->sc[c->scenario], c->s->name, want, sizeof(want));
				lb_esc_fprintf(f, LB_LANG_MD, " ✘ expected %s, got", want);
				for (int r = 0; r < c->runs; r++)
					fprintf(f, " %s", lb_class_name((enum lb_class)c->observed[r]));
				if (c->failed)
					fprintf(f, "%s %d failed run%s (void: no figures; lockbench said "
						"why)", c->runs ? " and" : "", c->failed,
						c->failed == 1 ? "" : "s");
				if (c->differs[0])
					lb_esc_fprintf(f, LB_LANG_MD, " (%s)", c->differs);
			}
			fprintf(f, "%s%s |", fig[0] ? "<br>" : "", fig);
		}
		fprintf(f, "\n");
	}
	int skipped = count_skipped(m), void_runs = count_failed_runs(m);
	fprintf(f, "\n%d cell%s differ%s from expectations (%d run%s failed: void, not a pass), "
		   "%d cell%s skipped (could not run here: not a pass).\n", failures,
		failures == 1 ? "" : "s", failures == 1 ? "s" : "", void_runs, void_runs == 1 ? "" : "s",
		skipped, skipped == 1 ? "" : "s");
	if (lb_outfile_close(&out) < 0)
		return LB_ESYS;
	return failures;
}

/* --junit FILE: a test case a cell, as --check judged it (junit.h). */
static int write_junit(const struct matrix *m)
{
	struct lb_junit j;

	if (lb_junit_open(&j, m->junit, "lockbench matrix") < 0)
		return LB_ESYS;
	for (int k = 0; k < m->n_cells; k++) {
		const struct cell *c = &m->cells[k];
		const struct lb_scenario *sc = &m->sc[c->scenario];
		char want[128], msg[600], scw[72], stw[72], *text = NULL;
		size_t text_len;
		enum lb_junit_outcome o = LB_JUNIT_FAIL;

		lb_scenario_expect_text(sc, c->s->name, want, sizeof(want));
		lb_path_word(sc->name, scw, sizeof(scw));
		lb_path_word(c->s->name, stw, sizeof(stw));
		FILE *t = open_memstream(&text, &text_len); /* whole: never cut */
		if (t) {
			fprintf(t, "expected: %s\nruns: %d, as expected: %d\nsummed over them: "
				"overlaps=%llu foreign_releases=%llu%s lost_updates=%lld\nrun "
				"directories: %s/%s/%s/1..%d\n", want, c->runs, c->passes,
				(unsigned long long)c->overlaps, (unsigned long long)c->foreign,
				c->foreign_na ? " (n/a in some)" : "", c->lost_updates, m->out, scw,
				stw, c->runs);
			fclose(t);
		}
		if (c->skipped[0]) {
			o = m->allow_skipped ? LB_JUNIT_SKIPPED : LB_JUNIT_FAIL;
			snprintf(msg, sizeof(msg), "skipped: %.500s", c->skipped);
		} else if (c->failed) {
			snprintf(msg, sizeof(msg), "%d of %d runs failed (void: lockbench said why)%s%.300s",
				 c->failed, c->failed + c->runs, c->differs[0] ? "; " : "", c->differs);
		} else if (c->runs == 0) {
			snprintf(msg, sizeof(msg), "not run: %s", lb_stop_requested() ? "the matrix was "
				 "interrupted" : "the matrix stopped before it (a run failed)");
		} else if (c->passes == c->runs) {
			o = LB_JUNIT_PASS;
			snprintf(msg, sizeof(msg), "%d of %d runs as expected", c->passes, c->runs);
		} else {
			snprintf(msg, sizeof(msg), "%d of %d runs differ from the expectation (%s): %.300s",
				 c->runs - c->passes, c->runs, want, c->differs);
		}
		lb_junit_case(&j, sc->name, c->s->name, c->seconds, o, msg, text ? text : "out of memory");
		free(text);
	}
	return lb_junit_close(&j);
}

int lb_cmd_matrix(int argc, char **argv)
{
	struct matrix m;
	char cmdline[1024];
	int rc, total, exit_code = LB_EXIT_OK;

	memset(&m, 0, sizeof(m));
	m.sc = calloc(MAX_SCENARIOS, sizeof(*m.sc));
	m.cells = calloc(MAX_SCENARIOS * LB_MAX_STRATEGIES, sizeof(*m.cells));
	if (!m.sc || !m.cells) {
		free(m.sc);
		free(m.cells);
		return LB_EXIT_FAIL;
	}
	lb_sh_cmdline(cmdline, sizeof(cmdline), "lockbench", argc, argv);
	rc = parse(argc, argv, &m); /* splits the list arguments in place */
	if (rc != 0) {
		exit_code = rc > 0 ? LB_EXIT_OK : LB_EXIT_USAGE;
		goto out;
	}
	for (int i = 0; i < m.n_sc; i++)
		for (size_t j = 0; j < m.n_strategies; j++)
			if (lb_scenario_applies(&m.sc[i], m.strategies[j]->name))
				m.cells[m.n_cells++] = (struct cell){
					.s = m.strategies[j], .scenario = i,
					.expected = lb_scenario_expected(&m.sc[i], m.strategies[j]->name),
					.repeat = lb_scenario_is_lesson(&m.sc[i], m.strategies[j]->name) &&
						  m.lesson_repeat > m.repeat ? m.lesson_repeat : m.repeat,
				};
	int rc_dir = lb_results_prepare_dir(m.out);
	if (rc_dir < 0) {
		exit_code = rc_dir == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
		goto out;
	}
	struct lb_outfile csv_out; /* in place: an interrupted matrix keeps its rows */
	if (lb_outfile_open(&csv_out, m.out, "matrix.csv", false) < 0) {
		exit_code = LB_EXIT_FAIL;
		goto out;
	}
	FILE *csv = csv_out.f;
	fprintf(csv, "scenario,strategy,expected,observed,repeat,pass,sections,overlaps,overlap_ms,"
		     "lost_updates,foreign_releases,lost_leases,orphan_ms,recovered,acquire_errors,"
		     "acquire_timeouts,busy_while_down,seed,dir\n");
	total = 0;
	for (int k = 0; k < m.n_cells; k++)
		total += m.cells[k].repeat;
	if (run_all(&m, csv, total) < 0)
		exit_code = LB_EXIT_FAIL;
	if (lb_outfile_close(&csv_out) < 0)
		exit_code = LB_EXIT_FAIL;
	int failures = write_md(&m, cmdline);
	if (failures < 0)
		exit_code = LB_EXIT_FAIL;
	if (m.junit[0] && write_junit(&m) < 0)
		exit_code = LB_EXIT_FAIL;
	if (!m.no_report && lb_report_dir(m.out) < 0) /* matrix.png, report.md and .html */
		exit_code = LB_EXIT_FAIL;
	int skipped = count_skipped(&m);
	printf("\n%d cells x %d repetitions", m.n_cells, m.repeat);
	if (total > m.n_cells * m.repeat)
		printf(" (%d for the lesson cells: %d runs)", m.lesson_repeat, total);
	int void_runs = count_failed_runs(&m);
	printf(": %d cell%s differ%s from expectations (%d run%s failed), %d skipped\n",
	       failures > 0 ? failures : 0, failures == 1 ? "" : "s", failures == 1 ? "s" : "",
	       void_runs, void_runs == 1 ? "" : "s", skipped);
	for (int k = 0; k < m.n_cells; k++)
		if (m.cells[k].skipped[0])
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  skipped: %s x %s: %s\n",
				       m.sc[m.cells[k].scenario].name, m.cells[k].s->name,
				       m.cells[k].skipped);
	lb_esc_fprintf(stdout, LB_LANG_TERM, "matrix in %s/matrix.md and %s/matrix.csv\n", m.out, m.out);
	if (!m.no_report)
		lb_esc_fprintf(stdout, LB_LANG_TERM, "in a browser: %s/report.html\n", m.out);
	if (lb_stop_requested()) {
		printf("interrupted: the matrix is incomplete%s\n",
		       m.check ? " (--check fails: not every cell was checked)" : "");
		if (m.check && exit_code == LB_EXIT_OK)
			exit_code = LB_EXIT_FAIL;
	}
	if (m.check && failures != 0 && exit_code == LB_EXIT_OK)
		exit_code = LB_EXIT_FAIL;
	if (m.check && skipped > 0 && !m.allow_skipped && exit_code == LB_EXIT_OK) {
		printf("--check fails: %d cell%s did not run (skipped is never passed; "
		       "--allow-skipped accepts it)\n", skipped, skipped == 1 ? "" : "s");
		exit_code = LB_EXIT_FAIL;
	}
out:
	free(m.sc);
	free(m.cells);
	return exit_code;
}
