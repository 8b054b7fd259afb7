/* profile_fixtures.h — small LLVM text profiles shared by the format tests:
 * plain (nested inlinees, call targets, discriminators) and probe-based
 * (checksums). */
#ifndef PK_PROFILE_FIXTURES_H
#define PK_PROFILE_FIXTURES_H

static const char plain[] =
    "main:1000:10\n"
    " 1: 10\n"
    " 2: 100 foo:60 bar:40\n"
    " 3.2: 50\n"
    " 4: inlined_fn:300\n"
    "  1: 200\n"
    "  2.1: 100 baz:100\n"
    "foo:500:60\n"
    " 0: 60\n"
    " 1: 440\n";

static const char probe[] =
    "main:100:10\n"
    " 1: 10\n"
    " 2: 30 foo:20\n"
    " 3: foo:20\n"
    "  1: 20\n"
    "  !CFGChecksum: 99\n"
    " !CFGChecksum: 123456\n"
    "bar:50:5\n"
    " 1: 50\n"
    " !CFGChecksum: 77\n";

#endif
