/* temporal_cli.h — `pgokit show` and `pgokit merge` for temporal profiles
 * (raw profiles of libpgokit_rt and indexed temporal profiles). cmd_show.c and
 * cmd_merge.c dispatch here when their first input is a temporal profile
 * (pk_temporal_is_profile) or `--temporal` is given. argv[0] is the command. */
#ifndef PK_TEMPORAL_CLI_H
#define PK_TEMPORAL_CLI_H

#include <stdio.h>

int pk_cli_show_temporal(int argc, char **argv);
/* The temporal parts of `show --help` and `merge --help`. */
void pk_cli_show_temporal_usage(FILE *to);
void pk_cli_merge_temporal_usage(FILE *to);
int pk_cli_merge_temporal(int argc, char **argv);
/* True when argv (after argv[0]) holds --temporal, an input file that is a
 * temporal profile, or a directory of *.pgoraw / *.pgotemporal files: the test
 * cmd_show/cmd_merge use to dispatch. */
int pk_cli_wants_temporal(int argc, char **argv);

#endif
