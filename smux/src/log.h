/* Structured logs: one JSON object per line on stderr (level, timestamp, message). */
#ifndef HLB_LOG_H
#define HLB_LOG_H

#include <stdio.h>
#include <time.h>

#define HLB_LOG(level, fmt, ...)                                                        \
    do {                                                                                \
        struct timespec ts_;                                                            \
        clock_gettime(CLOCK_REALTIME, &ts_);                                            \
        fprintf(stderr, "{\"ts\":%lld.%03ld,\"level\":\"%s\",\"msg\":\"" fmt "\"}\n",   \
                (long long)ts_.tv_sec, ts_.tv_nsec / 1000000, level, ##__VA_ARGS__);    \
    } while (0)

#define HLB_LOG_ERR(fmt, ...) HLB_LOG("error", fmt, ##__VA_ARGS__)
#define HLB_LOG_INFO(fmt, ...) HLB_LOG("info", fmt, ##__VA_ARGS__)

#endif
