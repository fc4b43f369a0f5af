#pragma once
// attn's help: the texts CLI11's lists of subcommands and options are framed by, and its formatter.
#include <cstddef>
#include <memory>
#include <string>

namespace CLI {
class Formatter;
}  // namespace CLI

namespace attn {

extern const char* const kDescription;     // attn --help, above the subcommands
extern const char* const kFooter;          // attn --help, below them: examples
extern const char* const kPresentFooter;   // attn present --help: the keys
extern const char* const kServeFooter;     // attn serve --help: the addresses it answers
inline constexpr std::size_t HelpWidth = 80;
// The group of the options a subcommand accepts only to refuse them clearly (attn simple --heads): the
// formatter leaves it out of --help. Not CLI11's hidden group "", whose options CLI11 names "" in every
// message (": expected a whole number ...").
inline constexpr const char* kRefusedGroup = "Refused";

// attn bench --help: its line in attn's list, and below its options the implementations and the timing.
std::string bench_description();
std::string bench_footer();

// CLI11's help, wrapped to 80 columns, without the kRefusedGroup, and a negatable flag named as
// "--explain, --no-explain" rather than CLI11's "--explain,--no-explain{false}".
std::shared_ptr<CLI::Formatter> make_help_formatter();

}  // namespace attn
