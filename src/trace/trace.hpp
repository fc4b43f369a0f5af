#pragma once
// How a lesson computes its Section (document/document.hpp): a Trace is the section being filled, with the
// nodes (Node, State: the lazy graph) that compute its steps on demand and the Selection that says which are
// shown. Lessons and the application (src/run) use it; a renderer never sees it, only the Section it becomes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cancel.hpp"
#include "core/limits.hpp"
#include "core/tensor.hpp"
#include "document/document.hpp"
#include "text/words.hpp"

namespace attn {

struct Trace;

// What a step's computation returns when the book's value is a Python number, not a tensor.
struct PyFloat {
  double value;
};
struct PyInt {
  std::int64_t value;
};

// A step's value whose code is known only once it is computed: all-tokens' row_2_sum, whose code types in
// the row's printed weights.
template <class V>
struct WithCode {
  V value;
  std::string code;
  std::optional<std::string> run;  // the notebook's form of that code (Step::run), when it has its own
};

// A step's value whose head notes (Step::head_notes) are known only once it is computed: attn heads reads
// what each head does from the weights it has just computed, so the words are filled in with the tensor,
// by resolve(), and only for a step that is shown.
template <class V>
struct WithHeadNotes {
  V value;
  std::vector<std::string> head_notes;  // one per head
};

// Which steps of a run are shown (--step), and what must hold once every step is planned but before any
// is computed (a renderer's limits): a lesson computes only what the shown steps need.
struct Selection {
  std::vector<std::string> only;                  // step ids; empty: every step
  std::function<void(const Trace&)> before_work;  // may throw; called with the planned trace
  bool plan_only = false;                         // compute no step: only the plan (ids, shapes)
  Words words;  // the steps' words: English, or a translation's (data/lessons/<language>/)

  bool shows(const std::string& id) const;
};

// The values a lesson computes at most once, and only when a step that is shown asks for them, are
// nodes the Trace owns (docs/architecture.md, "Steps computed on demand"). A lesson holds them through
// handles: Node<T>, a small copyable reference into its trace's storage. A node is made by
// `t.lazy<T>(f, inputs...)`: `f` captures nothing (a compile error otherwise) and takes its inputs as its
// arguments, in order: a Node<T> input arrives as the `const T&` it computes (read, and so computed, before
// f runs, left to right), a State<T> as a `T&` (the generator a dropout mask draws from), anything else as
// a `const&` to the copy the node keeps. So asking for one step computes exactly its dependencies, in the
// order the book computes them (a dropout mask's draw is one node, read after everything it follows), and
// no computation can refer to a local of the lesson that dies before the trace computes it.
// Trace::resolve() computes the shown steps, then frees every node's value; it is what makes the
// ResolvedTrace a lesson returns, so a lesson that forgets it does not compile. A handle read after that
// is a std::logic_error.
namespace detail {
struct CellBase {
  virtual ~CellBase() = default;
};
template <class T>
struct Cell : CellBase {
  std::function<T()> compute;  // empty for a kept value
  std::optional<T> value;
  const T* part = nullptr;  // a part of a kept value (a module's layer): no value of its own
};
// The nodes of one trace. It lives on the heap, shared by the trace's copies, so handles stay valid when
// the trace moves.
struct Graph {
  std::string lesson;
  std::vector<std::unique_ptr<CellBase>> cells;
  std::size_t computed = 0;  // lazy values computed so far (Trace::values_computed adds them)
  const void* owner = nullptr;  // the trace whose inputs the nodes read (Trace::input), which must not move
  bool closed = false;       // resolve() has freed the values

  void check_open() const {
    if (closed) throw std::logic_error("lesson " + lesson + " reads a lazy value after Trace::resolve()");
  }
};
}  // namespace detail

// A handle to a value of a trace: computed the first time it is read, then kept until resolve() ends.
template <class T>
class Node {
 public:
  Node() = default;
  const T& operator()() const {
    graph_->check_open();
    auto& cell = static_cast<detail::Cell<T>&>(*graph_->cells[index_]);
    if (cell.part) return *cell.part;
    if (!cell.value) {
      check_cancelled();  // attn serve's time limit and stop, between a lesson's values (core/cancel.hpp)
      cell.value.emplace(cell.compute());
      ++graph_->computed;
    }
    return *cell.value;
  }
  const T& operator*() const { return (*this)(); }
  const T* operator->() const { return &(*this)(); }
  // A member of a kept value, as a node of its own (a module's W_query, passed to a computation alone).
  template <class M>
  Node<M> part(M T::*member) const {
    auto cell = std::make_unique<detail::Cell<M>>();
    cell->part = &((*this)().*member);
    return Node<M>::adopt(graph_, std::move(cell));
  }

