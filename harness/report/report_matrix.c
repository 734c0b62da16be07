/* report_matrix.c - the strategy x scenario grid as a chart, coloured by the
 * observed class, expected-vs-observed marked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "outfile.h"
#include "palette.h"
#include "report.h"

#define MAX_NAMES 64
#define NAME_LEN 256 /* an exec: path is up to 204 bytes */
#define MATRIX_CELL_W 220 /* a cell, wide enough for "✘ foreign-release" at 16 px */
#define MATRIX_MAX_W 1365 /* 16 px text is 12 px when the image is shown 1024 wide */

static int index_of(char (*names)[NAME_LEN], int *n, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(names[i], name))
			return i;
	if (*n == MAX_NAMES)
		return -1;
	snprintf(names[*n], NAME_LEN, "%s", name);
	return (*n)++;
}

/* @name as a tic label: at most 32 bytes (cut between UTF-8 characters),
 * "…" when cut; the whole name is in matrix.md. */
static const char *tic(const char *name, char *out, size_t len)
{
	size_t n = strlen(name);
	if (n <= 32 || len < 40) {
		snprintf(out, len, "%s", name);
		return out;
	}
	n = 31;
	while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
		n--;
	snprintf(out, len, "%.*s…", (int)n, name);
	return out;
}

/* The first six fields of a matrix.csv row (RFC 4180, as cmd_matrix writes
 * them) into @f; false when the row is malformed. */
static bool row_fields(const char *line, char (*f)[NAME_LEN])
{
	size_t pos = 0;
	for (int k = 0; k < 6; k++)
		if (!line[pos] || lb_csv_field(line, &pos, f[k], NAME_LEN) < 0)
			return false;
	return true;
}

/* The grid's rows and columns, by name in the order first met. */
struct grid {
	char sc[MAX_NAMES][NAME_LEN], st[MAX_NAMES][NAME_LEN];
	int n_sc, n_st;
	int n_dark, n_light; /* cells drawn on the two dark classes' colours, on the others' */
};

/* The index of the strategy (@st) or scenario whose Markdown (esc.h) is the
 * table cell @cell (spaces around it trimmed), or -1. */
static int cell_name(const struct grid *g, bool st, const char *cell, size_t len)
{
	char md[NAME_LEN * 2 + 8];
	int n = st ? g->n_st : g->n_sc;
	while (len && *cell == ' ')
		cell++, len--;
	while (len && cell[len - 1] == ' ')
		len--;
	for (int i = 0; i < n; i++) {
		lb_esc_snprintf(md, sizeof(md), LB_LANG_MD, "%s", st ? g->st[i] : g->sc[i]);
		if (strlen(md) == len && !memcmp(md, cell, len))
			return i;
	}
	return -1;
}

/* The | that ends the cell starting after @p (a \\X is text), or NULL. */
static const char *next_bar(const char *p)
{
	for (p++; *p && *p != '\n'; p += p[0] == '\\' && p[1] ? 2 : 1)
		if (*p == '|')
			return p;
	return NULL;
}

/* A row of matrix.md's table, each cell with links to its runs'
 * report.md (the page links their report.html): SCENARIO/STRATEGY/REP as
 * cmd_matrix names them, the repetitions whose directory is there. */
static void linked_row(FILE *out, const char *dir, const struct grid *g, const int *col,
		       const char *line)
{
	const char *p = line, *bar;
	int k = 0, row = -1;
	char scw[72], stw[72], rel[200], path[PATH_MAX];

	while ((bar = next_bar(p))) {
		fwrite(p, 1, (size_t)(bar - p), out);
		if (k == 0)
			row = cell_name(g, false, p + 1, (size_t)(bar - p - 1));
		else if (row >= 0 && k - 1 < MAX_NAMES && col[k - 1] >= 0) {
			lb_path_word(g->sc[row], scw, sizeof(scw));
			lb_path_word(g->st[col[k - 1]], stw, sizeof(stw));
			for (int r = 1; r <= 1000; r++) {
				snprintf(rel, sizeof(rel), "%s/%s/%d/report.md", scw, stw, r);
				snprintf(path, sizeof(path), "%.3800s/%s", dir, rel);
				if (access(path, R_OK) < 0)
					break;
				fprintf(out, "%s[%s%d](%s)", r == 1 ? "<br>" : " ", r == 1 ? "run " : "", r,
					rel);
			}
			fputc(' ', out);
		}
		p = bar;
		k++;
	}
	fputs(p, out);
}

