#ifndef LIST_H
#define LIST_H

struct node {
    int value;
    struct node *next;
};

typedef struct {
    struct node *head;
    int len;
} list;

#define LIST_EMPTY(l) ((l)->len == 0)

list *list_new(void);
void list_push(list *l, int v);
int list_sum(const list *l);

static inline int list_len(const list *l) { return l->len; }

#endif