 private:
  template <class U>
  friend class Node;
  friend struct Trace;
  static Node adopt(detail::Graph* g, std::unique_ptr<detail::Cell<T>> cell) {
    g->check_open();
    g->cells.push_back(std::move(cell));
    Node n;
    n.graph_ = g;
    n.index_ = g->cells.size() - 1;
    return n;
  }
  detail::Graph* graph_ = nullptr;
  std::size_t index_ = 0;
};

// A handle to something the trace owns that computations change (the generator dropout draws from),
// passed to a computation as `T&`. `*gen` reaches it now, to build a module that draws from it.
template <class T>
class State {
 public:
  T& operator*() const { return *value_; }
  T* operator->() const { return value_.get(); }

 private:
  friend struct Trace;
  std::shared_ptr<T> value_;
};

namespace detail {
template <class A>
struct IsHandle : std::false_type {};
template <class T>
struct IsHandle<Node<T>> : std::true_type {};
template <class T>
struct IsHandle<State<T>> : std::true_type {};
// What a computation's argument is given for an input: a node's value, a state, or the kept copy.
template <class A>
const A& input(const A& a) { return a; }
template <class T>
const T& input(const Node<T>& n) { return n(); }
template <class T>
T& input(const State<T>& s) { return *s; }
template <class A>
void read(const A&) {}
template <class T>
void read(const Node<T>& n) { (void)n(); }
// Calls f with its inputs, every node among them read first, left to right.
template <class F, class... A>
decltype(auto) call(const F& f, const std::tuple<A...>& inputs) {
  return std::apply([&f](const A&... a) -> decltype(auto) {
    (void)std::initializer_list<int>{(read(a), 0)...};
    return f(input(a)...);
  }, inputs);
}
}  // namespace detail

// A computation a node or a step may hold: a function that captures nothing (a captureless lambda or a
// function), so that everything it reads is an argument, and no input a raw pointer (which could point
// at a local of the lesson). A lambda capturing by reference or by value is refused at compile time.
template <class F, class... A>
inline constexpr bool takes_inputs_as_arguments_v =
    (std::is_empty_v<F> || std::is_function_v<std::remove_pointer_t<F>>)&&(!std::is_pointer_v<A> && ...);

struct ResolvedTrace;

// A Section being computed. Its `only` and `words` are the selection's.
struct Trace : Section {
  // Starts with the steps that made the inputs (Inputs::steps), in the words their source gave them.
  Trace(LessonInfo info, const Inputs& inputs, Selection selection = {});

