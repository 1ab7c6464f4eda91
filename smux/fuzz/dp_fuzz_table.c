/* libFuzzer harness for the control API's table parser: any byte string as a PUT
 * /table body.  Accepted documents must serialise and parse again to the same
 * lookup structure; rejected ones must name a field. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vip_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hlb_table_error err = {{0}, {0}};
    struct hlb_table_options opt = {.default_pin = 1};
    struct hlb_vip_table *t = hlb_table_from_json((const char *)data, size, &opt, &err);
    if (!t) {
        if (!err.field[0] || !err.reason[0])
            abort();
        return 0;
    }
    char *text = hlb_table_to_json(t);
    struct hlb_vip_table *u = hlb_table_from_json(text, strlen(text), &opt, &err);
    if (!u || u->n_services != t->n_services || u->n_dips != t->n_dips ||
        u->version != t->version)
        abort();
    for (uint32_t s = 0; s < t->n_services; s++) {
        const struct hlb_service *a = &t->services[s];
        if (hlb_table_lookup(u, a->vip, a->proto, a->port) == NULL)
            abort();
    }
    free(text);
    hlb_table_free(u);
    hlb_table_free(t);
    return 0;
}
