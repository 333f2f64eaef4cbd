#include <stdio.h>
#include "../include/list.h"
#include "util.h"

int main(int argc, char **argv) {
    list *l = list_new();
    for (int i = 1; i < argc; i++)
        list_push(l, parse_int(argv[i]));
    if (LIST_EMPTY(l))
        return 1;
    printf("%d %d\n", list_sum(l), list_len(l));
    return 0;
}
