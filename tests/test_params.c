/*
 * test_params.c - the table of run parameters (harness/params/params.c): every row
 * is whole (help, unit, bounds, storage), every option is in --help and every
 * row in docs/running.md's table, and every row round-trips: a value given on
 * the command line reaches struct lb_run_cfg, so does one from a scenario's
 * [run], the command line wins over the scenario, sweep --vary sets its rows,
 * and one short real run writes each value into its summary.csv column.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "options.h"
#include "params.h"
#include "figures.h"
#include "readers.h"
#include "results.h"
#include "scenario.h"

FX_SUITE(params, 90);

static struct lb_run_opts o;    /* large: not on a worker's stack */
static struct lb_scenario sc;

static const struct lb_param *rows(size_t *n)
{
	const struct lb_param *t = lb_params(n);
	cr_assert_eq(*n, LB_P_COUNT);
	return t;
}

/* A value of @p other than its default; @k (0 or 1) picks one of two, which
 * differ where the type has room for two. */
static struct lb_param_value sample(const struct lb_param *p, int k)
{
	struct lb_param_value v;
	char err[256];

	memset(&v, 0, sizeof(v));
	switch (p->type) {
	case LB_PT_INT:
	case LB_PT_MS:
		v.i = p->min + 1 + k;
		if (v.i == p->dflt.i)
			v.i += 2;
		break;
	case LB_PT_U64:
		v.u = 4242 + (uint64_t)k;
		break;
	case LB_PT_SECONDS:
		v.s = 0.25 + 0.5 * k;
		break;
	case LB_PT_MS_RANGE:
		v.lo = p->min + 2 + k;
		v.hi = v.lo + 5;
		break;
	case LB_PT_WAIT:
		cr_assert_eq(lb_wait_parse(k ? "backoff:2:9" : "retries:3:7", &v.wait, err, sizeof(err)), 0);
		break;
	case LB_PT_WORDS: {
		int64_t n = 0;
		while (p->words[n])
			n++;
		v.i = (p->dflt.i + 1 + k) % n;
		if (v.i == p->dflt.i)
			v.i = (v.i + 1) % n;
		break;
	}
	case LB_PT_FLAG:
		v.i = 1;
		break;
	}
	cr_assert(!lb_param_equal(p, &v, &p->dflt), "%s: the sample is the default", p->name);
	return v;
}

/* @v as a scenario's [run] writes it (a negated flag the other way round). */
static void run_text(const struct lb_param *p, const struct lb_param_value *v, char *buf,
		     size_t len)
{
	struct lb_param_value w = *v;

	if (p->type == LB_PT_FLAG && p->run_negated)
		w.i = !w.i;
	lb_param_format(p, &w, buf, len);
}

static void assert_value(const struct lb_param *p, const struct lb_run_cfg *cfg,
			 const struct lb_param_value *want, const char *how)
{
	struct lb_param_value got;
	char g[64], w[64];

	lb_param_get(p, cfg, &got);
	lb_param_format(p, &got, g, sizeof(g));
	lb_param_format(p, want, w, sizeof(w));
	cr_assert(lb_param_equal(p, &got, want), "%s %s: the run has %s, not %s", how, p->name, g, w);
}

/* lockbench run with the command line @argv (RUN_DEFAULTS: no strategy needed). */
static int parse(int argc, const char **argv)
{
	return lb_run_opts_parse(argc, (char **)argv, LB_OPTS_RUN_DEFAULTS, &o);
}

/* [run] with @key = @text; Sentinel settings need that topology. */
static int parse_run(const struct lb_param *p, const char *text)
{
	char ini[256];
	enum lb_param_id id = lb_param_index(p);

	snprintf(ini, sizeof(ini), "[run]\n%s%s = %s\n", id == LB_P_MAX_LAG ||
		 id == LB_P_DOWN_AFTER ? "topology = sentinel\n" : "", p->run_key, text);
	return lb_scenario_parse_text(ini, "p.ini", &sc);
}

