#include <stdlib.h>
#include "util.h"

int parse_int(const char *s) {
    return (int)strtol(s, NULL, 10);
}
