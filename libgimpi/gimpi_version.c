/*  gimpi_version.c — the library's version string, from the build's config.h. */
#include "config.h"
#include "gimpi.h"

/*  Version string of the library. */
const char *gimpi_version(void)
{
    return PACKAGE_VERSION;
}
