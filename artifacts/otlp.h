/* otlp: a run as OpenTelemetry traces (OTLP/HTTP JSON), after the GenAI semantic conventions. */
#ifndef NS_OTLP_H
#define NS_OTLP_H

#include <cjson/cJSON.h>
#include "../util/util.h"

/* An ExportTraceServiceRequest for the run directory rundir: one trace; a span for the run, one
 * per job (invoke_agent), per model request (chat) and per tool call (execute_tool, with the
 * approval decision). Ids are derived from the run id, so exporting twice gives the same trace.
 * The spans hold at most 96 MiB (cJSON nodes and strings, about 30 000 spans): past it the logs
 * are read no further, *cut is set and the run's span says so (nightshift.export.truncated). */
cJSON *otlptraces(const char *rundir, int *cut, struct err *e);

#endif
