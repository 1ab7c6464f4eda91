#include "log.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void hlb_log(const char *level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_t *j = json_pack("{s:f,s:s,s:s}", "ts", (double)ts.tv_sec + ts.tv_nsec * 1e-9, "level",
                          level, "msg", msg);
    char *line = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(13)) : NULL;
    fprintf(stderr, "%s\n", line ? line : msg);
    free(line);
    json_decref(j);
}
