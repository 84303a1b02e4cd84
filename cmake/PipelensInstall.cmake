# Installing pipelens and packaging it for Debian (docs/install.md).
#
# Layout (GNUInstallDirs, relative to the prefix; the set is relocatable, nothing names the
# prefix itself):
#   bin/pipelens, bin/pipelens-view         the command line and the viewer (component cli)
#   libexec/pipelens/pipelens-runtime       the LibTorch runtime `run`/`explain` exec (runtime)
#   share/pipelens/examples/                assets/examples, for users to copy
#   share/man/man1/*.1.gz                   generated from the built programs' --help
#   share/bash-completion/completions/pipelens{,-view}, share/zsh/vendor-completions/_pipelens
#   share/applications, share/icons/hicolor, share/mime/packages   the desktop entry
#   share/doc/pipelens{,-runtime}/          copyright and changelog, as Debian wants them
# Invariants: only the runtime component holds anything that links LibTorch, so the `pipelens`
# package never depends on it; `pipelens` finds the runtime at the path compiled into it from
# the same two directory variables used to install it.
include(GNUInstallDirs)

set(PIPELENS_RUNTIME_INSTALL_DIR "${CMAKE_INSTALL_LIBEXECDIR}/pipelens")
file(RELATIVE_PATH PIPELENS_RUNTIME_FROM_BIN "/${CMAKE_INSTALL_BINDIR}"
    "/${PIPELENS_RUNTIME_INSTALL_DIR}")
# Only the hand-off's file is compiled with it, so no other object changes with the layout.
set_source_files_properties(app/cli/runtime_handoff.cpp TARGET_DIRECTORY pipelens PROPERTIES
    COMPILE_DEFINITIONS "PIPELENS_INSTALLED_RUNTIME_DIRECTORY=\"${PIPELENS_RUNTIME_FROM_BIN}\"")

# The viewer's start screen lists the installed examples the same way, relative to bin/.
if(TARGET pipelens_viewer_model)
    file(RELATIVE_PATH PIPELENS_EXAMPLES_FROM_BIN "/${CMAKE_INSTALL_BINDIR}"
        "/${CMAKE_INSTALL_DATADIR}/pipelens/examples")
    set_source_files_properties(app/viewer/workbench.cpp TARGET_DIRECTORY pipelens_viewer_model
        PROPERTIES COMPILE_DEFINITIONS
        "PIPELENS_INSTALLED_EXAMPLES_DIRECTORY=\"${PIPELENS_EXAMPLES_FROM_BIN}\"")
endif()

