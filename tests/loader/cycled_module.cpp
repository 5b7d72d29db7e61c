// A library the loader stress test loads and unloads in a loop: each cycle adds it to glibc's
// object list and takes it out again, so the loader takes both of its locks every time.
extern "C" __attribute__((visibility("default"))) int deepum_cycled_module_marker() { return 42; }
