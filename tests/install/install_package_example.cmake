# cmake -P script behind CTest's install_package_example (CMakeLists.txt
# beside it). Every step must succeed; a failure names the step and prints
# its output.
foreach(var BUILD_DIR EXAMPLE_DIR WORK_DIR LIBDIR C_COMPILER CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_package_example.cmake: -D${var}=... is required")
  endif()
endforeach()

function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${name} failed (${status}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${name}: ok ${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/installed)
file(RENAME ${WORK_DIR}/installed ${WORK_DIR}/moved)
set(prefix ${WORK_DIR}/moved)
foreach(file include/npu_runtime.h include/npu/rt/runtime.h include/npu/isa/npu_isa_gen.h
             ${LIBDIR}/libnpu_rt.so ${LIBDIR}/cmake/npu/npuConfig.cmake
             ${LIBDIR}/pkgconfig/npu.pc bin/npu-as bin/npu-sim
             share/npu/editors/vim/syntax/npuasm.vim share/npu/editors/vscode/package.json
             share/npu/editors/vscode/syntaxes/npuasm.tmLanguage.json
             share/npu/editors/pygments/npuasm_lexer.py)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the installed tree has no ${file}")
  endif()
endforeach()

# The installed npu-as runs from the moved tree (its rpath is relative).
step("installed npu-as --version" ${prefix}/bin/npu-as --version)

step("configure examples/embedding with find_package(npu)"
     ${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -G Ninja
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER}
     -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
step("build examples/embedding" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
set(ENV{NPU_BACKEND} iss)
step("embed_add" ${WORK_DIR}/build/embed_add)
step("embed_copy" ${WORK_DIR}/build/embed_copy)

set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs npu RESULT_VARIABLE status
                OUTPUT_VARIABLE flags ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs npu failed (${status}): ${err}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
step("cc embed_copy.c with pkg-config's flags"
     ${C_COMPILER} ${EXAMPLE_DIR}/embed_copy.c ${flags} -o ${WORK_DIR}/embed_copy_pkg_config)
set(ENV{LD_LIBRARY_PATH} ${prefix}/${LIBDIR})
step("embed_copy built with pkg-config" ${WORK_DIR}/embed_copy_pkg_config)
