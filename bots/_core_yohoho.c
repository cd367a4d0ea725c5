#define CORE_MODULE_NAME "_core_yohoho"
#define CORE_INIT_FUNC PyInit__core_yohoho
#include "core/yohoho.h"
#include "core/search.h"
