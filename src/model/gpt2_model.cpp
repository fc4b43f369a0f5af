#include "model/gpt2_model.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <sstream>

#include <cstdint>

#include <nlohmann/json.hpp>
#include <xtensor-blas/xblas.hpp>
#include <xtensor/xview.hpp>

#include "kernels/blas.hpp"
#include "kernels/kernels.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "io/files.hpp"
#include "io/paths.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"

namespace attn {

namespace {

constexpr FileKind kConfigFile{"the model's config", std::size_t{1} << 20};  // a few hundred bytes in practice

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// config.json: GPT2Config's keys, each checked. `path` labels the messages.
Gpt2Config read_config(const std::string& path) {
  const std::string bytes = read_regular_file(path, kConfigFile);
  if (!valid_utf8(bytes)) throw InputError(path + ": not UTF-8");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(bytes);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not JSON (at byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::out_of_range&) {  // out_of_range.406: a number such as 1e999
    throw InputError(path + ": holds a number too large for any JSON reader");
  }
  if (!doc.is_object()) throw InputError(path + ": not a JSON object of settings");
  const auto whole = [&](const std::vector<const char*>& keys, std::size_t max) -> std::size_t {
    for (const char* key : keys) {
      const auto it = doc.find(key);
      if (it == doc.end()) continue;
      if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0 || it->get<std::uint64_t>() > max)
        throw InputError(path + ": \"" + key + "\" is not a whole number from 1 to " + with_commas(max));
      return it->get<std::size_t>();
    }
    throw InputError(path + ": no \"" + keys.front() + "\" (not a GPT-2 config?)");
  };
  const auto model_type = doc.find("model_type");
  if (model_type != doc.end() && *model_type != "gpt2")
    throw InputError(path + ": model_type is " + visible(model_type->dump()) + "; attn runs GPT-2 (\"gpt2\") models");
  Gpt2Config c;
  c.vocab_size = whole({"vocab_size"}, std::size_t{1} << 22);
  c.n_positions = whole({"n_positions", "n_ctx"}, std::size_t{1} << 20);
  c.n_embd = whole({"n_embd"}, 16384);
  c.n_layer = whole({"n_layer"}, 1024);
  c.n_head = whole({"n_head"}, 1024);
  if (c.n_embd % c.n_head != 0)
    throw InputError(path + ": n_embd " + std::to_string(c.n_embd) + " is not a multiple of n_head " +
                     std::to_string(c.n_head));
  const auto eps = doc.find("layer_norm_epsilon");
  if (eps != doc.end()) {
    if (!eps->is_number() || !(eps->get<double>() > 0.0) || eps->get<double>() > 1.0)
      throw InputError(path + ": layer_norm_epsilon is not a number between 0 and 1");
    c.layer_norm_epsilon = eps->get<double>();
  }
  const auto act = doc.find("activation_function");
  if (act != doc.end() && *act != "gelu_new" && *act != "gelu_pytorch_tanh")
    throw InputError(path + ": activation_function is " + visible(act->dump()) +
                     "; attn runs GPT-2's tanh GELU (\"gelu_new\")");
  const auto inner = doc.find("n_inner");
  if (inner != doc.end() && !inner->is_null() && !(inner->is_number_unsigned() && inner->get<std::uint64_t>() == 4 * c.n_embd))
    throw InputError(path + ": n_inner is not null or 4 * n_embd (" + std::to_string(4 * c.n_embd) +
                     "), GPT-2's feed-forward size");
  return c;
}

// The tensors of one block, without "h.L.", with their shapes for n_embd E.
std::vector<std::pair<std::string, std::vector<std::size_t>>> block_tensors(std::size_t E) {
  return {{"ln_1.weight", {E}},          {"ln_1.bias", {E}},
          {"attn.c_attn.weight", {E, 3 * E}}, {"attn.c_attn.bias", {3 * E}},
          {"attn.c_proj.weight", {E, E}},     {"attn.c_proj.bias", {E}},
          {"ln_2.weight", {E}},          {"ln_2.bias", {E}},
          {"mlp.c_fc.weight", {E, 4 * E}},    {"mlp.c_fc.bias", {4 * E}},
          {"mlp.c_proj.weight", {4 * E, E}},  {"mlp.c_proj.bias", {E}}};
}

std::string layer_name(std::size_t layer, const std::string& what) { return "h." + std::to_string(layer) + "." + what; }

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// What the book's gpt_download.py (chapter 5) leaves in gpt2/124M: OpenAI's TensorFlow checkpoint
// (model.ckpt.*) with hparams.json, encoder.json and vocab.bpe, and no config.json. Only names are looked
// at, so nothing is read.
bool is_tensorflow_checkpoint(const std::string& base) {
  return !exists(base + "config.json") && exists(base + "hparams.json") && exists(base + "model.ckpt.index");
}

// The one line that says how to turn that checkpoint into the files --model reads: the command of
// scripts/gpt2-tf-to-hf.py (installed in share/attn) on this very directory, quoted for the shell, or
// Hugging Face's download instead.
std::string tensorflow_checkpoint_advice(const std::string& dir) {
  std::string src = dir;
  while (src.size() > 1 && src.back() == '/') src.pop_back();
  if (src.front() == '-') src = "./" + src;  // not an option of the script
  const auto slash = src.rfind('/');
  const std::string last = slash == std::string::npos ? src : src.substr(slash + 1);
  const std::string dest = last == "." || last == ".." || last.empty() ? "gpt2-hf" : src + "-hf";
  const std::string found = find_script("gpt2-tf-to-hf.py");
  const std::string script = found.empty() ? "scripts/gpt2-tf-to-hf.py" : found;
  return dir + ": holds the book's gpt_download.py download, a TensorFlow checkpoint (hparams.json, model.ckpt.*), "
               "not the Hugging Face files --model reads; convert it once, with TensorFlow and NumPy as in chapter "
               "5: python3 " + shell_word(script) + " " + shell_word(src) + " " + shell_word(dest) +
         (found.empty() ? " (the script is in attn's source)" : "") + ", then pass --model " + shell_word(dest) +
         "; or download Hugging Face's config.json, model.safetensors, vocab.json and merges.txt instead "
         "(docs/gpt2.md)";
}

}  // namespace

