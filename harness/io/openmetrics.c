/*
 * openmetrics.c - a run's figures as OpenMetrics text (openmetrics.h).
 */
#include "openmetrics.h"

#include <libgen.h>
#include <stdbool.h>
#include <string.h>

#include "figures.h"
#include "outfile.h"
#include "util.h"

/* How a figure is a metric. */
struct metric {
	const char *figure_unit; /* the figure's unit ("" none) */
	char name[96];         /* without lockbench_ and without a counter's _total */
	const char *unit;      /* "seconds", "bytes", or NULL: the name ends with none */
	double scale;          /* the figure times @scale is in the metric's unit */
	bool counter;
};

/* The unit of a setting written as text, a time or a range of times
 * (hold_ms: "5" or "5-10"), from its name: "ms", or "" for none. */
static const char *text_unit(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && !strcmp(name + n - 3, "_ms") ? "ms" : "";
}

/* The metric of figure @f: false when it is not one (text, but a setting in
 * ms that holds one number; the seed: a 64-bit integer a float would round).
 * Its name is the figure's with each unit word in base units: us, ms, s ->
 * seconds (per_s -> per_second), kb -> bytes. */
static bool metric_of(const struct lb_figdef *f, struct metric *m)
{
	char copy[64];
	const char *unit = f->kind == LB_FD_TEXT && f->source == LB_FD_SETTING ? text_unit(f->name) :
			   f->unit;

	if ((f->kind == LB_FD_TEXT && !unit[0]) || !strcmp(f->name, "seed") ||
	    strlen(f->name) >= sizeof(copy))
		return false;
	memset(m, 0, sizeof(*m));
	m->figure_unit = unit;
	m->scale = !strcmp(unit, "us") ? 1e-6 : !strcmp(unit, "ms") ? 1e-3 :
		   !strcmp(unit, "KiB") ? 1024 : 1;
	bool time = !strcmp(unit, "us") || !strcmp(unit, "ms") || !strcmp(unit, "s");
	bool kib = !strcmp(unit, "KiB");
	snprintf(copy, sizeof(copy), "%s", f->name);
	const char *prev = "";
	char *save = NULL;
	for (char *t = strtok_r(copy, "_", &save); t; prev = t, t = strtok_r(NULL, "_", &save)) {
		const char *word = t;
		if (!strcmp(t, "s") && (!strcmp(prev, "per") || !time))
			word = "second"; /* a rate: per_s, per_held_s */
		else if (time && (!strcmp(t, "us") || !strcmp(t, "ms") || !strcmp(t, "s")))
			word = "seconds";
		else if (kib && !strcmp(t, "kb"))
			word = "bytes";
		snprintf(m->name + strlen(m->name), sizeof(m->name) - strlen(m->name), "%s%s",
			 m->name[0] ? "_" : "", word);
	}
	size_t n = strlen(m->name);
	if (time && n > 8 && !strcmp(m->name + n - 8, "_seconds"))
		m->unit = "seconds";
	else if (kib && n > 6 && !strcmp(m->name + n - 6, "_bytes"))
		m->unit = "bytes";
	/* a count of what happened in the run; a setting, a maximum or a
	 * number of clients is a gauge */
	m->counter = f->kind == LB_FD_INT && f->source != LB_FD_SETTING && !m->unit &&
		     strcmp(unit, "clients") && (n < 4 || strcmp(m->name + n - 4, "_max"));
	return true;
}

/* A label's value, escaped as the format asks (\\, \", \n). */
static void label(FILE *f, const char *key, const char *value, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", key);
	for (const unsigned char *c = (const unsigned char *)(value ? value : ""); *c; c++) {
		if (*c == '\\' || *c == '"')
			fprintf(f, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (*c >= 0x20 && *c != 0x7f)
			fputc(*c, f);
	}
	fputc('"', f);
}

static void labels(FILE *f, const struct lb_summary *s)
{
	fputc('{', f);
	label(f, "strategy", lb_summary_get(s, "strategy"), true);
	label(f, "scenario", lb_summary_get(s, "scenario"), false);
	fputc('}', f);
}

void lb_openmetrics_print(FILE *f, const struct lb_summary *s)
{
	size_t n;
	const struct lb_figdef *defs = lb_figdefs(&n);
	static const char *const info[] = { "observed", "expected", "seed", "variant", "interrupted" };

	fputs("# TYPE lockbench_run info\n# HELP lockbench_run the run: its class (observed), "
	      "the class its scenario expects, its seed\nlockbench_run_info", f);
	fputc('{', f);
	label(f, "strategy", lb_summary_get(s, "strategy"), true);
	label(f, "scenario", lb_summary_get(s, "scenario"), false);
	for (size_t i = 0; i < sizeof(info) / sizeof(info[0]); i++)
		if (lb_summary_get(s, info[i]))
			label(f, info[i], lb_summary_get(s, info[i]), false);
	fputs("} 1\n", f);
	for (size_t i = 0; i < n; i++) {
		struct metric m;
		const char *v = lb_summary_get(s, defs[i].name);
		double x;
		if (!v || !metric_of(&defs[i], &m))
			continue;
		bool inf = !strcmp(v, "inf");
		if (!inf && !lb_parse_double(v, &x))
			continue; /* n/a: not measured, left out */
		fprintf(f, "# TYPE lockbench_%s %s\n", m.name, m.counter ? "counter" : "gauge");
		if (m.unit)
			fprintf(f, "# UNIT lockbench_%s %s\n", m.name, m.unit);
		fprintf(f, "# HELP lockbench_%s summary.csv's %s%s%s%s%s\n", m.name, defs[i].name,
			m.figure_unit[0] ? " (" : "", m.figure_unit, m.figure_unit[0] ? ")" : "",
			m.scale != 1 ? ", here in base units" : "");
		fprintf(f, "lockbench_%s%s", m.name, m.counter ? "_total" : "");
		labels(f, s);
		if (inf)
			fputs(" +Inf\n", f);
		else if (m.counter)
			fprintf(f, " %.0f\n", x);
		else
			fprintf(f, " %.15g\n", x * m.scale);
	}
	fputs("# EOF\n", f);
}

int lb_openmetrics_write(const char *path, const struct lb_summary *s)
{
	struct lb_outfile o;
	char dir[4096], base[4096];
	int rc;

	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	if ((rc = lb_outfile_open(&o, dirname(dir), basename(base), true)) < 0)
		return rc;
	lb_openmetrics_print(o.f, s);
	return lb_outfile_close(&o);
}
