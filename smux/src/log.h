/* Structured logs: one JSON object per line on stderr (ts, level, msg), properly
 * escaped whatever the message holds (file names, client-supplied field names). */
#ifndef HLB_LOG_H
#define HLB_LOG_H

void hlb_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define HLB_LOG_ERR(...) hlb_log("error", __VA_ARGS__)
#define HLB_LOG_WARN(...) hlb_log("warning", __VA_ARGS__)
#define HLB_LOG_INFO(...) hlb_log("info", __VA_ARGS__)

#endif
