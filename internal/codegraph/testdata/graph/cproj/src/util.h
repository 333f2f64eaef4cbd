int parse_int(const char *s);
