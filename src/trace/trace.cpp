#include "trace/trace.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/limits.hpp"

namespace attn {

Trace::Trace(LessonInfo lesson_info, const Inputs& in, Selection sel)
    : info(std::move(lesson_info)), inputs(in), selection(std::move(sel)), graph_(std::make_shared<detail::Graph>()) {
  graph_->lesson = info.name;
  // How the inputs were made comes first, in every lesson (made already: copied only if shown). Their
  // title and explanation are the lesson's text to fill in (InputStep).
  for (const InputStep& is : inputs.steps) {
    Step& s = add(is.id, "", "", is.code, is.tensor);
    s.integer = is.integer;
    s.run = is.run;
    s.show = is.show;
  }
}

std::size_t Step::numel() const {
  std::size_t n = 1;
  for (std::size_t d : shape) n = saturating_product({n, d});
  return n;
}

namespace {
// `id` is among the --step ids, or there are none.
bool listed(const std::vector<std::string>& only, const std::string& id) {
  return only.empty() || std::find(only.begin(), only.end(), id) != only.end();
}
}  // namespace

bool Selection::shows(const std::string& id) const { return listed(only, id); }

Step& Trace::append(std::string id, std::string title, std::string explanation, std::string code) {
  if (resolved_) throw std::logic_error("lesson " + info.name + " adds step " + id + " after resolve()");
  Step s;
  s.id = std::move(id);
  s.title = std::move(title);
  s.explanation = std::move(explanation);
  s.code = std::move(code);
  steps.push_back(std::move(s));
  return steps.back();
}

void Trace::set_value(Step& s, PyFloat v) {
  s.python_float = v.value;
  s.tensor = AnyTensor(Scalar(static_cast<float>(v.value)));
  s.computed = true;
}

void Trace::set_value(Step& s, PyInt v) {
  s.python_int = v.value;
  s.tensor = AnyTensor(Scalar(static_cast<float>(v.value)));
  s.computed = true;
}

// Parts of this trace, not of its graph: read only while the lesson runs and resolves, before the trace
// moves into the ResolvedTrace it returns.
Node<Inputs> Trace::input() {
  graph_->owner = this;
  auto cell = std::make_unique<detail::Cell<Inputs>>();
  cell->part = &inputs;
  return Node<Inputs>::adopt(graph_.get(), std::move(cell));
}

Node<Matrix> Trace::embeddings() { return input().part(&Inputs::embeddings); }

ResolvedTrace Trace::resolve() {
  if (resolved_) throw std::logic_error("lesson " + info.name + ": Trace::resolve() called twice");
  if (graph_->owner && graph_->owner != this)
    throw std::logic_error("lesson " + info.name + " moved its trace before Trace::resolve(): its nodes read the inputs it held");
  for (const auto& id : selection.only) {
    if (has_step(id)) continue;
    std::string known;
    for (const auto& s : steps) known += (known.empty() ? "" : ", ") + s.id;
    if (known.empty()) throw UsageError("--step " + id + ": this report of attn " + info.name + " has no steps");
    throw UsageError("--step " + id + ": attn " + info.name + " has no such step; its steps are " + known);
  }
  if (selection.before_work) selection.before_work(*this);
  selection.before_work = nullptr;  // it refers to its caller's locals (the run's plan): never kept
  std::vector<Pending> pending = std::move(pending_);
  pending_.clear();
  for (auto& p : pending) {
    Step& s = steps[p.index];
    if (selection.plan_only || !selection.shows(s.id)) continue;
    p.compute(s);
    ++values_computed;
    const auto& sh = s.tensor.shape();
    if (!std::equal(sh.begin(), sh.end(), s.shape.begin(), s.shape.end()))
      throw std::logic_error("lesson " + info.name + ": step " + s.id + " planned and computed shapes differ");
  }
  // Every lazy value is freed now, as the lesson's locals once were when it returned; a handle read
  // after this is a logic_error.
  values_computed += graph_->computed;
  graph_->cells.clear();
  graph_->closed = true;
  resolved_ = true;
  return ResolvedTrace(std::move(*this));
}

namespace {

std::size_t string_bytes(const std::string& s) { return sizeof(std::string) + s.capacity(); }

}  // namespace

std::size_t Trace::text_bytes() const {
  std::size_t bytes = 0;
  for (const std::string& token : inputs.tokens) bytes = saturating_sum(bytes, string_bytes(token));
  for (const Step& s : steps) {
    std::size_t words = sizeof(Step);
    for (const std::string* w : {&s.id, &s.title, &s.explanation, &s.code, &s.show}) words += w->capacity();
    if (s.run) words += s.run->capacity();
    for (const std::string& note : s.head_notes) words += string_bytes(note);
    bytes = saturating_sum(bytes, words);
  }
  return bytes;
}

std::size_t Trace::planned_bytes() const {
  // The words twice, as the inputs: the trace's, and the plan's copy while it is checked.
  const std::size_t embeddings = saturating_product({inputs.embeddings.size(), sizeof(float)});
  std::size_t bytes = saturating_product({2, saturating_sum(embeddings, text_bytes())});
  bytes = saturating_sum(bytes, saturating_product({saturating_sum(held_numbers_, temporary_numbers_), sizeof(float)}));
  for (const auto& s : steps) {
    const std::size_t copies = selection.shows(s.id) ? 3 : 2;
    bytes = saturating_sum(bytes, saturating_product({copies, s.numel(), sizeof(float)}));
  }
  return bytes;
}

std::size_t Trace::shown_bytes() const {
  std::size_t bytes = saturating_sum(saturating_product({inputs.embeddings.size(), sizeof(float)}), text_bytes());
  for (const auto& s : steps)
    if (selection.shows(s.id)) bytes = saturating_sum(bytes, saturating_product({s.numel(), sizeof(float)}));
  return bytes;
}

std::string where_in_book(const LessonInfo& info) { return book_place(info, Words()); }

std::string book_place(const LessonInfo& info, const Words& words) {
  return words.page(info.section.rfind("ch", 0) == 0 ? "where_bonus" : "where_section", {{"section", info.section}});
}

const Step& Trace::step(const std::string& id) const {
  for (const auto& s : steps)
    if (s.id == id) return s;
  throw std::out_of_range("no step '" + id + "' in lesson " + info.name);
}

bool Trace::has_step(const std::string& id) const {
  return std::any_of(steps.begin(), steps.end(), [&](const Step& s) { return s.id == id; });
}

bool Document::shows(const Step& step) const { return listed(only, step.id); }

}  // namespace attn
