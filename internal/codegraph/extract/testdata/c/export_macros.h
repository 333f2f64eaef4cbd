/* Export and attribute macros around declarations, as redismodule.h writes
 * them: REDISMODULE_API before the type, REDISMODULE_ATTR and a printf
 * attribute after the declarator. Each is blanked before parsing. */
#ifndef EXPORT_MACROS_H
#define EXPORT_MACROS_H

#define REDISMODULE_API
#define REDISMODULE_ATTR __attribute__((__common__))
#define REDISMODULE_ATTR_PRINTF(idx, cnt) __attribute__((format(printf, idx, cnt)))

REDISMODULE_API void * (*RedisModule_Alloc)(size_t bytes) REDISMODULE_ATTR;
REDISMODULE_API RedisModuleCommand *(*RedisModule_GetCommand)(RedisModuleCtx *ctx, const char *name) REDISMODULE_ATTR;
REDISMODULE_API void (*RedisModule_Log)(RedisModuleCtx *ctx, const char *fmt, ...) REDISMODULE_ATTR REDISMODULE_ATTR_PRINTF(2,3);
static int RedisModule_Init(RedisModuleCtx *ctx, const char *name) REDISMODULE_ATTR_UNUSED;

static int RedisModule_Init(RedisModuleCtx *ctx, const char *name) {
    void *getapifuncptr = ((void**)ctx)[0];
    RedisModule_GetApi = (int (*)(const char *, void *)) (unsigned long)getapifuncptr;
    return setup(ctx, name);
}

static MODULE_INLINE int module_version(void) { return current_version(); }

#endif