Gpt2Files Gpt2Files::inspect(const std::string& dir) {
  struct stat st {};
  const bool is_there = ::stat(dir.c_str(), &st) == 0;
  if (!is_there || !S_ISDIR(st.st_mode))
    throw InputError(dir + ": " + (is_there ? "is " + describe_file_type(st.st_mode) + ", not a directory"
                                          : std::string("cannot open the directory: ") + std::strerror(errno)) +
                     "; --model takes a Hugging Face GPT-2 directory (config.json, model.safetensors, vocab.json, "
                     "merges.txt)");
  Gpt2Files f;
  f.dir = dir;
  f.base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  if (is_tensorflow_checkpoint(f.base)) throw InputError(tensorflow_checkpoint_advice(dir));
  // gpt_download.py's models_dir ("gpt2") rather than the model's own folder in it: name the folder.
  if (!exists(f.base + "config.json"))
    for (const char* size : {"124M", "355M", "774M", "1558M"})  // the sizes gpt_download.py downloads
      if (is_tensorflow_checkpoint(f.base + size + "/"))
        throw InputError(dir + ": is the folder gpt_download.py downloads into, not a model; " +
                         tensorflow_checkpoint_advice(f.base + size));
  f.config = read_config(f.base + "config.json");
  // Each file's kind and size, before any of them is read: a FIFO or a device is refused here.
  f.vocabulary = open_regular_file(f.base + "vocab.json", kVocabularyFile);
  f.merges = open_regular_file(f.base + "merges.txt", kMergesFile);
  f.weights = open_regular_file(f.base + "model.safetensors", kSafetensorsFile);
  f.header_bytes = SafetensorsFile::header_size(f.weights);
  return f;
}

Gpt2Tokenizer Gpt2Files::read_tokenizer() const {
  return Gpt2Tokenizer::parse(read_regular_file(vocabulary, base + "vocab.json", kVocabularyFile), base + "vocab.json",
                              read_regular_file(merges, base + "merges.txt", kMergesFile), base + "merges.txt");
}

std::size_t Gpt2Files::tokenizer_bytes() const {
  // Measured: GPT-2's files (1.0 MiB and 0.5 MiB) take 15 MiB while they are read (the JSON tree, then the
  // maps): 10 times their size. 16 times, for a margin.
  return saturating_product({16, saturating_sum(vocabulary.size, merges.size)});
}

std::size_t Gpt2Files::activation_bytes(const Gpt2Config& config, std::size_t n, std::size_t layer) {
  const std::size_t E = config.n_embd, H = config.n_head, V = config.vocab_size;
  std::size_t floats = saturating_product({layer + 4, n, E, 2});            // the input steps, and the trace's copies
  floats = saturating_sum(floats, saturating_product({24, n, E}));           // one block's activations
  floats = saturating_sum(floats, saturating_product({H, n, n}));            // its attention scores (H, n, n)
  floats = saturating_sum(floats, saturating_product({4, E, E}));            // a weight converted from F16 or BF16
  floats = saturating_sum(floats, saturating_product({8, E, E}));            // attention(layer): c_attn, its parts, c_proj
  floats = saturating_sum(floats, saturating_sum(V, saturating_product({4096, E})));  // next-token logits
  return saturating_product({floats, sizeof(float)});
}