Test(params, every_row_is_whole)
{
	size_t n;
	const struct lb_param *t = rows(&n);
	struct lb_run_cfg cfg;
	struct lb_param_value v;
	char text[64], why[300];

	lb_run_cfg_defaults(&cfg);
	for (size_t i = 0; i < n; i++) {
		const struct lb_param *p = &t[i];
		cr_assert_eq(lb_param_row((enum lb_param_id)i), p);
		cr_assert_eq(lb_param_index(p), (enum lb_param_id)i);
		cr_assert(p->name && p->name[0], "row %zu has no name", i);
		cr_assert(p->help && p->help[0], "%s has no help text", p->name);
		cr_assert(p->unit && p->unit[0], "%s has no unit", p->name);
		cr_assert(p->cli || p->run_key || p->vary, "%s: nothing can set it", p->name);
		cr_assert(!p->column || !p->variant, "%s: a column and a part of variant", p->name);
		cr_assert_leq(p->min, p->max, "%s: empty bounds", p->name);
		cr_assert(!p->words == (p->type != LB_PT_WORDS), "%s: words", p->name);
		cr_assert(!p->run_negated || p->type == LB_PT_FLAG, "%s: only a flag is negated", p->name);
		cr_assert(!p->set == !p->get, "%s: a setter needs its getter", p->name);
		if (p->type == LB_PT_MS_RANGE || p->type == LB_PT_WORDS)
			cr_assert(p->set, "%s: its type is kept through set and get", p->name);
		if (p->vary)
			cr_assert_eq(lb_param_from_int(p, p->min, &v), 0, "%s: --vary takes integers",
				     p->name);
		/* one row a name on each surface */
		cr_assert(!p->cli || lb_param_by_cli(p->cli) == p, "%s: --%s twice", p->name, p->cli);
		cr_assert(!p->run_key || lb_param_by_run_key(p->run_key) == p, "%s", p->name);
		cr_assert(!p->vary || lb_param_by_vary(p->vary) == p, "%s", p->name);
		cr_assert(!p->column || lb_param_by_column(p->column) == p, "%s", p->name);
		/* the defaults are the rows' */
		assert_value(p, &cfg, &p->dflt, "by default,");
		/* a default inside the bounds reads back as itself; outside them it
		 * means "not set" and is refused as a value */
		lb_param_format(p, &p->dflt, text, sizeof(text));
		if (p->type != LB_PT_FLAG && lb_param_from_cli(p, text, &v, why, sizeof(why)) == 0)
			cr_assert(lb_param_equal(p, &v, &p->dflt), "%s: default %s", p->name, text);
		/* a summary column has its figure row, a setting */
		if (p->column) {
			const struct lb_figdef *f = lb_figdef_find(p->column);
			cr_assert_not_null(f, "%s: no figure row for %s", p->name, p->column);
			cr_assert_eq(f->source, LB_FD_SETTING);
		}
	}
	cr_assert_null(lb_param_by_cli("strategy"));
	cr_assert_null(lb_param_by_run_key("replica"), "a scenario's own key, not a run parameter");
}

/* `lockbench run --help` (compare and sweep print the same rows). */
Test(params, every_option_is_in_the_help_with_its_default)
{
	size_t n;
	const struct lb_param *t = rows(&n);
	const char *bin = getenv("LOCKBENCH_BIN");
	static char help[65536];
	char cmd[PATH_MAX + 32];

	cr_assert_not_null(bin, "run through make test");
	for (int m = 0; m < 3; m++) {
		snprintf(cmd, sizeof(cmd), "%s %s --help", bin, m == 0 ? "run" : m == 1 ? "compare" : "sweep");
		FILE *f = popen(cmd, "r");
		cr_assert_not_null(f);
		size_t len = fread(help, 1, sizeof(help) - 1, f);
		help[len] = '\0';
		cr_assert_eq(pclose(f), 0, "%s", cmd);
		for (size_t i = 0; i < n; i++) {
			char opt[64], dflt[64], line[128];
			if (!t[i].cli)
				continue;
			snprintf(opt, sizeof(opt), "\n  --%s ", t[i].cli);
			const char *at = strstr(help, opt);
			cr_assert_not_null(at, "%s --help does not show --%s", cmd, t[i].cli);
			if (!strstr(t[i].help, "{default}"))
				continue;
			/* its text, up to the next option, gives the default */
			size_t span = strstr(at + 1, "\n  --") ? (size_t)(strstr(at + 1, "\n  --") - at) :
				      strlen(at);
			lb_param_format(&t[i], &t[i].dflt, dflt, sizeof(dflt));
			snprintf(line, sizeof(line), "(%s", dflt);
			const char *d = strstr(at, line);
			cr_assert(d && (size_t)(d - at) < span, "--%s: its help does not give the default %s",
				  t[i].cli, dflt);
		}
		if (m == 2)
			for (size_t i = 0; i < n; i++)
				cr_assert(!t[i].vary || strstr(help, t[i].vary), "sweep --help: no %s",
					  t[i].vary);
	}
}

