/*  gimpi_export.h — the mark of libgimpi's public interface.
 *
 *  libgimpi is compiled with -fvisibility=hidden: a function or variable is exported from
 *  the shared library only when its declaration in one of the installed headers carries
 *  GIMPI_EXPORT.  Everything else in the library (the layers' own helpers) stays hidden,
 *  so libgimpi.so exports exactly what include/ declares (t/exports.sh checks both ways).
 *  For a caller the mark is harmless: it only states the default visibility.
 */
#ifndef GIMPI_EXPORT_H
#define GIMPI_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define GIMPI_EXPORT __attribute__((visibility("default")))
#else
#define GIMPI_EXPORT
#endif

#endif
