/* overlap_exact.h — block overlap against the emulator's exact counts. */
#ifndef PK_CLI_OVERLAP_EXACT_H
#define PK_CLI_OVERLAP_EXACT_H

/* `pgokit overlap --exact ...` (argv as given to the overlap command). */
int pk_cli_overlap_exact(int argc, char **argv);

#endif
