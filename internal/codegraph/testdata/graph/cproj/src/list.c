#include <stdlib.h>
#include "list.h"

static struct node *node_new(int v) {
    struct node *n = malloc(sizeof *n);
    n->value = v;
    n->next = NULL;
    return n;
}

list *list_new(void) {
    return calloc(1, sizeof(list));
}

void list_push(list *l, int v) {
    struct node *n = node_new(v);
    n->next = l->head;
    l->head = n;
    l->len++;
}

int list_sum(const list *l) {
    int s = 0;
    for (struct node *n = l->head; n; n = n->next)
        s += n->value;
    return s;
}
