/* cmd_create_gcov.c — `pgokit create_gcov ARGS...` (also pgokit run through a
 * link named create_gcov): AutoFDO's create_gcov command line, verbatim; the
 * profile for GCC's -fauto-profile. The flags are parsed with
 * create_llvm_prof's (cmd_create_llvm_prof.c). */
#include "cli/cli.h"

const char pk_cmd_create_gcov_summary[] = "AutoFDO's create_gcov command line (a drop-in, for gcc -fauto-profile)";

int pk_cmd_create_gcov(int argc, char **argv)
{
    return pk_cli_autofdo("create_gcov", true, argc, argv);
}
