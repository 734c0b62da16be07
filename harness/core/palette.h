/*
 * palette.h - the colours of every chart (timeline.png/svg, matrix.png,
 * latency.png, fairness.png) and of report.html's timeline, in one place,
 * and what tells them apart: a colour-vision-deficiency simulation (Machado,
 * Oliveira and Fernandes 2009) and the CIEDE2000 colour difference
 * (palette.c). tests/test_palette.c holds every pair a viewer must tell
 * apart to a ΔE00 threshold, seen with normal vision, deuteranopia and
 * protanopia.
 *
 * The meanings keep the look they had (blue inside, red two or more inside);
 * where a pair collapsed under a simulated deficiency (an orange beside a
 * red, client 0 in the "inside" blue) a colour of Okabe and Ito's
 * colour-blind-safe set ("Color Universal Design", 2002/2008) or of Paul
 * Tol's (SRON/EPS/TN/09-002) took its place.
 */
#ifndef LB_PALETTE_H
#define LB_PALETTE_H

#include <stdbool.h>
#include <stddef.h>

/* the timeline (charts.c's gnuplot script, report.js's SVG) */
#define LB_COL_INSIDE "#4477aa"    /* inside its critical section */
#define LB_COL_OVERLAP "#cc3311"   /* two or more inside at once; a refused stale write */
#define LB_COL_RELEASING "#99bbdd" /* out of its section, still releasing */
#define LB_COL_FOREIGN "#e69f00"   /* a foreign release; a lease ended, holder not told */
#define LB_COL_KILLED "#000000"    /* killed (a dot: the other black marks are an x, a square) */
#define LB_COL_LOST "#777777"      /* a release that found the lock gone */
#define LB_COL_NO_OWNER "#999999"  /* Redis holds a value no client entered with */

/* a client's colour (c % LB_CLIENT_COLOURS): Redis holds, Redlock's nodes */
#define LB_CLIENT_COLOURS 8
#define LB_COL_CLIENT0 "#882255"
#define LB_COL_CLIENT1 "#88ccee"
#define LB_COL_CLIENT2 "#ccddaa"
#define LB_COL_CLIENT3 "#332288"
#define LB_COL_CLIENT4 "#ffee88"
#define LB_COL_CLIENT5 "#225555"
#define LB_COL_CLIENT6 "#663333"
#define LB_COL_CLIENT7 "#994455"

/* matrix.png: a cell's observed class, in the order of its palette index */
#define LB_COL_SAFE "#44aa77"
#define LB_COL_M_OVERLAP "#f46325"
#define LB_COL_M_FOREIGN "#b22000"
#define LB_COL_DEADLOCK "#882255"
#define LB_COL_UNAVAILABLE "#bbbbbb"
#define LB_COL_CONTAINED "#99ddff"
#define LB_COL_INCONCLUSIVE "#ffee88"
#define LB_COL_INTERRUPTED "#ffffff"

/* report.js's palette, as the page's script defines it before report.js */
#define LB_PALETTE_JS                                                                            \
	"var PAL={inside:'" LB_COL_INSIDE "',overlap:'" LB_COL_OVERLAP "',releasing:'"          \
	LB_COL_RELEASING "',foreign:'" LB_COL_FOREIGN "',killed:'" LB_COL_KILLED "',lost:'"    \
	LB_COL_LOST "',noOwner:'" LB_COL_NO_OWNER "',clients:['" LB_COL_CLIENT0 "','"         \
	LB_COL_CLIENT1 "','" LB_COL_CLIENT2 "','" LB_COL_CLIENT3 "','" LB_COL_CLIENT4 "','"    \
	LB_COL_CLIENT5 "','" LB_COL_CLIENT6 "','" LB_COL_CLIENT7 "']};\n"

/* client @c's colour, "#rrggbb" */
const char *lb_client_colour(int c);
/* the same as 0xRRGGBB, for gnuplot's `lc rgb variable` */
unsigned lb_client_rgb(int c);

/* how a colour is seen */
enum lb_vision { LB_VISION_NORMAL, LB_VISION_DEUTAN, LB_VISION_PROTAN };

/* "#rrggbb" as CIELAB (D65) as seen with @v (severity 1: dichromacy);
 * false when @hex is no such colour. */
bool lb_colour_lab(const char *hex, enum lb_vision v, double lab[3]);
/* The CIEDE2000 difference of two CIELAB colours. */
double lb_ciede2000(const double a[3], const double b[3]);
/* The CIEDE2000 difference of two "#rrggbb" colours as seen with @v; -1
 * when one is no colour. */
double lb_colour_delta(const char *a, const char *b, enum lb_vision v);

#endif
