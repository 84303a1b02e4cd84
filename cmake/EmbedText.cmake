# pipelens_embed_text(TARGET INPUT FUNCTION): compiles the text file INPUT into TARGET as
# `std::string_view FUNCTION()` (FUNCTION may be namespace-qualified, e.g. pipelens::foo).
# The .cpp is regenerated whenever INPUT changes, so embedded assets never go stale and
# nothing is looked up on disk at run time.
set(PIPELENS_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_text_script.cmake)

function(pipelens_embed_text target input function)
    get_filename_component(input_path ${input} ABSOLUTE)
    get_filename_component(input_name ${input} NAME)
    string(MAKE_C_IDENTIFIER ${function} identifier)
    set(output ${CMAKE_CURRENT_BINARY_DIR}/embedded/${identifier}.cpp)
    add_custom_command(
        OUTPUT ${output}
        COMMAND ${CMAKE_COMMAND} -DINPUT=${input_path} -DOUTPUT=${output}
                -DFUNCTION=${function} -P ${PIPELENS_EMBED_SCRIPT}
        DEPENDS ${input_path} ${PIPELENS_EMBED_SCRIPT}
        COMMENT "Embedding ${input_name}"
        VERBATIM)
    target_sources(${target} PRIVATE ${output})
endfunction()
