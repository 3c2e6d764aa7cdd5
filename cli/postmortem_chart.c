/*
 * postmortem_chart.c - the timeline chart of a post-mortem bundle (timeline.png), drawn
 * with cairo (text through fontconfig): the only file of muster that includes cairo.h.
 *
 * One lane per role the job had in the records (its own decisions, preemptor, victim,
 * nominations cleared, named), time left to right over the bundle's range; each record is
 * a mark coloured by its kind, preemptions as tall marks, with the record's seq under the
 * first marks of each lane that have room. Deterministic for one timeline: no clock, no
 * randomness, so a test may compare two renderings.
 */
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define W 1200
#define LANE_H 60
#define LEFT 170
#define RIGHT 30
#define TOP 50
#define BOTTOM 50

static const char *const lanes[] = {"decision", "preemptor", "victim", "nominations cleared",
                                    "named"};
#define NLANES (sizeof(lanes) / sizeof(lanes[0]))

static int lane_of(const char *role)
{
    for (size_t i = 0; i < NLANES; i++)
        if (role && !strcmp(role, lanes[i]))
            return (int)i;
    return (int)NLANES - 1;
}

static void colour(cairo_t *cr, const char *kind)
{
    static const struct {
        const char *kind;
        double r, g, b;
    } map[] = {{"placed", .15, .6, .2},      {"running", .1, .45, .15},
               {"preempted", .85, .15, .1},  {"evicted", .6, .1, .1},
               {"nominated", .95, .6, .1},   {"unschedulable", .5, .5, .5},
               {"discarded", .65, .65, .65}, {"applied", .2, .4, .8},
               {"deleted", .3, .2, .6},      {"gang-timed-out", .6, .3, .7}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (kind && !strcmp(kind, map[i].kind)) {
            cairo_set_source_rgb(cr, map[i].r, map[i].g, map[i].b);
            return;
        }
    cairo_set_source_rgb(cr, .3, .3, .3);
}

/* The time range of the timeline's entries: *t0 the first, *t1 the last (a second later
 * when they are the same). */
static void time_range(json_t *timeline, int64_t *t0, int64_t *t1)
{
    size_t i;
    json_t *e;
    *t0 = *t1 = 0;
    json_array_foreach(timeline, i, e)
    {
        int64_t t = json_integer_value(json_object_get(e, "tsMs"));
        if (!i || t < *t0)
            *t0 = t;
        if (!i || t > *t1)
            *t1 = t;
    }
    if (*t1 <= *t0)
        *t1 = *t0 + 1000;
}

/* The white page, the title and the lanes with their names. */
static void background(cairo_t *cr, const char *title)
{
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 15);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, 10, 25);
    cairo_show_text(cr, title);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 11);
    for (size_t l = 0; l < NLANES; l++) {
        double y = TOP + (double)l * LANE_H;
        cairo_set_source_rgb(cr, l % 2 ? .97 : .93, l % 2 ? .97 : .93, l % 2 ? .97 : .95);
        cairo_rectangle(cr, LEFT, y, W - LEFT - RIGHT, LANE_H);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, 10, y + LANE_H / 2.0 + 4);
        cairo_show_text(cr, lanes[l]);
    }
}

/* One mark per entry in its role's lane, at its time in [t0, t1], with its seq where
 * there is room. */
static void marks(cairo_t *cr, json_t *timeline, int64_t t0, int64_t t1)
{
    double span = (double)(t1 - t0), last_label[NLANES];
    size_t i;
    json_t *e;
    for (size_t l = 0; l < NLANES; l++)
        last_label[l] = -1e9;
    json_array_foreach(timeline, i, e)
    {
        const char *kind = json_string_value(json_object_get(e, "kind"));
        int l = lane_of(json_string_value(json_object_get(e, "role")));
        double x = LEFT + 5 +
                   (W - LEFT - RIGHT - 10) *
                       (double)(json_integer_value(json_object_get(e, "tsMs")) - t0) / span;
        double y = TOP + l * LANE_H,
               tall = kind && (!strcmp(kind, "preempted") || !strcmp(kind, "evicted"));
        colour(cr, kind);
        cairo_rectangle(cr, x - 3, y + (tall ? 6 : 16), 6, tall ? LANE_H - 22 : LANE_H - 32);
        cairo_fill(cr);
        if (x - last_label[l] > 40) {
            char seq[32];
            snprintf(seq, sizeof(seq), "%lld",
                     (long long)json_integer_value(json_object_get(e, "seq")));
            cairo_set_source_rgb(cr, .2, .2, .2);
            cairo_move_to(cr, x - 8, y + LANE_H - 4);
            cairo_show_text(cr, seq);
            last_label[l] = x;
        }
    }
}

/* The time axis: the range's ends, at the bottom of a page h high. */
static void axis(cairo_t *cr, json_t *timeline, int h)
{
    size_t n = json_array_size(timeline);
    cairo_set_source_rgb(cr, 0, 0, 0);
    const char *first =
        n ? json_string_value(json_object_get(json_array_get(timeline, 0), "ts")) : "";
    const char *lastts =
        n ? json_string_value(json_object_get(json_array_get(timeline, n - 1), "ts")) : "";
    cairo_move_to(cr, LEFT, h - 20);
    cairo_show_text(cr, first ? first : "");
    cairo_text_extents_t ext;
    cairo_text_extents(cr, lastts ? lastts : "", &ext);
    cairo_move_to(cr, W - RIGHT - ext.width, h - 20);
    cairo_show_text(cr, lastts ? lastts : "");
}

int cli__postmortem_chart(json_t *timeline, const char *title, const char *path, struct err *err)
{
    int h = TOP + (int)NLANES * LANE_H + BOTTOM;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, h);
    cairo_t *cr = cairo_create(s);
    int64_t t0, t1;
    time_range(timeline, &t0, &t1);
    background(cr, title);
    marks(cr, timeline, t0, t1);
    axis(cr, timeline, h);
    cairo_surface_flush(s);
    cairo_status_t st = cairo_surface_write_to_png(s, path);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    /* the font caches cairo's text filled, which would otherwise live until exit: the CLI
     * draws one chart, and the sanitizer build counts what is left as leaks */
    cairo_debug_reset_static_data();
    FcFini();
    if (st != CAIRO_STATUS_SUCCESS)
        return err_set(err, ERR_IO, "cannot write the timeline chart '%s': %s", path,
                       cairo_status_to_string(st));
    return 0;
}
