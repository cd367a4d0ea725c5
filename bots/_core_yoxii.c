#define CORE_MODULE_NAME "_core_yoxii"
#define CORE_INIT_FUNC PyInit__core_yoxii
#include "core/yoxii.h"
#include "core/search.h"
