// The shared objects the program has loaded, found without calling the loader from inside
// dl_iterate_phdr. glibc walks its object list holding the list lock; dlopen and dlclose take the
// load lock first and the list lock inside it, so a dlopen inside the walk takes the two in the
// opposite order and deadlocks against any thread that is loading or unloading a library.
#pragma once

#include <string>
#include <vector>

namespace deepum::core {

using DlsymFn = void* (*)(void*, const char*);

// Full paths of the loaded objects whose path contains `fragment`, in load order. The paths are
// copied during the walk and the walk takes nothing else (no allocation, no lock): a library may
// be unloaded as soon as it ends, so open what it names with RTLD_NOLOAD.
std::vector<std::string> loaded_objects_matching(const char* fragment);

// A symbol exported by a loaded object whose path contains `fragment`, also when the object was
// loaded RTLD_LOCAL (Python extensions load theirs so); nullptr if none has it. `dlsym_fn` does the
// lookup (glibc's own, so that an interposed dlsym is never in the way).
void* find_loaded_symbol(const char* fragment, const char* name, DlsymFn dlsym_fn);

}  // namespace deepum::core