/* report.md: the chart, then matrix.md's table, its cells linked to their
 * runs. */
static int write_report(const char *dir, bool drawn, const struct grid *g)
{
	char path[PATH_MAX];
	struct lb_outfile o;

	if (lb_outfile_open(&o, dir, "report.md", true) < 0)
		return LB_ESYS;
	FILE *out = o.f;
	if (drawn)
		fprintf(out, "![observed outcome per cell](matrix.png)\n\n");
	else if (!g->n_dark && !g->n_light)
		fprintf(out, "No cell has an outcome to draw (every run failed or was skipped): no "
			     "chart.\n\n");
	else
		fprintf(out, "gnuplot is not installed (Debian package `gnuplot-nox`): no chart was "
			     "drawn; `gnuplot matrix.gp` draws it from matrix-grid.dat.\n\n");
	snprintf(path, sizeof(path), "%.4000s/matrix.md", dir);
	FILE *in = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	int col[MAX_NAMES]; /* the strategy of each column of the table */
	bool table = false;
	while (in && getline(&line, &cap, in) > 0) {
		if (!strncmp(line, "| scenario |", 12)) {
			const char *p = line + 11, *bar;
			int k = 0;
			while ((bar = next_bar(p)) && k < MAX_NAMES) {
				col[k++] = cell_name(g, true, p + 1, (size_t)(bar - p - 1));
				p = bar;
			}
			while (k < MAX_NAMES)
				col[k++] = -1;
			table = true;
			fputs(line, out);
		} else if (table && line[0] == '|' && strncmp(line, "|---", 4)) {
			linked_row(out, dir, g, col, line);
		} else {
			table = table && line[0] == '|';
			fputs(line, out);
		}
	}
	free(line);
	if (in)
		fclose(in);
	fprintf(out, "\nEach cell's run has its own report.md with its timeline, under "
		     "<scenario>/<strategy>/<repetition>/.\n");
	return lb_outfile_close(&o);
}

/* Why a row of matrix.csv (its fields in @f) is not what cmd_matrix writes,
 * or NULL; its repetition and class into *@rep and *@cls (-1: skipped, or
 * failed: a void run, no class). */
static const char *bad_row(const char *line, char (*f)[NAME_LEN], int64_t *rep, int *cls)
{
	*cls = -1;
	if (!row_fields(line, f))
		return "fewer than 6 fields, or a quote not closed";
	if (!lb_parse_i64(f[4], 1, 1000000, rep))
		return "repeat: expected a number from 1";
	if (strcmp(f[3], "skipped") && strcmp(f[3], "failed") && (*cls = lb_class_parse(f[3])) < 0)
		return "observed: expected a class, skipped or failed";
	if (strcmp(f[5], "yes") && strcmp(f[5], "no") && strcmp(f[5], "-") && strcmp(f[5], "skipped"))
		return "pass: expected yes, no, - or skipped";
	return NULL;
}

/* matrix.csv's first repetitions into matrix-grid.dat, one square per
 * cell; malformed rows said with their line and left out. */
