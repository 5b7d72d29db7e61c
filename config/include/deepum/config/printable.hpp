// Text from outside deepum (environment variables, configuration values, file names) made safe to
// print: it stays on one line and carries no terminal control sequence, so a value cannot forge a
// log line of its own or act on the user's terminal.
#pragma once

#include <string>
#include <string_view>

namespace deepum::config {

// `text` with its control characters escaped: newline, carriage return and tab as \n, \r and \t,
// any other C0 control and DEL as \xHH, and the C1 controls (U+0080 to U+009F in UTF-8, which
// terminals may act on) as \u0080 to \u009f. Everything else, other UTF-8 included, is kept as is.
std::string printable(std::string_view text);

// Appends printable(text) to `out`.
void append_printable(std::string_view text, std::string& out);

}  // namespace deepum::config