std::size_t Gpt2Files::mapped_bytes() const {
  // The weights are mapped whole (they count in the address space, and in the resident memory as the
  // forward reads them), and the header's JSON is parsed (about 24 bytes for each of its bytes).
  return saturating_sum(weights.size, saturating_product({24, header_bytes}));
}

std::size_t Gpt2Files::forward_bytes(std::size_t n, std::size_t layer) const {
  return saturating_sum(mapped_bytes(), activation_bytes(config, n, layer));
}

std::shared_ptr<const Gpt2Model> Gpt2Model::load(const std::string& dir) {
  Gpt2Files files = Gpt2Files::inspect(dir);
  Gpt2Tokenizer tokenizer = files.read_tokenizer();
  return load(std::move(files), std::move(tokenizer));
}

std::shared_ptr<const Gpt2Model> Gpt2Model::load(Gpt2Files files, Gpt2Tokenizer tokenizer) {
  const std::string& base = files.base;
  const std::string& dir = files.dir;
  const Gpt2Config& config = files.config;
  // Every id the model can predict (a row of wte, vocab_size of them) must be a token the tokenizer can
  // name, and every token it makes a row of wte: the two files must agree exactly.
  if (tokenizer.vocabulary_size() != config.vocab_size)
    throw InputError(base + "config.json: vocab_size " + with_commas(config.vocab_size) + ", but " + base + "vocab.json has " +
                     with_commas(tokenizer.vocabulary_size()) + " tokens; the two must agree");
  auto model = std::make_shared<Gpt2Model>(SafetensorsFile::open(files.weights, base + "model.safetensors"), std::move(tokenizer));
  model->config_ = config;
  model->dir_ = dir;
  const SafetensorsFile& file = model->file_;
  // GPT2Model names its tensors "wte.weight", GPT2LMHeadModel "transformer.wte.weight"; buffers such as
  // "h.0.attn.bias" (the causal mask) and a tied "lm_head.weight" are there or not and are never read.
  if (file.find("wte.weight") == nullptr && file.find("transformer.wte.weight") != nullptr) model->prefix_ = "transformer.";
  const std::size_t E = config.n_embd;
  std::vector<std::pair<std::string, std::vector<std::size_t>>> expected = {
      {"wte.weight", {config.vocab_size, E}}, {"wpe.weight", {config.n_positions, E}}};
  for (std::size_t l = 0; l < config.n_layer; ++l)
    for (const auto& [name, shape] : block_tensors(E)) expected.push_back({layer_name(l, name), shape});
  expected.push_back({"ln_f.weight", {E}});
  expected.push_back({"ln_f.bias", {E}});
  const std::string& file_name = file.name();
  for (const auto& [name, shape] : expected) {
    const SafeTensor* t = file.find(model->prefix_ + name);
    if (t == nullptr)
      throw InputError(file_name + ": no tensor " + model->prefix_ + name + " (" + base + "config.json: n_layer " +
                       std::to_string(config.n_layer) + ", n_embd " + std::to_string(E) + ")");
    if (!t->is_float())
      throw InputError(file_name + ": " + name + " is " + to_string(t->dtype) + "; attn reads F32, F16 and BF16 weights");
    if (t->shape != shape)
      throw InputError(file_name + ": " + name + " has shape " + shape_text(t->shape) + " where " + base + "config.json asks for " +
                       shape_text(shape));
  }
  return model;
}

const SafeTensor& Gpt2Model::tensor(const std::string& name) const { return *file_.find(prefix_ + name); }  // checked in load

Vector Gpt2Model::vector(const std::string& name) const {
  const SafeTensor& t = tensor(name);
  Vector out = xt::empty<float>({t.numel()});  // (size,)
  t.to_float(out.data());
  return out;
}

Matrix Gpt2Model::matrix(const std::string& name) const {
  const SafeTensor& t = tensor(name);
  Matrix out = xt::empty<float>({t.shape[0], t.shape[1]});  // (rows, cols), as stored
  t.to_float(out.data());
  return out;
}

