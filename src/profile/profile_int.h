/* profile_int.h — private to src/profile/: pieces shared by names.c,
 * profile.c and summary.c. */
#ifndef PK_PROFILE_INT_H
#define PK_PROFILE_INT_H

#include "profile/profile.h"

struct pk_fprof_slot {
    uint64_t loc;
    uint64_t count;
    uint32_t in_body;  /* a body entry exists at loc */
    uint32_t ncalls;   /* call targets at loc */
};

int pk_names_new(pk_profset *ps, pk_err *err);
void pk_names_free(pk_profset *ps);

#endif
