#pragma once
// The pages' own style and scripts, as the files they are: data/web/page.css and page.js (--format html's
// page: its themes, slides, print stylesheet, code colours, the figures' scale buttons, hover readouts and
// lines view), live.css and live.js (attn serve's live page: the control bar, and the script that recomputes
// as the bar changes). Bundled data, found as every bundled file is, read once per process and written
// inline into every page, which so stays self-contained (its Content-Security-Policy allows nothing else).
#include <string>

namespace attn {

// The file data/web/<name>, whole: "page.css", "page.js", "live.css", "live.js". An InputError when it is
// missing.
const std::string& web_asset(const std::string& name);

}  // namespace attn