static int grid_data(const char *dir, const char *path, FILE *in, struct grid *g)
{
	char *line = NULL, f[6][NAME_LEN];
	size_t cap = 0;
	int bad = 0, at = 1, next = 1, first_bad = 0, crowded = 0; /* a record may span lines */
	bool header = true;
	const char *why = "";
	struct lb_outfile od;

	if (lb_outfile_open(&od, dir, "matrix-grid.dat", true) < 0)
		return LB_ESYS;
	fprintf(od.f, "# strategy_index scenario_index class_index label\n");
	while ((at = next, lb_csv_record_at(&line, &cap, in, &next)) >= 0) {
		if (header) {
			header = false;
			continue;
		}
		int64_t rep;
		int cls;
		const char *w = bad_row(line, f, &rep, &cls);
		if (w) {
			if (!bad++) {
				first_bad = at;
				why = w;
			}
			continue;
		}
		if (rep != 1 || cls < 0)
			continue; /* first repetition only: one square per cell; skipped, failed: none */
		int x = index_of(g->st, &g->n_st, f[1]), y = index_of(g->sc, &g->n_sc, f[0]);
		if (x < 0 || y < 0) {
			crowded++;
			continue;
		}
		if (cls == 2 || cls == 3)
			g->n_dark++;
		else
			g->n_light++;
		fprintf(od.f, "%d %d %d \"%s%s\"\n", x, y, cls, !strcmp(f[5], "yes") ? "✔ " :
			!strcmp(f[5], "-") ? "" : "✘ ", f[3]); /* "-": interrupted, not compared */
	}
	free(line);
	if (bad)
		lb_errorf("%s:%d: %s (%d malformed row%s left out of the chart)", path, first_bad, why,
			  bad, bad == 1 ? "" : "s");
	if (crowded)
		lb_errorf("%s: more than %d strategies or scenarios: %d cell%s not drawn", path, MAX_NAMES,
			  crowded, crowded == 1 ? "" : "s");
	return lb_outfile_close(&od);
}

/* The grid's panels of @per strategies, @cols wide, under each other. A
 * labels plot is given only where it has a cell to write: gnuplot 5.4 dies
 * (SIGSEGV) on labels whose every point is undefined (a matrix whose cells
 * were all deadlock, say). */
static void grid_panels(FILE *gp, const struct grid *g, int panels, int per, int cols)
{
	if (panels > 1)
		fprintf(gp, "set multiplot layout %d,1\n", panels);
	for (int p = 0; p < panels; p++) {
		fprintf(gp, "set xrange [%.1f:%.1f]\n%s", p * per - 0.5, p * per + cols - 0.5,
			p ? "unset title\n" : "set title 'observed outcome per cell (✔ = as expected)' "
			"font ',18'\n");
		/* one box per cell: 'with image' needs a full grid, and n/a cells leave
		 * holes; the class written in it (black, white on the two dark ones) */
		fprintf(gp, "plot 'matrix-grid.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 "
			    "noborder lc palette");
		if (g->n_light)
			fprintf(gp, ", '' using 1:($3 == 2 || $3 == 3 ? 1/0 : $2):4 with labels "
				    "font ',16' tc rgb 'black'");
		if (g->n_dark)
			fprintf(gp, ", '' using 1:($3 == 2 || $3 == 3 ? $2 : 1/0):4 with labels "
				    "font ',16' tc rgb 'white'");
		fprintf(gp, "\n");
	}
	if (panels > 1)
		fprintf(gp, "unset multiplot\n");
}

