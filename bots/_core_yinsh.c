/* The compiled search core of Yinsh (both variants): the rules and evaluation of
 * native/core/yinsh.h under the shared search of native/core/search.h. */
#define CORE_MODULE_NAME "_core_yinsh"
#define CORE_INIT_FUNC PyInit__core_yinsh
#include "core/yinsh.h"
#include "core/search.h"