  // Appends a step whose tensor exists already (a module's parameter, the book's constant tensor): it is
  // copied into the step's dynamic-rank storage when the step is shown, and not at all otherwise.
  template <class E>
  Step& add(std::string id, std::string title, std::string explanation, std::string code, const E& tensor) {
    Step& s = append(std::move(id), std::move(title), std::move(explanation), std::move(code));
    const auto& sh = tensor.shape();
    s.shape.assign(sh.begin(), sh.end());
    if (selection.shows(s.id) && !selection.plan_only) {
      s.tensor = AnyTensor(tensor);
      s.computed = true;
    }
    return s;
  }
  // Appends a step computed later, by resolve(), and only if it is shown: `f(inputs...)` (as
  // Trace::lazy takes them) returns a tensor (or an xtensor expression), a PyFloat, a PyInt, or a WithCode or
  // WithHeadNotes of a tensor (its code or its head notes known only once it is computed).
  template <class F, class... A>
  Step& add(std::string id, std::string title, std::string explanation, std::string code,
            std::vector<std::size_t> shape, F f, A... inputs) {
    static_assert(takes_inputs_as_arguments_v<F, A...>,
                  "a step's computation captures nothing: pass what it reads (nodes, sizes) as its arguments");
    Step& s = append(std::move(id), std::move(title), std::move(explanation), std::move(code));
    s.shape = std::move(shape);
    pending_.push_back({steps.size() - 1, [f, in = std::make_tuple(std::move(inputs)...)](Step& step) {
                          set_value(step, detail::call(f, in));
                        }});
    return s;
  }
  // Appends a step that shows a node's value (computed by resolve(), only if the step is shown).
  template <class T>
  Step& add(std::string id, std::string title, std::string explanation, std::string code,
            std::vector<std::size_t> shape, Node<T> value) {
    return add(std::move(id), std::move(title), std::move(explanation), std::move(code), std::move(shape),
               [](const T& v) -> const T& { return v; }, value);
  }
  // A value computed at most once, the first time it is read: f(inputs...), f capturing nothing. Counted
  // in values_computed.
  template <class T, class F, class... A>
  Node<T> lazy(F f, A... inputs) {
    static_assert(takes_inputs_as_arguments_v<F, A...>,
                  "a lazy value's computation captures nothing: pass what it reads (nodes, sizes) as its arguments");
    auto cell = std::make_unique<detail::Cell<T>>();
    cell->compute = [f, in = std::make_tuple(std::move(inputs)...)]() -> T { return detail::call(f, in); };
    return Node<T>::adopt(graph_.get(), std::move(cell));
  }
  // A value that exists already (a module, a constant), moved into the trace to be read by computations;
  // `*node` reads it now. Not counted: nothing is computed.
  template <class T>
  Node<T> keep(T value) {
    auto cell = std::make_unique<detail::Cell<T>>();
    cell->value.emplace(std::move(value));
    return Node<T>::adopt(graph_.get(), std::move(cell));
  }
  // Something the trace owns that computations change: the generator a dropout mask draws from.
  template <class T>
  State<T> state(T value) {
    State<T> s;
    s.value_ = std::make_shared<T>(std::move(value));
    return s;
  }
  // The trace's copy of the inputs, and of their embeddings (num_tokens, d_in), as nodes.
  Node<Inputs> input();
  Node<Matrix> embeddings();

  // Ends the lesson: every --step id must name a step (a UsageError listing them otherwise); then the
  // selection's before_work sees the plan; then the shown steps are computed, in order, and every node's
  // value is freed. What it returns is what a lesson returns (`return t.resolve();`): this trace, moved.
  ResolvedTrace resolve();
  bool resolved() const { return resolved_; }

  // Memory, from the plan alone (shapes, nothing computed), for the budget checked before the work: an
  // upper bound on what the lesson holds at its peak: every step's value twice (the node or module output,
  // and the temporaries that make it), a third time if it is shown (the step's own copy), and the inputs and
  // the words twice (the trace's copy, a batch of them). Section::shown_bytes is what it keeps once computed.
  std::size_t planned_bytes() const;
  // What a lesson computes besides its steps, declared with the plan for planned_bytes: values it keeps
  // (a module pass's intermediates held in a node) add up; temporaries of a call that frees them
  // (a module's forward) count as the largest of them, since such calls run one at a time.
  void holds(std::size_t numbers) { held_numbers_ = saturating_sum(held_numbers_, numbers); }
  void needs_temporarily(std::size_t numbers) { temporary_numbers_ = std::max(temporary_numbers_, numbers); }

  Selection selection;
  // How many lazy nodes and steps resolve() computed: tests check that a step not asked for costs nothing.
  std::size_t values_computed = 0;

 private:
  Step& append(std::string id, std::string title, std::string explanation, std::string code);

  struct Pending {
    std::size_t index;
    std::function<void(Step&)> compute;
  };
  template <class E>
  static void set_value(Step& s, const E& tensor) {
    s.tensor = AnyTensor(tensor);
    s.computed = true;
  }
  template <class V>
  static void set_value(Step& s, const WithCode<V>& v) {
    set_value(s, v.value);
    s.code = v.code;
    if (v.run) s.run = v.run;
  }
  template <class V>
  static void set_value(Step& s, const WithHeadNotes<V>& v) {
    set_value(s, v.value);
    s.head_notes = v.head_notes;
  }
  static void set_value(Step& s, PyFloat v);
  static void set_value(Step& s, PyInt v);
  std::vector<Pending> pending_;
  std::shared_ptr<detail::Graph> graph_;
  bool resolved_ = false;
  std::size_t held_numbers_ = 0, temporary_numbers_ = 0;
};

// A trace that resolve() has computed: what every lesson function returns, so that one returning a trace
// it has not resolved does not compile (a Trace does not convert to it; only Trace::resolve makes one).
struct ResolvedTrace : Trace {
 private:
  friend struct Trace;
  explicit ResolvedTrace(Trace&& t) : Trace(std::move(t)) {}
};

}  // namespace attn
