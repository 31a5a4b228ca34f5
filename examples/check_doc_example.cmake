# SPDX-License-Identifier: Apache-2.0
# Fails unless DOC (e.g. docs/embedding.md) shows EXAMPLE (e.g. examples/embed.cpp) verbatim, in
# the ```cpp block after the line "<!-- example: NAME -->" (NAME: the example's path in the
# repository, e.g. examples/embed.cpp).
#   cmake -DDOC=... -DEXAMPLE=... -DNAME=... -P check_doc_example.cmake
file(READ ${DOC} doc)
file(READ ${EXAMPLE} example)
set(marker "<!-- example: ${NAME} -->\n```cpp\n")
string(FIND "${doc}" "${marker}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${DOC} has no '<!-- example: ${NAME} -->' followed by ```cpp")
endif()
string(LENGTH "${marker}" marker_length)
math(EXPR start "${start} + ${marker_length}")
string(SUBSTRING "${doc}" ${start} -1 rest)
string(FIND "${rest}" "```\n<!-- end example -->" end)
if(end EQUAL -1)
  message(FATAL_ERROR "${DOC}: the example block has no closing ``` and <!-- end example -->")
endif()
string(SUBSTRING "${rest}" 0 ${end} shown)
if(NOT shown STREQUAL example)
  message(FATAL_ERROR "${DOC} does not show ${EXAMPLE} as it is: copy the file into the block")
endif()
message(STATUS "${DOC} shows ${EXAMPLE} verbatim")
