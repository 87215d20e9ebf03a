# Script mode: install the build into a scratch prefix, then import nnplug from there with
# only PYTHONPATH pointing at the prefix's dist-packages (no LD_LIBRARY_PATH): the
# extension must find the installed libnnplug by its RPATH, libnnplug its plugins.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} COMMAND_ERROR_IS_FATAL ANY
                OUTPUT_QUIET)
set(code "import nnplug, nnplug.torch as nt, torch
assert nnplug.__file__.startswith('${PREFIX}/'), nnplug.__file__
for backend in ('cpu_tbb', 'atlas_emu'):
    nnplug.init(backend=backend)
    loss = nt.binary_cross_entropy(torch.tensor([0.5, 0.25]), torch.tensor([1.0, 0.0]), reduction='sum')
    print('installed nnplug:', nnplug.backend(), round(float(loss), 6))
    nnplug.finalize()")
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH --unset=NNPLUG_PLUGIN_PATH
                        NNPLUG_BACKEND= NNPLUG_CONFIG= PYTHONPATH=${PREFIX}/${PYTHON_DIR}
                        ${PYTHON} -c "${code}"
                WORKING_DIRECTORY ${PREFIX} COMMAND_ERROR_IS_FATAL ANY)
