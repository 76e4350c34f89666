/*  trace_html.h — gimpi-trace's HTML view: a strict syntax check of a Chrome trace-event
 *  JSON file (one JSON value, RFC 8259, well-formed UTF-8, bounded nesting, an array of
 *  events or an object with a "traceEvents" array) and the writer of the single
 *  self-contained page that embeds the trace and the script that draws it (a space-time
 *  diagram and a utilisation strip in SVG; programs/trace_html.js and trace_html.css).
 */
#ifndef TRACE_HTML_H
#define TRACE_HTML_H

#include <stddef.h>
#include <stdio.h>

/*  The deepest nesting of arrays and objects the check accepts. */
enum { TRACE_HTML_MAX_DEPTH = 256 };

/*  Checks that text[0..len) is one JSON value and a trace: an array (of events) or an
 *  object whose "traceEvents" member is an array.  A UTF-8 byte-order mark is allowed.
 *  0, or -1 with a message in err (at most errlen bytes, "LINE:COL: what is wrong"). */
int trace_html_check(const char *text, size_t len, char *err, size_t errlen);

/*  Writes the page for the trace text[0..len) (checked by trace_html_check) to out, with
 *  title as the page's title (HTML-escaped here).  0, or -1 when a write failed. */
int trace_html_write(FILE *out, const char *text, size_t len, const char *title);
#endif
