/* cmd_report.c - `lockbench report DIR`: charts and report.md for a run or a directory of runs. */
#include <stdio.h>
#include <string.h>

#include "esc.h"
#include "signals.h"
#include "commands.h"
#include "report.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench report [--chart-scale X] DIR\n"
		   "       (DIR: a run, compare, matrix, sweep, chaos or demo directory)\n\n"
		   "Draws the charts (gnuplot, PNG and SVG) from DIR's files, writes the\n"
		   "gnuplot scripts beside them, and writes DIR/report.md. --chart-scale X\n"
		   "draws them X times the size, fonts and lines (0.5 to 4; 2 for slides).\n"
		   "A run's report recomputes its figures as `lockbench check` does and says so,\n"
		   "on stderr and at the top of report.md, when summary.csv disagrees.\n\n"
		   "Exit status: 0 written, 1 a runtime failure (gnuplot failed, a file could\n"
		   "not be written), 2 usage error, 4 an input file is unreadable or malformed\n"
		   "(the file, line and field are named).\n");
}

int lb_cmd_report(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return LB_EXIT_OK;
	}
	if (argc == 4 && !strcmp(argv[1], "--chart-scale")) {
		if (lb_chart_scale_arg(argv[2]) < 0)
			return LB_EXIT_USAGE;
		argv += 2;
		argc -= 2;
	}
	if (argc != 2 || argv[1][0] == '-') {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	if (!lb_dir_arg_ok("report", argv[1]))
		return LB_EXIT_USAGE;
	int rc = lb_report_dir(argv[1]);
	if (lb_stop_requested()) /* Ctrl-C: charts not drawn are not waited for */
		return 128 + lb_stop_signal();
	if (rc == LB_EINVAL)
		return LB_EXIT_INPUT;
	if (rc < 0)
		return LB_EXIT_FAIL;
	lb_esc_fprintf(stdout, LB_LANG_TERM, "report: %s/report.md\nin a browser: %s/report.html\n",
		       argv[1], argv[1]);
	return LB_EXIT_OK;
}
