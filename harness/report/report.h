/*
 * report.h - charts (gnuplot) and report.md for whatever a directory holds:
 * a run, a matrix or a sweep. Everything is drawn from the directory's own
 * files by gnuplot scripts written beside them, so anyone can edit a script
 * and re-render (`gnuplot timeline.gp`).
 */
#ifndef LB_REPORT_H
#define LB_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "esc.h"
#include "readers.h"
#include "results.h"

struct lb_import;
struct lb_ujudgement;

/* A run directory, read back from its files. */
struct lb_run_files {
	char dir[PATH_MAX - 64];
	struct lb_summary sum;
	struct lb_section *sec;
	size_t n;
	struct lb_event *ev;
	size_t n_ev;
	struct lb_hist lat;
	int clients, keys;
	int64_t ttl_ms;
	double elapsed_s;
	char disagrees[240];       /* report_run: the figures summary.csv states that its
				      own files do not give (verify.h), or "" */
	/* an imported history (import_dir.h): the file it kept, read and judged
	 * again (its names, each overlap certain or possible); NULL for a run */
	struct lb_import *imp;
	struct lb_ujudgement *uj;
	/* per section, where the servers' events were judged (NULL otherwise):
	 * when a server ended its lease while it was inside, and when its holder
	 * was first told (lb_notice_verdict), -1 for neither */
	int64_t *ended_ns, *told_ns;
};

int lb_run_files_load(const char *dir, struct lb_run_files *rf);
void lb_run_files_free(struct lb_run_files *rf);
/* What the run is, as a title: "set-nx-px under holder-pause", or
 * "imported history: prod.csv". */
void lb_run_title(const struct lb_run_files *rf, char *buf, size_t len);
/* A lane of the timeline: "client 2", or an imported history's "2: worker-b". */
void lb_run_lane_label(const struct lb_run_files *rf, int lane, char *buf, size_t len);

#define LB_GNUPLOT_LIMIT_MS 60000 /* one chart: gnuplot is killed past it */
/* Run `gnuplot SCRIPT` inside @dir (stdin /dev/null, LB_ETIMEOUT past the
 * limit). 0 drawn; else what happened in @why, said as it was: LB_ENOTSUP
 * gnuplot is not installed (exec found no program); LB_ECANCELED Ctrl-C
 * while drawing; LB_ETIMEOUT; LB_ESYS it failed (its exit status and the
 * last line it wrote to DIR/gnuplot.log, or the signal that killed it). */
int lb_gnuplot(const char *dir, const char *script, char *why, size_t len);
/* Every chart's size, fonts and lines times @scale (0.5 to 4; 1 by default),
 * for slides: --chart-scale. LB_EINVAL outside that range. */
int lb_chart_set_scale(double scale);
/* The same from an option's text, with the error printed. */
int lb_chart_scale_arg(const char *arg);
/* The scale set (1 unless --chart-scale): report.html's type grows with it. */
double lb_chart_scale(void);
/* "set terminal pngcairo ... set output 'NAME.png'" at the chart scale,
 * before a plot command; lb_chart_svg then draws the same plot as NAME.svg. */
void lb_chart_png(FILE *gp, const char *name, int w, int h);
void lb_chart_svg(FILE *gp, const char *name, int w, int h);
/* The SVG terminal and its output alone, for a script that draws again
 * itself (a multiplot, which replot does not redraw whole). */
void lb_chart_svg_open(FILE *gp, const char *name, int w, int h);

/* Write the run's .dat files and .gp scripts and draw them; @drawn says
 * whether gnuplot drew the PNG/SVG files, @why why not (lb_gnuplot). */
int lb_charts_run(const struct lb_run_files *rf, bool *drawn, char *why, size_t len);

/*
 * One paragraph per violation, in plain words, from the history and events
 * alone: overlaps (who was inside, why: a pause, a slow section, an expired
 * lease, a restart), foreign releases, deaths that left a lock behind.
 * At most @max paragraphs, then a count of the rest. Returns how many
 * violations it found.
 */
int lb_report_violations(FILE *f, const struct lb_run_files *rf, int max);
/* The same incidents, in time order, each handed to @each with its time and
 * its markdown text ("- **1.494 s: ...** ..."); returns how many it found. */
int lb_report_story(const struct lb_run_files *rf, int max,
		    void (*each)(void *arg, int64_t t_ns, const char *text), void *arg);
/* An imported history's overlaps (each clock allowed its uncertainty) and
 * fences that went backwards, in time order, each handed to @each with its
 * time (ns after the first enter) and its Markdown text, names escaped for
 * @lang (LB_LANG_MD, or LB_LANG_RAW for a page that escapes them itself); at
 * most @max. How many it told (0 for a run). */
int lb_report_imported_story(const struct lb_run_files *rf, enum lb_lang lang, int max,
			     void (*each)(void *arg, int64_t t_ns, const char *text), void *arg);
