/* demangle.h — C++ linkage names made readable for the human views (show,
 * report, check, overlap), through the C++ runtime's __cxa_demangle (the
 * Itanium ABI demangler every g++/clang++ toolchain ships). Profiles, JSON
 * and every other machine output keep linkage names: names are matched by
 * them (and GUIDs are their MD5).
 *
 * The text form follows c++filt's filter mode: in running text, each word of
 * letters, digits, '_', '$' and '.' that is a mangled name ("_Z...", clone
 * suffixes such as ".cold" or ".__uniq.N" included) is replaced by its
 * demangled form; everything else is copied. So "[main:3 @ _Z3foov]" reads
 * "[main:3 @ foo()]". One difference from c++filt: the standard
 * abbreviations (Ss, So, Si...) print short ("std::string"), as
 * __cxa_demangle does, where c++filt spells them out. */
#ifndef PK_DEMANGLE_H
#define PK_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pk_demangler {
    bool off;                   /* --no-demangle: text is returned as it is */
    char *out, *word, *dm;      /* scratch, reused between calls */
    size_t out_cap, word_cap, dm_cap;
} pk_demangler;

/* text with its mangled names demangled; valid until the next call on d
 * (text itself when d->off, or when nothing in it is mangled, or on out of
 * memory). */
const char *pk_demangle_text(pk_demangler *d, const char *text);
void pk_demangler_free(pk_demangler *d);

#endif