/* docs/running.md's table has a line for each row with every name it has
 * (scenarios.md documents the [run] section and points to it). */
Test(params, every_row_is_in_the_docs)
{
	char docs[PATH_MAX + 8];
	size_t n;
	const struct lb_param *t = rows(&n);

	snprintf(docs, sizeof(docs), "%s/docs", fx_root());
	char *running = strdup(fx_slurp(docs, "running.md"));
	const char *scenarios = fx_slurp(docs, "scenarios.md");
	for (size_t i = 0; i < n; i++) {
		const struct lb_param *p = &t[i];
		char head[64], name[80], line[512];
		snprintf(head, sizeof(head), "\n| %s |", p->name);
		const char *at = strstr(running, head);
		cr_assert_not_null(at, "docs/running.md's table of run parameters has no line for %s",
				   p->name);
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(at + 1, "\n"), at + 1);
		const char *want[] = { p->cli, p->run_key, p->vary, p->column };
		const char *fmt[] = { "`--%s", "`%s", "`%s`", "`%s`" };
		for (int k = 0; k < 4; k++) {
			if (!want[k])
				continue;
			snprintf(name, sizeof(name), fmt[k], want[k]);
			cr_assert(strstr(line, name), "docs/running.md, %s: no %s in '%s'", p->name, name,
				  line);
		}
		cr_assert(!p->variant || strstr(line, "in `variant`"), "%s: %s", p->name, line);
	}
	/* and the scenario format sends its readers there */
	cr_assert(strstr(scenarios, "running.md#run-parameters"));
	free(running);
}

Test(params, every_option_reaches_the_run)
{
	size_t n;
	const struct lb_param *t = rows(&n);
	char text[64], bad[80];

	for (size_t i = 0; i < n; i++) {
		const struct lb_param *p = &t[i];
		if (!p->cli)
			continue;
		struct lb_param_value v = sample(p, 0);
		char opt[64];
		lb_param_format(p, &v, text, sizeof(text));
		snprintf(opt, sizeof(opt), "--%s", p->cli);
		const char *argv[] = { "run", opt, text, NULL };
		cr_assert_eq(parse(p->type == LB_PT_FLAG ? 2 : 3, argv), 0, "%s %s", opt, text);
		assert_value(p, &o.cfg, &v, opt);
		cr_assert_eq(o.given, lb_param_bit((enum lb_param_id)i), "%s: the given bits", opt);
		/* and a value it does not take is a usage error */
		if (p->type == LB_PT_FLAG)
			continue;
		snprintf(bad, sizeof(bad), "%s-x", text);
		const char *wrong[] = { "run", opt, bad, NULL };
		cr_assert_eq(parse(3, wrong), LB_EINVAL, "%s %s was taken", opt, bad);
	}
}

Test(params, every_run_key_reaches_the_run)
{
	size_t n;
	const struct lb_param *t = rows(&n);
	const char *argv[] = { "run", NULL };
	char text[64];

	for (size_t i = 0; i < n; i++) {
		const struct lb_param *p = &t[i];
		if (!p->run_key)
			continue;
		struct lb_param_value v = sample(p, 0);
		run_text(p, &v, text, sizeof(text));
		cr_assert_eq(parse_run(p, text), 0, "%s = %s: %s", p->run_key, text, sc.error);
		cr_assert(lb_scenario_gives(&sc, (enum lb_param_id)i), "%s", p->run_key);
		assert_value(p, &sc.run, &v, p->run_key);
		cr_assert_eq(parse(1, argv), 0);
		lb_run_opts_apply_scenario(&o, &sc);
		assert_value(p, &o.cfg, &v, p->run_key);
		/* a value it does not take names the line and what was expected */
		cr_assert_neq(parse_run(p, "x-1"), 0, "%s = x-1 was taken", p->run_key);
		char want[80];
		snprintf(want, sizeof(want), "p.ini:%d: %s: expected ", lb_param_index(p) == LB_P_MAX_LAG ||
			 lb_param_index(p) == LB_P_DOWN_AFTER ? 3 : 2, p->run_key);
		cr_assert(strstr(sc.error, want), "'%s' does not say '%s'", sc.error, want);
	}
}

