# Build-time half of pipelens_embed_text: writes OUTPUT, a .cpp defining FUNCTION() that returns
# the bytes of INPUT. The raw-string delimiter is one no pipelens asset contains.
file(READ ${INPUT} content)
string(FIND "${content}" ")pipelens_text\"" clash)
if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${INPUT} contains the embedding delimiter")
endif()
string(REGEX MATCH "^(.*)::([^:]+)$" qualified "${FUNCTION}")
if(qualified)
    set(namespace_open "namespace ${CMAKE_MATCH_1} {")
    set(namespace_close "}")
    set(name ${CMAKE_MATCH_2})
else()
    set(namespace_open "")
    set(namespace_close "")
    set(name ${FUNCTION})
endif()
file(WRITE ${OUTPUT}.tmp "// Generated from ${INPUT} by cmake/EmbedText.cmake; do not edit.
#include <string_view>
${namespace_open}
std::string_view ${name}() {
    static constexpr std::string_view text = R\"pipelens_text(${content})pipelens_text\";
    return text;
}
${namespace_close}
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