Matrix Gpt2Model::token_embeddings(const std::vector<std::int64_t>& ids) const {
  const SafeTensor& wte = tensor("wte.weight");
  const std::size_t E = config_.n_embd;
  Matrix out = xt::empty<float>({ids.size(), E});  // (len(ids), n_embd)
  for (std::size_t r = 0; r < ids.size(); ++r)
    for (std::size_t c = 0; c < E; ++c) out(r, c) = wte.at(static_cast<std::size_t>(ids[r]) * E + c);
  return out;
}

Matrix Gpt2Model::position_embeddings(std::size_t n) const {
  const SafeTensor& wpe = tensor("wpe.weight");
  const std::size_t E = config_.n_embd;
  Matrix out = xt::empty<float>({n, E});  // (n, n_embd)
  for (std::size_t i = 0; i < n * E; ++i) out.data()[i] = wpe.at(i);
  return out;
}

Matrix Gpt2Model::layer_norm_of(const Matrix& x, const std::string& prefix) const {
  return layer_norm(x, vector(prefix + ".weight"), vector(prefix + ".bias"), static_cast<float>(config_.layer_norm_epsilon));
}

Matrix Gpt2Model::norm1(const Matrix& x, std::size_t layer) const { return layer_norm_of(x, layer_name(layer, "ln_1")); }

Gpt2Attention Gpt2Model::attention(std::size_t layer) const {
  const std::size_t E = config_.n_embd;
  // Hugging Face's GPT-2 uses Conv1D layers, which store their weight as (in, out): y = x @ W + b. The book's
  // nn.Linear stores (out, in) and computes x @ W.T + b, so each part of c_attn is transposed here, as
  // load_weights_into_gpt does with np.split(c_attn.weight, 3, axis=-1) and .T.
  const Matrix c_attn = matrix(layer_name(layer, "attn.c_attn.weight"));  // (E, 3E): [W_q | W_k | W_v], (in, out)
  const Vector c_attn_bias = vector(layer_name(layer, "attn.c_attn.bias"));  // (3E,)
  const auto part = [&](std::size_t k) {
    Matrix w = xt::empty<float>({E, E});  // (E out, E in): columns k E .. (k + 1) E of c_attn, transposed
    Vector b = xt::empty<float>({E});     // (E,)
    for (std::size_t o = 0; o < E; ++o) {
      for (std::size_t i = 0; i < E; ++i) w(o, i) = c_attn(i, k * E + o);
      b(o) = c_attn_bias(k * E + o);
    }
    return Linear(std::move(w), std::move(b));
  };
  Matrix proj = xt::transpose(matrix(layer_name(layer, "attn.c_proj.weight")));  // (E, E): (in, out) -> (out, in)
  return {part(0), part(1), part(2), Linear(std::move(proj), vector(layer_name(layer, "attn.c_proj.bias")))};
}

Matrix Gpt2Model::conv1d(const Matrix& x, const std::string& name) const {
  return conv1d_parts(x, name, 1);
}

Matrix Gpt2Model::conv1d_parts(const Matrix& x, const std::string& name, std::size_t parts) const {
  const SafeTensor& w = tensor(name + ".weight");  // (in, out)
  const std::size_t n = x.shape(0), in = w.shape[0], out = w.shape[1];
  // F32 weights are used where they lie in the mapping (Conv1D's (in, out) layout is what x @ W reads);
  // others, or F32 at an address that is no float's, are converted into a buffer first.
  std::vector<float> converted;
  const float* W = reinterpret_cast<const float*>(w.data);
  if (w.dtype != SafeDType::F32 || reinterpret_cast<std::uintptr_t>(w.data) % alignof(float) != 0) {
    converted.resize(w.numel());
    w.to_float(converted.data());
    W = converted.data();
  }
  Matrix y = xt::empty<float>({n, out});  // (n, out)
  const Vector bias = vector(name + ".bias");  // (out,)
  for (std::size_t r = 0; r < n; ++r) std::copy(bias.begin(), bias.end(), &y(r, 0));
  const std::size_t count = out / parts;
  using xt::blas_index_t;
  for (std::size_t first = 0; first < out; first += count)  // y[:, cols] = x @ W[:, cols] + bias[cols]
    cxxblas::gemm<blas_index_t>(cxxblas::StorageOrder::RowMajor, cxxblas::Transpose::NoTrans, cxxblas::Transpose::NoTrans,
                                static_cast<blas_index_t>(n), static_cast<blas_index_t>(count),
                                static_cast<blas_index_t>(in), 1.0f, x.data(), static_cast<blas_index_t>(in), W + first,
                                static_cast<blas_index_t>(out), 1.0f, &y(0, first), static_cast<blas_index_t>(out));
  return y;
}

