/* cmd_report.c - `lockbench report DIR`: charts and report.md for a run or a matrix. */
#include <stdio.h>

#include "commands.h"
#include "report.h"

int lb_cmd_report(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: lockbench report DIR   (a run or matrix directory)\n\n"
				"Draws the charts (gnuplot, PNG and SVG) from DIR's files, writes the\n"
				"gnuplot scripts beside them, and writes DIR/report.md.\n");
		return LB_EXIT_USAGE;
	}
	if (lb_report_dir(argv[1]) < 0)
		return LB_EXIT_FAIL;
	printf("report: %s/report.md\n", argv[1]);
	return LB_EXIT_OK;
}
