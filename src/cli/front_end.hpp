#pragma once
// attn serve's front end: what the server (src/serve, which knows no CLI11) needs of the command line. Its
// parser, which reads a request's arguments into the Request `attn ARGS...` makes; the options a request may
// name, with the option table's word on which it may not (a file, or what the server decides); and the live
// page's bar, the lessons and the option table's entries marked in_live_bar, each with the lessons that take
// it and their defaults.
#include "serve/web.hpp"

namespace attn {

FrontEnd command_line_front_end();

}  // namespace attn
