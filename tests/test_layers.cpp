// The layers: docs/architecture.md's table ranks every folder of src/, and every #include of every source
// must go to its own folder or to a lower rank. Read from the sources themselves, so a new include that runs
// up a layer fails here, beside the ldd and nm checks of test_architecture.cpp.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource = ATTN_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The "## Layers" table of docs/architecture.md: folder ("core") -> rank.
std::map<std::string, int> layer_table(const std::string& doc) {
  std::map<std::string, int> ranks;
  const auto start = doc.find("\n## Layers\n");
  const auto end = doc.find("\n## ", start + 1);
  REQUIRE(start != std::string::npos);
  std::istringstream lines(doc.substr(start, end - start));
  const std::regex row(R"(^\| (\d+) \| `src/([a-z_]+)` \|)");
  std::string line;
  std::smatch m;
  while (std::getline(lines, line))
    if (std::regex_search(line, m, row)) ranks[m[2]] = std::stoi(m[1]);
  return ranks;
}

// The table of what a folder never includes, in the same section: folder ("serve") -> folders.
std::map<std::string, std::set<std::string>> never_table(const std::string& doc) {
  std::map<std::string, std::set<std::string>> never;
  const auto start = doc.find("\n## Layers\n");
  const auto end = doc.find("\n## ", start + 1);
  REQUIRE(start != std::string::npos);
  std::istringstream lines(doc.substr(start, end - start));
  const std::regex row(R"(^\| `src/([a-z_]+)` \| (.*) \|$)");
  const std::regex folder("`src/([a-z_]+)`");
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (!std::regex_search(line, m, row)) continue;
    const std::string cells = m[2];
    for (std::sregex_iterator it(cells.begin(), cells.end(), folder), last; it != last; ++it)
      never[m[1]].insert((*it)[1]);
  }
  return never;
}

struct Source {
  std::string folder;  // "render"; "" for src/main.cpp
  std::string unit;    // "render/layout": a .cpp, its .hpp and .inc are one unit
  std::vector<std::string> includes;  // "render/text.hpp", as written
};

std::vector<Source> sources() {
  std::vector<Source> out;
  const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "src")) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp" && ext != ".inc") continue;
    const fs::path rel = fs::relative(entry.path(), kSource / "src");
    Source s;
    s.folder = rel.has_parent_path() ? rel.parent_path().string() : "";
    s.unit = (rel.parent_path() / rel.stem()).string();
    std::istringstream lines(read(entry.path()));
    std::string line;
    std::smatch m;
    while (std::getline(lines, line))
      if (std::regex_search(line, m, include)) s.includes.push_back(m[1]);
    out.push_back(std::move(s));
  }
  return out;
}

std::string folder_of(const std::string& include) {
  const auto slash = include.find('/');
  return slash == std::string::npos ? "" : include.substr(0, slash);
}

std::string unit_of(const std::string& include) { return fs::path(include).replace_extension().string(); }

}  // namespace

TEST_CASE("layers: no include runs from a folder up to a higher layer, or across to a sibling", "[architecture][layers]") {
  const auto ranks = layer_table(read(kSource / "docs/architecture.md"));
  // The table itself: the folders the code has, each once (a misspelt row would leave one out).
  REQUIRE(ranks.size() >= 10);
  std::set<std::string> folders;
  for (const auto& entry : fs::directory_iterator(kSource / "src"))
    if (entry.is_directory()) folders.insert(entry.path().filename().string());
  for (const auto& f : folders) {
    INFO("src/" << f << " has no row in docs/architecture.md's layer table");
    CHECK(ranks.count(f) == 1);
  }
  for (const auto& [f, rank] : ranks) {
    INFO("docs/architecture.md ranks src/" << f << ", which does not exist");
    CHECK(folders.count(f) == 1);
  }

  const auto all = sources();
  REQUIRE(all.size() > 50);
  std::size_t edges = 0;
  for (const auto& s : all) {
    for (const auto& inc : s.includes) {
      const std::string to = folder_of(inc);
      INFO(s.unit << " includes \"" << inc << "\"");
      REQUIRE(!to.empty());  // every include of the project names its folder
      REQUIRE(ranks.count(to) == 1);
      if (s.folder.empty() || to == s.folder) continue;  // main.cpp is above all; a folder uses itself
      ++edges;
      CHECK(ranks.at(to) < ranks.at(s.folder));
    }
  }
  CHECK(edges > 100);  // the check above really saw the project's includes
}

