/*  gimpi_json.h — the one JSON string writer of the tools' --json output (gimpi-stat's
 *  groups and tasks, the table of tunables): quotes, backslashes and control characters
 *  escaped, everything else written as it is (UTF-8 passes through).
 */
#ifndef GIMPI_JSON_H
#define GIMPI_JSON_H

#include <stdio.h>

/*  Writes s to out as a JSON string, quotes included. */
void gimpi_json_str(FILE *out, const char *s);
#endif