/* A value on the command line over another in the scenario: the command line's. */
Test(params, the_command_line_wins_over_the_scenario)
{
	size_t n;
	const struct lb_param *t = rows(&n);
	char text[64], opt[64];

	for (size_t i = 0; i < n; i++) {
		const struct lb_param *p = &t[i];
		if (!p->cli || !p->run_key)
			continue;
		/* a flag: off in the scenario, on on the command line */
		struct lb_param_value in_file = p->type == LB_PT_FLAG ? p->dflt : sample(p, 0);
		struct lb_param_value given = p->type == LB_PT_FLAG ? sample(p, 0) : sample(p, 1);
		if (lb_param_equal(p, &in_file, &given))
			given = p->dflt;
		cr_assert(!lb_param_equal(p, &in_file, &given), "%s", p->name);
		run_text(p, &in_file, text, sizeof(text));
		cr_assert_eq(parse_run(p, text), 0, "%s = %s: %s", p->run_key, text, sc.error);
		lb_param_format(p, &given, text, sizeof(text));
		snprintf(opt, sizeof(opt), "--%s", p->cli);
		const char *argv[] = { "run", opt, text, NULL };
		cr_assert_eq(parse(p->type == LB_PT_FLAG ? 2 : 3, argv), 0, "%s %s", opt, text);
		lb_run_opts_apply_scenario(&o, &sc);
		assert_value(p, &o.cfg, &given, "over the scenario,");
	}
}

Test(params, sweep_sets_every_vary_row_within_its_bounds)
{
	size_t n;
	const struct lb_param *t = rows(&n);
	struct lb_run_cfg cfg;

	for (size_t i = 0; i < n; i++) {
		const struct lb_param *p = &t[i];
		if (!p->vary)
			continue;
		struct lb_param_value v = sample(p, 0);
		int64_t x = p->type == LB_PT_MS_RANGE ? v.lo : v.i;
		if (p->type == LB_PT_MS_RANGE)
			v.hi = v.lo;
		lb_run_cfg_defaults(&cfg);
		cr_assert_eq(lb_run_cfg_set(&cfg, p->vary, x), 0, "--vary %s=%lld", p->vary, (long long)x);
		assert_value(p, &cfg, &v, "--vary");
		cr_assert_neq(lb_run_cfg_set(&cfg, p->vary, p->min - 1), 0, "%s below", p->vary);
		cr_assert_neq(lb_run_cfg_set(&cfg, p->vary, p->max + 1), 0, "%s above", p->vary);
	}
	cr_assert_neq(lb_run_cfg_set(&cfg, "duration", 3), 0, "duration is no --vary name");
}

/* One short real run: a scenario gives some parameters, the command line the
 * others and one over the scenario's; summary.csv has each in its column. */
