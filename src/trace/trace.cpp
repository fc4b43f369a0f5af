#include "trace/trace.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/limits.hpp"

namespace attn {

Trace::Trace(LessonInfo lesson_info, const Inputs& in, Selection sel)
    : selection(std::move(sel)), graph_(std::make_shared<detail::Graph>()) {
  info = std::move(lesson_info);
  inputs = in;
  only = selection.only;
  words = selection.words;
  graph_->lesson = info.name;
  // How the inputs were made comes first, in every lesson (made already, with their words: copied only if
  // shown).
  for (const InputStep& is : inputs.steps) {
    Step& s = add(is.id, is.title, is.explanation, is.code, is.tensor);
    s.integer = is.integer;
    s.run = is.run;
    s.show = is.show;
  }
}

bool Selection::shows(const std::string& id) const {
  return only.empty() || std::find(only.begin(), only.end(), id) != only.end();
}

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

}  // namespace attn
