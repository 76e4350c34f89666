/*  trace_html.c — gimpi-trace's HTML view.  The C side never interprets the trace: it
 *  checks that the file is strict JSON of the trace-event shape (so that a malformed file
 *  is an error with its line and column, not a blank page), then writes one page that
 *  holds everything it needs (no network): the style, the trace text verbatim in a
 *  <script type="application/json"> (every '<' written as \u003c, which can only occur
 *  inside a JSON string, so the text can never close the element) and the script that
 *  parses it and draws the diagram.  The style and script are programs/trace_html.css and
 *  trace_html.js, turned into C strings at build time (programs/trace_html_assets.h).
 */
#include "programs/trace_html.h"
#include "programs/trace_html_assets.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*  A check in progress: the text, where it is, how deep, and the first error. */
typedef struct {
    const unsigned char *s;
    size_t len;
    size_t pos;
    int depth;
    const char *err;        /* the first error, or NULL */
    size_t err_pos;
} jcheck_t;

static void check_value(jcheck_t *self);

/*  Records the first error, at the current position (at the end: the file was cut). */
static void check_fail(jcheck_t *self, const char *what)
{
    if (!self->err) {
        if (self->pos >= self->len && strncmp(what, "unterminated", 12) != 0)
            what = "unexpected end of the file";
        self->err = what;
        self->err_pos = self->pos;
    }
}

/*  Skips JSON's four whitespace characters. */
static void check_ws(jcheck_t *self)
{
    while (self->pos < self->len) {
        unsigned char c = self->s[self->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        self->pos++;
    }
}

/*  The byte at the current position, or -1 at the end. */
static int check_peek(const jcheck_t *self)
{
    return self->pos < self->len ? self->s[self->pos] : -1;
}

/*  Skips the literal word (true, false, null) that starts here. */
static void check_word(jcheck_t *self, const char *word)
{
    size_t n = strlen(word);
    if (self->len - self->pos < n || memcmp(self->s + self->pos, word, n) != 0)
        check_fail(self, "unexpected character (not a JSON value)");
    else
        self->pos += n;
}

/*  Skips one or more decimal digits; an error if there is none. */
static void check_digits(jcheck_t *self)
{
    size_t start = self->pos;
    while (self->pos < self->len && self->s[self->pos] >= '0' && self->s[self->pos] <= '9')
        self->pos++;
    if (self->pos == start)
        check_fail(self, "a digit expected in a number");
}

/*  Skips a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static void check_number(jcheck_t *self)
{
    if (check_peek(self) == '-')
        self->pos++;
    if (check_peek(self) == '0')
        self->pos++;
    else
        check_digits(self);
    if (!self->err && check_peek(self) == '.') {
        self->pos++;
        check_digits(self);
    }
    if (!self->err && (check_peek(self) == 'e' || check_peek(self) == 'E')) {
        self->pos++;
        if (check_peek(self) == '+' || check_peek(self) == '-')
            self->pos++;
        check_digits(self);
    }
}

/*  The length of the well-formed UTF-8 sequence of two to four bytes at the position
 *  (no overlong form, no surrogate, nothing above U+10FFFF), or 0. */
static size_t check_utf8(const jcheck_t *self)
{
    const unsigned char *p = self->s + self->pos;
    size_t left = self->len - self->pos;
    size_t n;
    uint32_t cp, min;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2, cp = p[0] & 0x1f, min = 0x80;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        n = 3, cp = p[0] & 0x0f, min = 0x800;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        n = 4, cp = p[0] & 0x07, min = 0x10000;
    else
        return 0;
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/*  Skips a string, its quotes included: escapes as JSON has them, no control
 *  character, well-formed UTF-8. */
static void check_string(jcheck_t *self)
{
    self->pos++;        /* the opening quote */
    while (!self->err) {
        int c = check_peek(self);
        if (c < 0) {
            check_fail(self, "unterminated string");
        } else if (c == '"') {
            self->pos++;
            return;
        } else if (c < 0x20) {
            check_fail(self, "control character in a string (write it as \\u00XX)");
        } else if (c == '\\') {
            self->pos++;
            c = check_peek(self);
            if (c >= 0 && strchr("\"\\/bfnrt", c)) {
                self->pos++;
            } else if (c == 'u') {
                self->pos++;
                for (int i = 0; i < 4 && !self->err; i++) {
                    int h = check_peek(self);
                    if (h < 0 || !strchr("0123456789abcdefABCDEF", h))
                        check_fail(self, "\\u needs four hexadecimal digits");
                    else
                        self->pos++;
                }
            } else {
                check_fail(self, "unknown escape in a string");
            }
        } else if (c < 0x80) {
            self->pos++;
        } else {
            size_t n = check_utf8(self);
            if (n == 0)
                check_fail(self, "invalid UTF-8 in a string");
            self->pos += n;
        }
    }
}

/*  Skips an array or an object (open is '[' or '{'), members and all. */
static void check_container(jcheck_t *self, int open)
{
    int close = open == '[' ? ']' : '}';
    if (++self->depth > TRACE_HTML_MAX_DEPTH) {
        check_fail(self, "arrays and objects nested too deep");
        return;
    }
    self->pos++;
    check_ws(self);
    if (check_peek(self) == close) {
        self->pos++;
        self->depth--;
        return;
    }
    while (!self->err) {
        if (open == '{') {
            if (check_peek(self) != '"') {
                check_fail(self, "a member name (a string) expected");
                break;
            }
            check_string(self);
            check_ws(self);
            if (!self->err && check_peek(self) != ':')
                check_fail(self, "':' expected after a member name");
            self->pos++;
        }
        check_value(self);
        check_ws(self);
        int c = check_peek(self);
        if (c == close) {
            self->pos++;
            break;
        }
        if (c != ',')
            check_fail(self, open == '[' ? "',' or ']' expected in an array"
                                         : "',' or '}' expected in an object");
        self->pos++;
        check_ws(self);
    }
    self->depth--;
}

/*  Skips one value and the whitespace before it. */
static void check_value(jcheck_t *self)
{
    if (self->err)
        return;
    check_ws(self);
    int c = check_peek(self);
    if (c < 0)
        check_fail(self, "unexpected end of the file");
    else if (c == '{' || c == '[')
        check_container(self, c);
    else if (c == '"')
        check_string(self);
    else if (c == '-' || (c >= '0' && c <= '9'))
        check_number(self);
    else if (c == 't')
        check_word(self, "true");
    else if (c == 'f')
        check_word(self, "false");
    else if (c == 'n')
        check_word(self, "null");
    else
        check_fail(self, "unexpected character (not a JSON value)");
}

/*  Whether the top-level object (at the position, after '{') has a member "traceEvents"
 *  whose value is an array.  The text is known to be valid JSON. */
static bool check_has_events(jcheck_t *self)
{
    static const char key[] = "\"traceEvents\"";
    self->pos++;
    for (;;) {
        check_ws(self);
        if (check_peek(self) != '"')
            return false;       /* '}': no more members */
        bool is_key = self->len - self->pos >= sizeof key - 1 &&
                      memcmp(self->s + self->pos, key, sizeof key - 1) == 0;
        check_string(self);
        check_ws(self);
        self->pos++;            /* ':' */
        check_ws(self);
        if (is_key && check_peek(self) == '[')
            return true;
        check_value(self);
        check_ws(self);
        self->pos++;            /* ',' or '}' */
    }
}

/*  Writes "LINE:COL: what" for the byte offset pos of text into err. */
static void check_where(const char *text, size_t pos, const char *what, char *err,
                        size_t errlen)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n')
            line++, col = 1;
        else if (((unsigned char)text[i] & 0xc0) != 0x80)
            col++;
    }
    snprintf(err, errlen, "%zu:%zu: %s", line, col, what);
}