Test(params, a_real_run_writes_every_column)
{
	char dir[64] = "/tmp/lbtest-params-XXXXXX", ini[128], out[128];
	size_t n;
	const struct lb_param *t = rows(&n);

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(ini, sizeof(ini), "%s/every-param.ini", dir);
	snprintf(out, sizeof(out), "%s/r", dir);
	FILE *f = fopen(ini, "w");
	cr_assert_not_null(f);
	const char *given = "[scenario]\nsummary = every run parameter away from its default\n"
			    "[run]\nclients = 3\nhold = 2-4\nthink = 1\nkeys = 2\nwork = none\n"
			    "max_renewals = 3\ndelayed_restarts = yes\nacquire_timeout = 900\n";
	const char *args[] = { "run", "--scenario", ini, "--strategy", "set-nx-px", "--duration", "0.3",
			       "--clients", "2", "--ttl", "1500", "--wait", "retries:3:7", "--seed",
			       "4242", "--nodes", "2", "--no-validity-check", "--count-commands",
			       "--no-status", "--no-report", "--out", out, NULL };
	fputs(given, f);
	/* a row added since, with a column: its sample in [run], so that a new
	 * parameter needs no line here */
	for (size_t i = 0; i < n; i++) {
		const struct lb_param *p = &t[i];
		char key[48], opt[48], text[64];
		bool there = false;
		if (!p->column || !p->run_key)
			continue;
		snprintf(key, sizeof(key), "\n%s = ", p->run_key);
		snprintf(opt, sizeof(opt), "--%s", p->cli ? p->cli : "");
		there = strstr(given, key) != NULL;
		for (size_t a = 0; args[a] && !there; a++)
			there = p->cli && !strcmp(args[a], opt);
		if (there)
			continue;
		struct lb_param_value v = sample(p, 0);
		run_text(p, &v, text, sizeof(text));
		fprintf(f, "%s = %s\n", p->run_key, text);
	}
	fclose(f);
	/* what the run should have: the same command line, parsed here */
	int argc = (int)(sizeof(args) / sizeof(args[0])) - 1;
	cr_assert_eq(lb_run_opts_parse(argc, (char **)args, LB_OPTS_RUN, &o), 0);
	cr_assert_eq(o.cfg.clients, 2, "the command line's, not the scenario's 3");
	cr_assert_eq(o.cfg.keys, 2, "the scenario's");
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));

	struct lb_summary s;
	char path[192], want[200], dflt[200];
	snprintf(path, sizeof(path), "%s/summary.csv", out);
	cr_assert_eq(lb_summary_read(path, &s), 0);
	struct lb_run_cfg defaults;
	lb_run_cfg_defaults(&defaults);
	defaults.strategy = o.cfg.strategy;
	for (size_t i = 0; i < n; i++) {
		const struct lb_param *p = &t[i];
		if (!p->column)
			continue;
		const char *got = lb_summary_get(&s, p->column);
		cr_assert_not_null(got, "summary.csv has no column %s", p->column);
		lb_param_column_text(p, &o.cfg, want, sizeof(want));
		lb_param_column_text(p, &defaults, dflt, sizeof(dflt));
		cr_assert_str_eq(got, want, "summary.csv %s", p->column);
		cr_assert_str_neq(want, dflt, "the run leaves %s at its default: give it a value here",
				  p->name);
	}
	lb_param_variant_text(&o.cfg, want, sizeof(want));
	cr_assert_str_eq(lb_summary_get(&s, "variant"), want);
	for (size_t i = 0; i < n; i++)
		cr_assert(!t[i].variant || strstr(want, t[i].name), "variant has no %s: give it a value "
			  "here", t[i].name);
	cr_assert_str_eq(lb_summary_get(&s, "scenario"), "every-param");
}

/* A number is written plainly on every surface: " 5", "+3", "5 ", hex, inf
 * and nan are typos or tricks that strtoll and strtod would read as numbers,
 * and each row refuses them with what it expected; the number itself, at the
 * row's lowest bound, is taken. */
Test(params, a_number_is_written_plainly)
{
	static const char *const bad[] = { " %s", "+%s", "%s ", "0x%s", "%s\t", "inf", "nan", "-" };
	size_t n, numeric = 0;
	const struct lb_param *rows = lb_params(&n);
	for (size_t i = 0; i < n; i++) {
		const struct lb_param *p = &rows[i];
		if (p->type != LB_PT_INT && p->type != LB_PT_MS && p->type != LB_PT_U64 &&
		    p->type != LB_PT_SECONDS && p->type != LB_PT_MS_RANGE)
			continue;
		numeric++;
		char good[32], text[48], why[256];
		struct lb_param_value v;
		snprintf(good, sizeof(good), "%lld", (long long)p->min + (p->type == LB_PT_SECONDS));
		cr_assert_eq(lb_param_from_cli(p, good, &v, why, sizeof(why)), 0, "%s %s: %s",
			     p->name, good, why);
		for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			snprintf(text, sizeof(text), bad[b], good);
			cr_assert_neq(lb_param_from_cli(p, text, &v, why, sizeof(why)), 0,
				      "%s took '%s'", p->name, text);
			cr_assert(strstr(why, "expected"), "%s '%s': %s", p->name, text, why);
		}
	}
	cr_assert_gt(numeric, 10, "only %zu numeric rows", numeric);
}

/* sweep --vary: every item of its list is a value; an empty one is a slip
 * (it was dropped, and the sweep had a point fewer than written). */
Test(params, a_vary_list_has_no_empty_item)
{
	static const char *const bad[] = { "clients=1,,2", "clients=,2", "clients=1,", "clients=",
					   "clients=1, 2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[] = { "sweep", "--strategy", "token-lua", "--vary", bad[i], NULL };
		cr_assert_neq(lb_run_opts_parse(5, (char **)argv, LB_OPTS_SWEEP, &o), 0, "took %s",
			      bad[i]);
	}
	const char *argv[] = { "sweep", "--strategy", "token-lua", "--vary", "clients=1,2,3", NULL };
	cr_assert_eq(lb_run_opts_parse(5, (char **)argv, LB_OPTS_SWEEP, &o), 0);
	cr_assert_eq(o.n_vary, 3);
}
