/*
 * Preloaded (LD_PRELOAD) into the sanitizer jobs' test processes: makes
 * dlclose() a no-op, so the Vulkan loader's layers and drivers stay mapped
 * until the process exits.
 *
 * Why: the loader dlopen()s the ICD (libvulkan_lvp.so) and the validation
 * layer at instance creation and dlclose()s them at vkDestroyInstance. A
 * leak or race report whose frames lie in an unloaded library cannot be
 * symbolized (the frames read "<unknown module>", or worse, the name of
 * whatever was mapped there later), so tests/lsan.supp and tests/tsan.supp
 * could not match it by library name, and memory that the library's
 * globals still point to shows up as leaked once the globals are unmapped.
 * With the libraries kept, every report names its library and the
 * suppressions stay narrow.
 *
 * Not for production use: nothing is ever unloaded.
 *
 *   cc -shared -fPIC -o keep_loaded.so tests/keep_loaded.c
 *   LD_PRELOAD=$PWD/keep_loaded.so ctest ...
 *
 * With gcc's (dynamically linked) ASan runtime, also set
 * ASAN_OPTIONS=verify_asan_link_order=0: the runtime then is not the first
 * library in the list, which is harmless here since this defines nothing
 * the runtime intercepts except dlclose, where it is meant to win.
 */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