/* matrix.gp: the grid, its names as tics, sized to its labels. */
static int grid_script(const char *dir, const struct grid *g)
{
	char label[48];
	struct lb_outfile og;

	if (lb_outfile_open(&og, dir, "matrix.gp", true) < 0)
		return LB_ESYS;
	FILE *gp = og.f;
	fprintf(gp, "# lockbench matrix: observed outcome per cell (✔ as expected, ✘ not)\n"
		    "set title 'observed outcome per cell (✔ = as expected)'\n"
		    /* palette.h: apart for colour-blind viewers (test_palette.c) */
		    "set palette maxcolors 8\nset palette defined (0 '" LB_COL_SAFE "', 1 '"
		    LB_COL_M_OVERLAP "', 2 '" LB_COL_M_FOREIGN "', 3 '" LB_COL_DEADLOCK "', 4 '"
		    LB_COL_UNAVAILABLE "', 5 '" LB_COL_CONTAINED "', 6 '" LB_COL_INCONCLUSIVE "', 7 '"
		    LB_COL_INTERRUPTED "')\nset rmargin 18\n"
		    "set cbrange [-0.5:7.5]\nset cbtics ('safe' 0, 'overlap' 1, 'foreign-release' 2, "
		    "'deadlock' 3, 'unavailable' 4, 'contained' 5, 'inconclusive' 6, 'interrupted' 7)\n"
		    "set title font ',18'\nset xtics font ',16'\nset ytics font ',16'\nset cbtics font ',16'\n"
		    "set rmargin 28\nunset key\nset yrange [%d.5:-0.5]\n"
		    "set xtics rotate by -30 left (", g->n_sc - 1);
	for (int i = 0; i < g->n_st; i++)
		lb_esc_fprintf(gp, LB_LANG_GNUPLOT, i ? ", %s %d" : "%s %d",
			       tic(g->st[i], label, sizeof(label)), i);
	fprintf(gp, ")\nset ytics (");
	for (int i = 0; i < g->n_sc; i++)
		lb_esc_fprintf(gp, LB_LANG_GNUPLOT, i ? ", %s %d" : "%s %d",
			       tic(g->sc[i], label, sizeof(label)), i);
	/* room for the labels: the scenarios' beside the grid, the strategies'
	 * slanted under it (at most 33 characters each, tic()) */
	int ylen = 0, xlen = 0;
	for (int i = 0; i < g->n_sc; i++)
		ylen = (int)strlen(tic(g->sc[i], label, sizeof(label))) > ylen ? (int)strlen(label) : ylen;
	for (int i = 0; i < g->n_st; i++)
		xlen = (int)strlen(tic(g->st[i], label, sizeof(label))) > xlen ? (int)strlen(label) : xlen;
	/* legible on a projector: 16 pt text (16 px at scale 1), cells to fit
	 * it; and still 12 px when the image is shown 1024 pixels wide (a room's
	 * projector), so at most 1365 wide: more strategies than fit wrap into
	 * panels under each other, each with the scenarios beside it */
	int fixed = 300 + 10 * ylen, per = (MATRIX_MAX_W - fixed) / MATRIX_CELL_W;
	per = per < 1 ? 1 : per;
	int panels = (g->n_st + per - 1) / per, cols = g->n_st < per ? g->n_st : per;
	int ph = 160 + 60 * g->n_sc + 5 * xlen;
	int w = fixed + MATRIX_CELL_W * cols;
	if (w < 640)
		w = 640; /* the title */
	if (ph < 400)
		ph = 400; /* the colour key's eight names */
	/* margins in the terminal's 10 pt characters: gnuplot sizes them for
	 * that font, not the tics' */
	fprintf(gp, ")\nset tics scale 0\nset lmargin %d\nset bmargin %d\n", ylen * 3 / 2 + 3,
		xlen * 2 / 5 + 3);
	lb_chart_png(gp, "matrix", w, ph * panels);
	grid_panels(gp, g, panels, per, cols);
	lb_chart_svg_open(gp, "matrix", w, ph * panels); /* replot redraws the last panel only */
	grid_panels(gp, g, panels, per, cols);
	fprintf(gp, "unset output\n");
	return lb_outfile_close(&og);
}

int lb_report_matrix(const char *dir)
{
	static struct grid g;
	char path[PATH_MAX];
	FILE *in;

	memset(&g, 0, sizeof(g));
	snprintf(path, sizeof(path), "%.4000s/matrix.csv", dir);
	const char *kind;
	char why[96];
	int orc;
	if (!(in = lb_open_regular(path, &orc, &kind))) { /* a FIFO is refused, never waited on */
		lb_errorf("cannot read %s: %s", path, lb_open_why(kind, why, sizeof(why)));
		return orc;
	}
	int rc = grid_data(dir, path, in, &g);
	fclose(in);
	if (rc < 0 || grid_script(dir, &g) < 0)
		return LB_ESYS;
	if (!g.n_dark && !g.n_light) /* no cell has a class (every run failed or was skipped) */
		return write_report(dir, false, &g);
	char undrawn[400] = "";
	rc = lb_gnuplot(dir, "matrix.gp", undrawn, sizeof(undrawn));
	if (rc < 0 && rc != LB_ENOTSUP) {
		lb_errorf("%s: %s", dir, undrawn);
		return rc;
	}
	return write_report(dir, rc == 0, &g);
}