Matrix Gpt2Model::block(const Matrix& x, std::size_t layer) const {
  const std::size_t n = x.shape(0), E = config_.n_embd, H = config_.n_head;
  // x = x + att(norm1(x)): queries, keys and values, each its own product with its third of c_attn as the
  // book's three nn.Linear layers compute them (one product of all 3E columns adds otherwise in OpenBLAS
  // once the rows are many), side by side; then the chapter's causal multi-head attention on them as
  // strided views (causal_attention_unfused, as MultiHeadAttention.forward runs it), then out_proj.
  const Matrix h = norm1(x, layer);  // (n, E)
  const Matrix qkv = conv1d_parts(h, layer_name(layer, "attn.c_attn"), 3);  // (n, 3E): [queries | keys | values]
  Matrix context = xt::empty<float>({n, E});                         // (n, E): the heads side by side
  causal_attention_unfused({1, n, H, H, E / H},
                           {qkv.data(), 3 * E, qkv.data() + E, 3 * E, qkv.data() + 2 * E, 3 * E, context.data(), E},
                           compute_threads());
  const Matrix x1 = x + conv1d(context, layer_name(layer, "attn.c_proj"));  // (n, E)
  // x = x + ff(norm2(x)): Linear(E, 4E), GELU, Linear(4E, E).
  const Matrix h2 = layer_norm_of(x1, layer_name(layer, "ln_2"));            // (n, E)
  const Matrix up = gelu(conv1d(h2, layer_name(layer, "mlp.c_fc")));         // (n, 4E)
  return x1 + conv1d(up, layer_name(layer, "mlp.c_proj"));                   // (n, E)
}

Vector Gpt2Model::next_token_logits(const Matrix& x_from, std::size_t from) const {
  Matrix x = x_from;  // (n, E)
  for (std::size_t l = from; l < config_.n_layer; ++l) x = block(x, l);
  const Matrix h = layer_norm_of(x, "ln_f");  // (n, E): final_norm
  const std::size_t E = config_.n_embd, V = config_.vocab_size, last = h.shape(0) - 1;
  // out_head shares tok_emb's weight (GPT-2 ties them): logits = h[-1] @ wte.T, in blocks of rows so that
  // the whole (V, E) table is never converted at once.
  const SafeTensor& wte = tensor("wte.weight");
  const Vector h_last = xt::row(h, last);  // (E,)
  Vector logits = xt::empty<float>({V});   // (vocab_size,)
  if (wte.dtype == SafeDType::F32 && reinterpret_cast<std::uintptr_t>(wte.data) % alignof(float) == 0) {
    // The table where it lies in the mapping: one product, h_last (1, E) @ wte.T (E, V).
    using xt::blas_index_t;
    cxxblas::gemm<blas_index_t>(cxxblas::StorageOrder::RowMajor, cxxblas::Transpose::NoTrans, cxxblas::Transpose::Trans,
                                1, static_cast<blas_index_t>(V), static_cast<blas_index_t>(E), 1.0f, h_last.data(),
                                static_cast<blas_index_t>(E), reinterpret_cast<const float*>(wte.data),
                                static_cast<blas_index_t>(E), 0.0f, logits.data(), static_cast<blas_index_t>(V));
    return logits;
  }
  constexpr std::size_t kRows = 4096;
  for (std::size_t from_row = 0; from_row < V; from_row += kRows) {
    const std::size_t rows = std::min(kRows, V - from_row);
    Matrix block_rows = xt::empty<float>({rows, E});  // (rows, E)
    for (std::size_t i = 0; i < rows * E; ++i) block_rows.data()[i] = wte.at(from_row * E + i);
    const Vector part = matvec(h_last, block_rows, /*transpose_b=*/true);  // (rows,)
    std::copy(part.begin(), part.end(), logits.begin() + static_cast<std::ptrdiff_t>(from_row));
  }
  return logits;
}

Linear head_rows(const Linear& full, std::size_t head, std::size_t head_dim) {
  const std::size_t in = full.weight.shape(1), from = head * head_dim;
  Matrix w = xt::empty<float>({head_dim, in});  // (head_dim, in): rows from .. from + head_dim
  std::copy(&full.weight(from, 0), &full.weight(from, 0) + head_dim * in, w.begin());
  Vector b = xt::zeros<float>({full.bias.size() > 0 ? head_dim : std::size_t{0}});  // (head_dim,) or (0,)
  for (std::size_t r = 0; r < b.size(); ++r) b(r) = full.bias(from + r);
  return Linear(std::move(w), std::move(b));
}

}  // namespace attn