/*  The length of a UTF-8 byte-order mark at the start of text, or 0. */
static size_t bom_len(const char *text, size_t len)
{
    return len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

int trace_html_check(const char *text, size_t len, char *err, size_t errlen)
{
    jcheck_t self = { .s = (const unsigned char *)text, .len = len, .pos = bom_len(text, len) };
    check_ws(&self);
    size_t top = self.pos;
    int first = check_peek(&self);
    if (first < 0) {
        check_where(text, 0, "empty file (no JSON value)", err, errlen);
        return -1;
    }
    check_value(&self);
    check_ws(&self);
    if (!self.err && self.pos < self.len)
        check_fail(&self, "text after the JSON value");
    if (self.err) {
        check_where(text, self.err_pos, self.err, err, errlen);
        return -1;
    }
    self.pos = top;
    if (first == '{' && !check_has_events(&self)) {
        check_where(text, top, "not a trace: the object has no \"traceEvents\" array", err,
                    errlen);
        return -1;
    }
    if (first != '{' && first != '[') {
        check_where(text, top, "not a trace: an array of events or an object with "
                    "\"traceEvents\" expected", err, errlen);
        return -1;
    }
    return 0;
}

/*  Writes s HTML-escaped (&, <, >, ") to out. */
static void write_escaped(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

/*  Writes the lines of a generated asset (a NULL-terminated array of strings). */
static void write_asset(FILE *out, const char *const *lines)
{
    for (; *lines; lines++)
        fputs(*lines, out);
}

int trace_html_write(FILE *out, const char *text, size_t len, const char *title)
{
    size_t start = bom_len(text, len);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"generator\" content=\"gimpi-trace\">\n<title>", out);
    write_escaped(out, title);
    fputs("</title>\n<style>\n", out);
    write_asset(out, trace_html_css);
    fputs("</style>\n</head>\n<body data-status=\"loading\">\n<noscript>This page draws "
          "the trace with JavaScript: allow scripts for this file.</noscript>\n"
          "<script type=\"application/json\" id=\"gimpi-trace-data\">\n", out);
    size_t run = start;
    for (size_t i = start; i < len; i++) {
        if (text[i] != '<')
            continue;
        fwrite(text + run, 1, i - run, out);
        fputs("\\u003c", out);
        run = i + 1;
    }
    fwrite(text + run, 1, len - run, out);
    fputs("\n</script>\n<script>\n", out);
    write_asset(out, trace_html_js);
    fputs("</script>\n</body>\n</html>\n", out);
    return ferror(out) ? -1 : 0;
}
