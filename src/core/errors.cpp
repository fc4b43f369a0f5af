#include "core/errors.hpp"

#include <exception>
#include <new>

#include "core/terminal_text.hpp"

namespace attn {

int report_failure(std::ostream& err, const std::string& command) {
  try {
    throw;
  } catch (const UsageError& e) {
    err << "attn: " << visible(e.what()) << " (see 'attn " << (command.empty() ? "" : command + " ") << "--help')\n";
    return kExitUsage;
  } catch (const InputError& e) {
    err << "attn: " << visible(e.what()) << "\n";
  } catch (const SystemError& e) {
    err << "attn: " << visible(e.what()) << "\n";
  } catch (const std::bad_alloc&) {
    err << "attn: out of memory\n";
  } catch (const std::exception& e) {
    err << "attn: internal error: " << visible(e.what()) << "\n";
  } catch (...) {
    err << "attn: internal error\n";
  }
  return kExitRuntime;
}

}  // namespace attn
