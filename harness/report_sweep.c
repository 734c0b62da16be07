/* report_sweep.c - sweep charts: one line per strategy against the varied
 * parameter, for throughput, p99 latency, commands per section, violations. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "report.h"

#define MAX_LINES 32

int lb_report_sweep(const char *dir)
{
	char path[PATH_MAX], line[2048], names[MAX_LINES][64], param[32] = "value";
	int n = 0;
	bool split = false; /* some point measured a split-brain window */
	FILE *in, *gp, *md;
	struct lb_outfile og, om;

	snprintf(path, sizeof(path), "%.4000s/sweep.csv", dir);
	if (!(in = fopen(path, "r"))) {
		lb_errorf("cannot read %s: %s", path, strerror(errno));
		return LB_ESYS;
	}
	if (!fgets(line, sizeof(line), in))
		line[0] = '\0';
	while (fgets(line, sizeof(line), in)) {
		char *last = strrchr(line, ','), *end;
		if (last && strtod(last + 1, &end) >= 0 && end != last + 1 && (*end == '\n' || !*end))
			split = true;
		char *comma = strchr(line, ','), *p2;
		if (!comma)
			continue;
		*comma = '\0';
		if ((p2 = strchr(comma + 1, ',')) && (size_t)(p2 - comma - 1) < sizeof(param)) {
			memcpy(param, comma + 1, (size_t)(p2 - comma - 1));
			param[p2 - comma - 1] = '\0';
		}
		bool seen = false;
		for (int i = 0; i < n; i++)
			seen |= !strcmp(names[i], line);
		if (!seen && n < MAX_LINES)
			snprintf(names[n++], sizeof(names[0]), "%.63s", line);
	}
	fclose(in);
	if (lb_outfile_open(&og, dir, "sweep.gp", true) < 0)
		return LB_ESYS;
	gp = og.f;
	static const char *const charts[][4] = {
		/* counts start at 0 and reach at least 1: all zeros is a flat line
		 * on the floor, not a line in the middle of a -1..1 axis */
		{ "sweep-throughput", "5", "critical sections per second", "set yrange [0:1<*]\n" },
		{ "sweep-p99", "7", "p99 acquire latency (ms)", "set autoscale y\nset logscale y\n" },
		{ "sweep-cmds", "8", "Redis commands per section", "set yrange [0:1<*]\n" },
		{ "sweep-violations", "9", "overlapping sections", "set yrange [0:1<*]\n" },
		{ "sweep-split-brain", "16", "seconds two primaries granted the lock",
		  "set yrange [0:1<*]\n" },
	};
	size_t n_charts = split ? 5 : 4;
	fprintf(gp, "# lockbench sweep: edit and re-render with `gnuplot sweep.gp`\n"
		    "set datafile separator ','\nset key outside right\nset grid\nset xlabel '%s'\n"
		    "set logscale x 2\n", param);
	for (size_t c = 0; c < n_charts; c++) {
		fprintf(gp, "unset logscale y\n%sset title '%s against %s'\nset ylabel '%s'\n",
			charts[c][3], charts[c][2], param, charts[c][2]);
		lb_chart_png(gp, charts[c][0], 900, 420);
		fprintf(gp, "plot ");
		for (int i = 0; i < n; i++)
			fprintf(gp, "%s'sweep.csv' using (strcol(1) eq '%s' ? $3 : 1/0):(%s$%s%s) "
				    "with linespoints lw 2 title '%s'", i ? ", \\\n     " : "", names[i],
				c == 1 ? "" : "", charts[c][1], c == 1 || c == 4 ? "/1000.0" : "", names[i]);
		fprintf(gp, "\n");
		lb_chart_svg(gp, charts[c][0], 900, 420);
	}
	if (lb_outfile_close(&og) < 0)
		return LB_ESYS;
	int rc = lb_gnuplot(dir, "sweep.gp");
	if (rc < 0 && rc != LB_ENOTSUP) {
		lb_errorf("gnuplot failed on %s/sweep.gp; see %s/gnuplot.log", dir, dir);
		return rc;
	}
	if (lb_outfile_open(&om, dir, "report.md", true) < 0)
		return LB_ESYS;
	md = om.f;
	fprintf(md, "# sweep over %s\n\nEach point is one run on fresh servers; the figures are in "
		    "`sweep.csv` and each point's directory holds its own report.\n\n", param);
	if (rc == 0)
		fprintf(md, "![throughput](sweep-throughput.png)\n\n![p99 latency](sweep-p99.png)\n\n"
			    "![commands per section](sweep-cmds.png)\n\n![violations](sweep-violations.png)\n%s",
			split ? "\n![split brain](sweep-split-brain.png)\n\nThe seconds in which two "
				"primaries granted the lock (`split_brain_ms`): a point without one is "
				"missing, not 0.\n" : "");
	else
		fprintf(md, "gnuplot is not installed: `gnuplot sweep.gp` draws the charts.\n");
	return lb_outfile_close(&om);
}
