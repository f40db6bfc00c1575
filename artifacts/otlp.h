/* otlp: a run as OpenTelemetry traces (OTLP/HTTP JSON), after the GenAI semantic conventions. */
#ifndef NS_OTLP_H
#define NS_OTLP_H

#include <cjson/cJSON.h>
#include "../util/util.h"

/* An ExportTraceServiceRequest for the run directory rundir: one trace; a span for the run, one
 * per job (invoke_agent), per model request (chat) and per tool call (execute_tool, with the
 * approval decision). Ids are derived from the run id, so exporting twice gives the same trace. */
cJSON *otlptraces(const char *rundir, struct err *e);

#endif
