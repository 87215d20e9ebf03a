// A shared object that is not an nnplug plugin: it exports no entry symbol.
extern "C" __attribute__((visibility("default"))) int nnplug_not_a_plugin(void) {
    return 0;
}
