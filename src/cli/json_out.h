/* json_out.h — the JSON writer moved to the library (common/json_out.h) so
 * that the report page and the --json outputs share one producer; this
 * header stays so that subcommands including the old path still build. */
#include "common/json_out.h"