/* report.html beside report.md (report_html.c): one self-contained page with
 * the timeline, the story and a step-through of the run. */
int lb_report_html(const struct lb_run_files *rf);
/* DIR/report.html from DIR/report.md (an index, a matrix or a sweep report):
 * the same text, tables and charts as a page, links to runs' report.html. */
int lb_report_html_from_md(const char *dir);
/* report.html of a compare directory: the runs @runs (subdirectories, in
 * the order given) stacked on one time axis with one step-through, then
 * report.md. */
int lb_report_html_stacked(const char *dir, const char *const *runs, int n);

/* A lesson of a tour (cmd_tour.c): runs, of one scenario or several, shown
 * on one time axis with one step-through. */
struct lb_lesson_run {
	const char *scenario, *strategy, *dir, *label; /* dir: ROOT/ID/DIR holds the run */
};
#define LB_LESSON_RUNS 4
#define LB_DECK_STORY 8 /* a lesson tells each run's first 8 incidents, then how many more */
/* The code of a lesson (its wrong recipe, then its fix) as Redis commands,
 * redis-py and node-redis: lines; a line that begins with '>' is where the
 * wrong recipe breaks, marked on the step whose text holds @breaks. */
enum { LB_CODE_CMDS, LB_CODE_PY, LB_CODE_NODE, LB_CODE_LANGS };
struct lb_lesson {
	const char *id, *title, *watch, *page; /* page: the pitfall page to read */
	struct lb_lesson_run runs[LB_LESSON_RUNS]; /* up to the first without a scenario */
	const char *question; /* asked before anything is drawn */
	const char *notes;    /* speaker notes: where to point (no figure: the table has them) */
	const char *why;      /* why the fix works, and what it still does not fix */
	const char *breaks;   /* the step of the first run where the marked line breaks */
	const char *code[LB_CODE_LANGS][2]; /* [language][0 wrong, 1 fix] */
};
/* DIR/report.html: the deck of a tour, @n lessons in order, each drawn from
 * ROOT/ID/DIR of its runs, a contents list, a lesson picker and one
 * step-through that goes on to the next lesson past the last step; @source
 * says where the runs came from (text); @glossary, docs/glossary.md or NULL,
 * gives the handout its glossary. Nothing is written when a run cannot be read
 * (the message names it). */
int lb_report_html_deck(const char *dir, const char *root, const struct lb_lesson *ls, int n,
			const char *source, const char *glossary);

/* matrix.png and the matrix report (report_matrix.c). */
int lb_report_matrix(const char *dir);
/* Sweep charts and report (report_sweep.c). */
int lb_report_sweep(const char *dir);
/* report.md for a run, a matrix or a sweep directory. A stop signal that
 * comes while it works (signals.h, lb_stop_work) ends it within a second:
 * LB_ECANCELED, each file as it was or whole. */
int lb_report_dir(const char *dir);
/* report.html's "Redis holds" lane (report_lane.c): what the lock's servers
 * held, as JSON (an array of servers, each {server, port, from (its first
 * event as a primary), spans: [[from, to, owner, ttl_ms]]}: owner a client, -1 no owner, -2 unknown, -3 not
 * known what the server holds; ttl_ms -1 for none, null unknown), or null
 * where there is no lane (not watched, several locks or lock nodes). */
int lb_report_redis_lane(FILE *f, const struct lb_run_files *rf, double end_s);
/* The same lanes as timeline.gp's data (timeline-redis.dat: "lane from_s
 * length_s owner ttl_ms" lines): how many lanes (0: none), or what failed. */
int lb_report_redis_dat(FILE *f, const struct lb_run_files *rf, double end_s);
/* The steps the servers' own account adds after a holder died (report_lane.c):
 * a TTL another client gives its key, left without one, and the key's expiry.
 * To @each as story steps; 0, or what reading keyevents.csv returned. */
int lb_report_redis_steps(const struct lb_run_files *rf, void (*each)(void *, int64_t, const char *),
			  void *arg);
/* report.html of a large run (report_stretch.c): past LB_HTML_SECTIONS_MAX
 * sections the timeline draws each lane as stretches of the run, and only
 * the sections worth seeing one by one. */
#define LB_HTML_SECTIONS_MAX 20000
bool lb_report_stretched(const struct lb_run_files *rf);
/* The stretches as JSON (",\n\"agg\":{...}", to follow a run's "sec"), and
 * @keep[i] set for each section to write one by one: every section around
 * each of the @n step times @steps (ns), then those in an overlap, a foreign
 * release, a death or a lost lease, up to a budget. 0, or LB_ENOMEM. */
int lb_report_stretch_json(FILE *f, const struct lb_run_files *rf, const int64_t *steps,
			   size_t n, bool *keep);

#endif