TEST_CASE("layers: what reads a computed document includes nothing of the graph, the lessons or the input sources",
          "[architecture][layers]") {
  const auto never = never_table(read(kSource / "docs/architecture.md"));
  // The table as docs/architecture.md gives it: the renderers, the presenter and the server.
  REQUIRE(never.count("render") == 1);
  REQUIRE(never.count("present") == 1);
  REQUIRE(never.count("serve") == 1);
  CHECK(never.at("serve").count("lessons") == 1);
  std::size_t checked = 0;
  for (const auto& s : sources()) {
    const auto rule = never.find(s.folder);
    if (rule == never.end()) continue;
    for (const auto& inc : s.includes) {
      INFO(s.unit << " includes \"" << inc << "\"");
      CHECK(rule->second.count(folder_of(inc)) == 0);
      ++checked;
    }
  }
  CHECK(checked > 50);  // the check above really saw the three folders' includes
}

TEST_CASE("layers: a language is passed by hand in at most five places, and everything else asks its Words",
          "[architecture][layers]") {
  // Outside src/text, the layer that holds them: no text function is handed a language string, and a Words
  // is made from one only where a language is chosen (the options bound, a request, attn list, the live page's
  // every language, attn-docgen's pages).
  const std::regex made(R"(\bWords\s+[a-z_]+\s*\(\s*[^)\s]|\bWords\s*\(\s*[^)\s])");
  const std::regex by_hand(R"(\b(grouped_number|plural_rule|load_lesson_content)\s*\(|\blesson_content\s*\([^(),]*,)");
  std::vector<std::string> places;
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "src")) {
    const fs::path rel = fs::relative(entry.path(), kSource / "src");
    if (!entry.is_regular_file() || rel.begin()->string() == "text") continue;
    ++files;
    std::istringstream lines(read(entry.path()));
    std::string line;
    for (std::size_t n = 1; std::getline(lines, line); ++n) {
      const std::string code = line.substr(0, line.find("//"));
      if (std::regex_search(code, by_hand)) FAIL_CHECK(rel.string() << ":" << n << " hands a language to the text: " << line);
      if (std::regex_search(code, made)) places.push_back(rel.string() + ":" + std::to_string(n));
    }
  }
  CHECK(files > 100);
  INFO("a Words made from a language string at: " << [&] {
    std::string all;
    for (const auto& p : places) all += p + " ";
    return all;
  }());
  CHECK(places.size() >= 1);  // the pattern sees the one the options make
  CHECK(places.size() <= 5);
}

TEST_CASE("layers: inside a folder, no two files include each other, even through others", "[architecture][layers]") {
  // The units of each folder (a .cpp with its .hpp), and which units of the same folder each includes.
  std::map<std::string, std::set<std::string>> uses;
  for (const auto& s : sources())
    for (const auto& inc : s.includes)
      if (folder_of(inc) == s.folder && unit_of(inc) != s.unit) uses[s.unit].insert(unit_of(inc));
  REQUIRE(!uses.empty());
  // Depth-first search for a cycle; the path is the message.
  std::map<std::string, int> state;  // 1: on the path, 2: done
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& u) {
    state[u] = 1;
    path.push_back(u);
    for (const auto& v : uses[u]) {
      if (state[v] == 1) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), v); it != path.end(); ++it) cycle += *it + " -> ";
        FAIL_CHECK("an include cycle: " << cycle << v);
      } else if (state[v] == 0) {
        visit(v);
      }
    }
    path.pop_back();
    state[u] = 2;
  };
  for (const auto& [u, _] : uses)
    if (state[u] == 0) visit(u);
}
