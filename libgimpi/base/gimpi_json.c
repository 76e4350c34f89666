/*  gimpi_json.c — a JSON string writer for the tools' --json output (gimpi_json.h).
 */
#include "base/gimpi_json.h"

/*  Writes s to out as a JSON string, quotes included. */
void gimpi_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}