install(TARGETS pipelens RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
if(TARGET pipelens-view)
    install(TARGETS pipelens-view RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
endif()
if(TARGET pipelens-runtime)
    install(TARGETS pipelens-runtime RUNTIME DESTINATION ${PIPELENS_RUNTIME_INSTALL_DIR}
        COMPONENT runtime)
endif()
install(DIRECTORY assets/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/pipelens/examples
    COMPONENT cli)

# The desktop entry, its icon in every hicolor size and the trace's MIME type: with the viewer
# they launch, not without it.
if(TARGET pipelens-view)
    install(FILES assets/desktop/pipelens-view.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT cli)
    install(FILES assets/desktop/pipelens-trace.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages RENAME pipelens.xml COMPONENT cli)
    install(DIRECTORY assets/desktop/icons/ DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor
        COMPONENT cli)
endif()

# Man pages and completions, written from the built programs' --help (scripts/packaging/cli_help.py),
# and the Debian changelog, compressed reproducibly (gzip -9, no timestamp).
find_package(Python3 COMPONENTS Interpreter)
set(PIPELENS_GENERATED "${CMAKE_BINARY_DIR}/packaging")
set(PIPELENS_GZIP "import gzip, sys; open(sys.argv[2], 'wb').write(gzip.compress(open(sys.argv[1], 'rb').read(), 9, mtime=0))")
if(Python3_Interpreter_FOUND)
    set(help_programs pipelens)
    set(viewer_program "-")
    if(TARGET pipelens-view)
        list(APPEND help_programs pipelens-view)
        set(viewer_program "$<TARGET_FILE:pipelens-view>")
    endif()
    if(TARGET pipelens-runtime)
        list(APPEND help_programs pipelens-runtime)  # `pipelens run --help` execs it
    endif()
    add_custom_command(OUTPUT "${PIPELENS_GENERATED}/generated.stamp"
        COMMAND ${CMAKE_COMMAND} -E rm -rf "${PIPELENS_GENERATED}/man"
            "${PIPELENS_GENERATED}/completion"
        COMMAND ${Python3_EXECUTABLE} "${PROJECT_SOURCE_DIR}/scripts/packaging/cli_help.py"
            "$<TARGET_FILE:pipelens>" "${viewer_program}" "${PIPELENS_GENERATED}"
        COMMAND ${Python3_EXECUTABLE} -c "${PIPELENS_GZIP}"
            "${PROJECT_SOURCE_DIR}/assets/debian/changelog"
            "${PIPELENS_GENERATED}/changelog.gz"
        COMMAND ${CMAKE_COMMAND} -E touch "${PIPELENS_GENERATED}/generated.stamp"
        DEPENDS ${help_programs} scripts/packaging/cli_help.py scripts/packaging/man_page.py
            scripts/packaging/completion.py assets/debian/changelog
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
        COMMENT "Writing man pages and shell completions from --help"
        VERBATIM)
    add_custom_target(pipelens_man_and_completion ALL
        DEPENDS "${PIPELENS_GENERATED}/generated.stamp")

    # `run` and `explain` are the runtime's commands: their pages come with it.
    install(DIRECTORY "${PIPELENS_GENERATED}/man/" DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        COMPONENT cli PATTERN "pipelens-run.1.gz" EXCLUDE PATTERN "pipelens-explain.1.gz" EXCLUDE)
    if(TARGET pipelens-runtime)
        install(FILES "${PIPELENS_GENERATED}/man/pipelens-run.1.gz"
            "${PIPELENS_GENERATED}/man/pipelens-explain.1.gz"
            DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
    endif()
    # bash-completion loads completions/NAME when NAME is first completed: one file a program.
    install(FILES "${PIPELENS_GENERATED}/completion/pipelens"
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT cli)
    if(TARGET pipelens-view)
        install(FILES "${PIPELENS_GENERATED}/completion/pipelens"
            DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
            RENAME pipelens-view COMPONENT cli)
    endif()
    install(FILES "${PIPELENS_GENERATED}/completion/_pipelens"
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT cli)
    install(FILES assets/debian/copyright "${PIPELENS_GENERATED}/changelog.gz"
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/pipelens COMPONENT cli)
    if(TARGET pipelens-runtime)
        install(FILES assets/debian/copyright "${PIPELENS_GENERATED}/changelog.gz"
            DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/pipelens-runtime COMPONENT runtime)
    endif()
else()
    message(STATUS "pipelens: no Python 3: man pages and shell completions not built")
endif()

# Debian packages (`cpack` or the `package` target in the build folder): `pipelens` (cli) and
# `pipelens-runtime` (runtime). Their library dependencies are what dpkg-shlibdeps reads off the
# binaries, so they are the Debian packages the programs actually link; LibTorch reaches only
# pipelens-runtime because only its binary links it.
set(PIPELENS_DEB_MAINTAINER
    "Seed 1f289161 maintainers <maintainers@users.noreply.a-seed-1f289161.example>"
    CACHE STRING "Maintainer field of the Debian packages")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME pipelens)
set(CPACK_PACKAGE_VENDOR "the pipelens authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL cli)
if(TARGET pipelens-runtime)
    list(APPEND CPACK_COMPONENTS_ALL runtime)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${PIPELENS_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME pipelens)
set(CPACK_DEBIAN_CLI_PACKAGE_SUGGESTS pipelens-runtime)
set(CPACK_COMPONENT_CLI_DESCRIPTION
    "simulate, check and view pipeline-parallel training schedules
pipelens lowers a pipeline schedule (GPipe, 1F1B, interleaved, zero-bubble,
DualPipeV) to per-rank compute and send/receive actions, proves it cannot hang,
simulates it with a cost model and records it into an SQLite trace. This
package holds the pipelens command line and the pipelens-view desktop viewer.
Real runs on LibTorch (pipelens run, pipelens explain) need pipelens-runtime.")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME pipelens-runtime)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "pipelens (= ${PROJECT_VERSION})")
# LibTorch's libblas.so.3 is the reference BLAS unless an optimised one is installed; OpenBLAS's
# OpenMP build follows `run --threads` (docs/run.md, Threads).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "libopenblas0-openmp")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "LibTorch runtime for pipelens run and pipelens explain
The program pipelens starts for the commands that execute models: it runs a
lowered pipeline schedule on real LibTorch ranks, checks it against a
single-rank reference and records the run beside its simulation.")
include(CPack)

if(BUILD_TESTING AND Python3_Interpreter_FOUND)
    set(install_tests "${PROJECT_SOURCE_DIR}/tests/install")
    # The generators' own tests: help text in, exact pages and completions out.
    add_test(NAME install.generators
        COMMAND ${Python3_EXECUTABLE} "${PROJECT_SOURCE_DIR}/tests/install/test_generators.py")
    # A prefix install, moved, running the demo's steps (seconds).
    add_test(NAME install.prefix_runs_demo
        COMMAND bash "${install_tests}/install_test.sh" "${CMAKE_BINARY_DIR}")
    # The .deb files, unpacked into an empty root and run; lintian on them.
    add_test(NAME install.deb_packages COMMAND bash "${install_tests}/package_test.sh"
        "${CMAKE_BINARY_DIR}" "${CMAKE_BINARY_DIR}/packaging/debs")
    add_test(NAME install.deb_lintian
        COMMAND bash "${install_tests}/lintian_test.sh" "${CMAKE_BINARY_DIR}/packaging/debs")
    # The desktop entry and the MIME type, checked by the desktop's own tools.
    add_test(NAME install.desktop_entry COMMAND bash "${install_tests}/desktop_test.sh"
        "${PROJECT_SOURCE_DIR}" "$<TARGET_FILE:pipelens>")
    add_test(NAME install.mime_type COMMAND bash "${install_tests}/mime_test.sh"
        "${PROJECT_SOURCE_DIR}" "$<TARGET_FILE:pipelens>")
    add_test(NAME install.zsh_completion
        COMMAND bash "${install_tests}/zsh_test.sh" "${PIPELENS_GENERATED}/completion")
    # Both start an Xvfb (xvfb-run -a): two at once could pick the same display.
    set_tests_properties(install.prefix_runs_demo install.deb_packages PROPERTIES TIMEOUT 300
        RESOURCE_LOCK xvfb)
    set_tests_properties(install.deb_packages PROPERTIES FIXTURES_SETUP pipelens_debs)
    set_tests_properties(install.deb_lintian PROPERTIES FIXTURES_REQUIRED pipelens_debs)
    set_tests_properties(install.deb_packages install.deb_lintian install.desktop_entry
        install.mime_type install.zsh_completion PROPERTIES SKIP_RETURN_CODE 77)
endif()
