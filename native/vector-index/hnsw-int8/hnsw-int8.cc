// hnswlib's HNSW graph with each vector stored as int8 (a quarter of float32) for cosine search.
// hnswlib-node, the binding we used before, fixes the element type to float32: 1,536 bytes per
// 384-d vector, 146 MiB at 100k chunks. Here a vector is 388 bytes and the graph code is hnswlib's own.
#include <napi.h>
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <queue>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace {

using Graph = hnswlib::HierarchicalNSW<float>;

constexpr const char* kBusy = "index is being saved or loaded";

// A filtered search compares every admitted vector instead of walking the graph (exact) when that is the
// cheaper: the walk passes about ef / share nodes to gather its ef admitted ones, each comparing a node's
// neighbours, while exact compares the admitted vectors once. They cost alike near admitted² = C × indexed.
// Measured at 100k vectors of 256 dimensions, the two alternating query by query: 15% admitted, 3.6 ms exact and
// 3.8 ms walking, 20% 4.5 and 3.0 (C = 2048 then); with the AVX2 dot product and the exact path's ids read from an
// array (session 19), 15% 1.53 and 2.32, 18% 1.95 and 2.08, 20% 2.05 and 1.82. So exact below
// max(4096, √(3200 × indexed)): 18% of 100k vectors, 5.7% of a million. A few percent admitted would otherwise walk
// most of the graph.
constexpr size_t kExactFilterVectors = 4096;
constexpr double kExactFilterCrossover = 3200;
// An unfiltered search of an index this small compares every vector too: under a millisecond, and exact, so a small
// collection's vector side never misses a neighbour, and the same vectors give the same answer however the graph
// was built (a restored backup that re-indexed what was mid-ingest walks another graph than the original).
constexpr size_t kExactVectors = 4096;

using Found = std::priority_queue<std::pair<float, hnswlib::labeltype>>;

// A 32-bit value per label: its access key, or its internal id in the graph. The graph walk's filter reads a key
// per candidate it visits, so labels below kDenseLabels (chunk rowids: all of them in practice) sit in an array
// indexed by label, one read, where a hash map took a cache miss or two each; any label above falls back to a map.
// 4 bytes per label up to the largest.
class PerLabel {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  uint32_t Get(hnswlib::labeltype label) const {
    if (label < dense_.size()) return dense_[label];
    if (label < kDenseLabels) return kNone;
    const auto found = sparse_.find(label);
    return found == sparse_.end() ? kNone : found->second;
  }

  // key < kNone (SetKeys checks).
  void Set(hnswlib::labeltype label, uint32_t key) {
    if (label >= kDenseLabels) {
      count_ += sparse_.insert_or_assign(label, key).second;
      return;
    }
    if (label >= dense_.size()) dense_.resize(std::min(kDenseLabels, std::max<size_t>(label + 1, dense_.size() + dense_.size() / 2)), kNone);
    count_ += dense_[label] == kNone;
    dense_[label] = key;
  }

  void Erase(hnswlib::labeltype label) {
    if (label < dense_.size()) {
      count_ -= dense_[label] != kNone;
      dense_[label] = kNone;
    } else if (label >= kDenseLabels) {
      count_ -= sparse_.erase(label);
    }
  }

  void Clear() {
    dense_.clear();
    dense_.shrink_to_fit();
    sparse_.clear();
    count_ = 0;
  }

  // Labels that have a key.
  size_t size() const { return count_; }

 private:
  static constexpr size_t kDenseLabels = size_t(1) << 24;
  std::vector<uint32_t> dense_;
  std::unordered_map<hnswlib::labeltype, uint32_t> sparse_;
  size_t count_ = 0;
};

// Admits a label when its access key is in the allowed set (hnswlib asks during the graph walk).
class KeyFilter final : public hnswlib::BaseFilterFunctor {
 public:
  KeyFilter(const PerLabel& keys, const std::vector<bool>& allowed) : keys_(keys), allowed_(allowed) {}

  bool operator()(hnswlib::labeltype label) override {
    const uint32_t key = keys_.Get(label);
    return key < allowed_.size() && allowed_[key];
  }

 private:
  const PerLabel& keys_;
  const std::vector<bool>& allowed_;
};

// A stored vector: `dim` int8 components scaled so that the largest magnitude is 127 (per-vector
// scale keeps ~7 bits for every vector, where a fixed scale leaves short components at 2-3 bits),
// then the float 1/|q|. Cosine is scale-free, so the scale itself need not be kept.
class Int8CosineSpace final : public hnswlib::SpaceInterface<float> {
 public:
  explicit Int8CosineSpace(size_t dim) : dim_(dim) {}

  size_t get_data_size() override { return dim_ + sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return ChooseDistance(); }
  void* get_dist_func_param() override { return &dim_; }
  size_t dim() const { return dim_; }

  // Writes get_data_size() bytes; false when the vector has a non-finite component.
  bool Quantise(const float* v, uint8_t* out) const {
    float largest = 0.0f;
    for (size_t i = 0; i < dim_; ++i) {
      if (!std::isfinite(v[i])) return false;
      largest = std::max(largest, std::fabs(v[i]));
    }
    auto* q = reinterpret_cast<int8_t*>(out);
    int64_t square = 0;
    const float scale = largest > 0.0f ? 127.0f / largest : 0.0f;
    for (size_t i = 0; i < dim_; ++i) {
      const long rounded = std::lrintf(v[i] * scale);
      q[i] = static_cast<int8_t>(std::max(-127L, std::min(127L, rounded)));
      square += int64_t(q[i]) * q[i];
    }
    const float inverse = square > 0 ? 1.0f / std::sqrt(static_cast<float>(square)) : 0.0f;
    std::memcpy(out + dim_, &inverse, sizeof inverse);
    return true;
  }

 private:
  // 1 - cosine, from the int8 dot product. |dot| <= dim * 127^2 fits int32 for any dimension up to 133k.
  template <int32_t (*Dot)(const int8_t*, const int8_t*, size_t)>
  static float Distance(const void* a, const void* b, const void* param) {
    const size_t dim = *static_cast<const size_t*>(param);
    const auto* x = static_cast<const int8_t*>(a);
    const auto* y = static_cast<const int8_t*>(b);
    const int32_t dot = Dot(x, y, dim);
    float inverse_x, inverse_y;
    std::memcpy(&inverse_x, x + dim, sizeof inverse_x);
    std::memcpy(&inverse_y, y + dim, sizeof inverse_y);
    return 1.0f - static_cast<float>(dot) * inverse_x * inverse_y;
  }

  // The compiler's own vectorisation of this loop (SSE2 on x86-64, NEON on ARM).
  static int32_t Dot(const int8_t* x, const int8_t* y, size_t dim) {
    int32_t dot = 0;
    for (size_t i = 0; i < dim; ++i) dot += int32_t(x[i]) * int32_t(y[i]);
    return dot;
  }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // 16 components from `at`, each sign-extended to int16.
  __attribute__((target("avx2"))) static __m256i widened(const int8_t* at) { return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at))); }

  // The same sum with AVX2, where the CPU has it: 16 components widened to int16 and multiplied pairwise into int32
  // (vpmaddwd) per instruction, where SSE2 alone (the x86-64 baseline the addon is built for) needs about five
  // instructions to sign-extend and multiply 8. Distance is most of a graph walk's and an exact search's time.
  // Integer sums, so the result is the same bit for bit; the last dim % 16 components go through Dot.
  __attribute__((target("avx2"))) static int32_t DotAvx2(const int8_t* x, const int8_t* y, size_t dim) {
    __m256i low = _mm256_setzero_si256();
    __m256i high = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= dim; i += 32) {
      low = _mm256_add_epi32(low, _mm256_madd_epi16(widened(x + i), widened(y + i)));
      high = _mm256_add_epi32(high, _mm256_madd_epi16(widened(x + i + 16), widened(y + i + 16)));
    }
    if (i + 16 <= dim) {
      low = _mm256_add_epi32(low, _mm256_madd_epi16(widened(x + i), widened(y + i)));
      i += 16;
    }
    const __m256i sum = _mm256_add_epi32(low, high);
    __m128i lanes = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    lanes = _mm_add_epi32(lanes, _mm_shuffle_epi32(lanes, 0x4E));
    lanes = _mm_add_epi32(lanes, _mm_shuffle_epi32(lanes, 0xB1));
    return _mm_cvtsi128_si32(lanes) + Dot(x + i, y + i, dim - i);
  }

  static hnswlib::DISTFUNC<float> ChooseDistance() { return __builtin_cpu_supports("avx2") ? &Distance<DotAvx2> : &Distance<Dot>; }
#else
  static hnswlib::DISTFUNC<float> ChooseDistance() { return &Distance<Dot>; }
#endif

  size_t dim_;
};

// What one search asks, read from its arguments on the main thread: the query quantised and, for a filtered
// search, the distinct access keys it admits (as a set and as a list).
struct SearchRequest {
  std::vector<uint8_t> query;
  size_t k = 0;
  bool filtered = false;
  std::vector<bool> allowed;
  std::vector<uint32_t> distinct;
};

class Index : public Napi::ObjectWrap<Index> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Int8HnswIndex", {
      InstanceMethod("initIndex", &Index::InitIndex),
      InstanceMethod("readIndex", &Index::ReadIndex),
      InstanceMethod("writeIndex", &Index::WriteIndex),
      InstanceMethod("resizeIndex", &Index::ResizeIndex),
      InstanceMethod("addPoint", &Index::AddPoint),
      InstanceMethod("markDelete", &Index::MarkDelete),
      InstanceMethod("unmarkDelete", &Index::UnmarkDelete),
      InstanceMethod("searchKnn", &Index::SearchKnn),
      InstanceMethod("searchKnnAsync", &Index::SearchKnnAsync),
      InstanceMethod("setKeys", &Index::SetKeys),
      InstanceMethod("setEf", &Index::SetEf),
      InstanceMethod("getIdsList", &Index::GetIdsList),
      InstanceMethod("getCurrentCount", &Index::GetCurrentCount),
      InstanceMethod("getMaxElements", &Index::GetMaxElements),
      InstanceMethod("getNumDimensions", &Index::GetNumDimensions),
    });
  }

  explicit Index(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Index>(info) {
    const size_t dim = Size(info, 0, "dimension");
    if (dim == 0 || dim > 65536) throw Napi::RangeError::New(info.Env(), "dimension must be 1..65536");
    space_ = std::make_unique<Int8CosineSpace>(dim);
  }

  // Called on the main thread when a background read finishes.
  void Adopt(std::unique_ptr<Graph> graph) {
    std::unique_lock<std::shared_mutex> changing(searches_);
    graph_ = std::move(graph);
    ClearKeys();
    IndexIds();
  }
  Int8CosineSpace* space() { return space_.get(); }
  Graph* graph() { return graph_.get(); }
  std::atomic<bool>& busy() { return busy_; }
  // Held shared by each search on libuv's pool, and exclusively by every change (all on the main thread): a change
  // waits for the searches in flight (milliseconds) and none starts until it is done.
  std::shared_mutex& searches() { return searches_; }

  // The k nearest (filtered by the request's keys when it has them); on the main thread, or on the pool under a
  // shared hold of searches(). Throws std::exception from hnswlib.
  Found Find(const SearchRequest& request) {
    Graph& graph = *graph_;
    if (request.filtered) return FindAllowed(graph, request);
    if (graph.getCurrentElementCount() - graph.getDeletedCount() <= kExactVectors) return ExactAll(graph, request.query, request.k);
    return graph.searchKnn(request.query.data(), request.k);
  }

  static Napi::Value Results(Napi::Env env, Found& found) {
    const size_t n = found.size();
    auto neighbors = Napi::Array::New(env, n);
    auto distances = Napi::Array::New(env, n);
    for (size_t i = n; i-- > 0; found.pop()) {  // the queue yields the farthest first
      neighbors.Set(i, Napi::Number::New(env, static_cast<double>(found.top().second)));
      distances.Set(i, Napi::Number::New(env, found.top().first));
    }
    auto result = Napi::Object::New(env);
    result.Set("neighbors", neighbors);
    result.Set("distances", distances);
    return result;
  }

 private:
  static size_t Size(const Napi::CallbackInfo& info, size_t at, const char* name) {
    if (info.Length() <= at || !info[at].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(name) + " must be a number");
    const double value = info[at].As<Napi::Number>().DoubleValue();
    if (!(value >= 0) || value > 9007199254740991.0 || std::floor(value) != value)
      throw Napi::RangeError::New(info.Env(), std::string(name) + " must be a non-negative integer");
    return static_cast<size_t>(value);
  }

  static bool Flag(const Napi::CallbackInfo& info, size_t at) {
    return info.Length() > at && info[at].IsBoolean() && info[at].As<Napi::Boolean>().Value();
  }

  Graph& Ready(const Napi::Env& env) {
    if (!graph_) throw Napi::Error::New(env, "index is not initialised");
    return *graph_;
  }

  // Changes are refused while a save reads the graph on another thread (the caller queues them).
  void Idle(const Napi::Env& env) const {
    if (busy_) throw Napi::Error::New(env, kBusy);
  }

  Graph& Writable(const Napi::Env& env) {
    Idle(env);
    return Ready(env);
  }

  std::vector<uint8_t> Quantised(const Napi::CallbackInfo& info, size_t at) {
    if (info.Length() <= at || !info[at].IsTypedArray() || info[at].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
      throw Napi::TypeError::New(info.Env(), "vector must be a Float32Array");
    auto vector = info[at].As<Napi::Float32Array>();
    if (vector.ElementLength() != space_->dim())
      throw Napi::RangeError::New(info.Env(), "vector has " + std::to_string(vector.ElementLength()) + " dimensions, the index " + std::to_string(space_->dim()));
    std::vector<uint8_t> data(space_->get_data_size());
    if (!space_->Quantise(vector.Data(), data.data())) throw Napi::RangeError::New(info.Env(), "vector has a non-finite component");
    return data;
  }

  template <typename F>
  static auto Guard(const Napi::Env& env, F&& body) -> decltype(body()) {
    try {
      return body();
    } catch (const Napi::Error&) {
      throw;
    } catch (const std::exception& error) {
      throw Napi::Error::New(env, error.what());
    }
  }

  Napi::Value InitIndex(const Napi::CallbackInfo& info) {
    Idle(info.Env());
    std::unique_lock<std::shared_mutex> changing(searches_);
    const size_t max_elements = Size(info, 0, "maxElements");
    const size_t m = Size(info, 1, "m");
    const size_t ef_construction = Size(info, 2, "efConstruction");
    const size_t seed = Size(info, 3, "randomSeed");
    const bool allow_replace_deleted = Flag(info, 4);
    if (m < 2 || m > 256) throw Napi::RangeError::New(info.Env(), "m must be 2..256");
    Guard(info.Env(), [&] {
      graph_ = std::make_unique<Graph>(space_.get(), std::max<size_t>(max_elements, 1), m, ef_construction, seed, allow_replace_deleted);
    });
    ClearKeys();
    IndexIds();
    return info.Env().Undefined();
  }

  Napi::Value ReadIndex(const Napi::CallbackInfo& info) { return QueueFileWork(info, false, Flag(info, 1)); }
  Napi::Value WriteIndex(const Napi::CallbackInfo& info) { return QueueFileWork(info, true, false); }
  Napi::Value QueueFileWork(const Napi::CallbackInfo& info, bool write, bool allow_replace_deleted);

  Napi::Value ResizeIndex(const Napi::CallbackInfo& info) {
    Graph& graph = Writable(info.Env());
    std::unique_lock<std::shared_mutex> changing(searches_);
    const size_t max_elements = Size(info, 0, "maxElements");
    if (max_elements < graph.cur_element_count) throw Napi::RangeError::New(info.Env(), "maxElements is below the current count");
    Guard(info.Env(), [&] { graph.resizeIndex(max_elements); });
    return info.Env().Undefined();
  }

  Napi::Value AddPoint(const Napi::CallbackInfo& info) {
    Graph& graph = Writable(info.Env());
    const std::vector<uint8_t> data = Quantised(info, 0);
    const size_t label = Size(info, 1, "label");
    const bool replace_deleted = Flag(info, 2);
    std::unique_lock<std::shared_mutex> changing(searches_);
    Guard(info.Env(), [&] { graph.addPoint(data.data(), label, replace_deleted); });
    const auto slot = graph.label_lookup_.find(label);
    if (slot != graph.label_lookup_.end()) id_of_label_.Set(label, slot->second);
    return info.Env().Undefined();
  }

  Napi::Value MarkDelete(const Napi::CallbackInfo& info) { return ChangeLabel(info, &Graph::markDelete, true); }
  Napi::Value UnmarkDelete(const Napi::CallbackInfo& info) { return ChangeLabel(info, &Graph::unmarkDelete, false); }

  Napi::Value ChangeLabel(const Napi::CallbackInfo& info, void (Graph::*change)(hnswlib::labeltype), bool forget_key) {
    Graph& graph = Writable(info.Env());
    const size_t label = Size(info, 0, "label");
    std::unique_lock<std::shared_mutex> changing(searches_);
    Guard(info.Env(), [&] { (graph.*change)(label); });
    if (forget_key) ForgetKey(label);
    return info.Env().Undefined();
  }

  // Searching only reads the graph, so it may run while a save writes it out. With allowed keys
  // (a Uint32Array), only labels whose key is among them are returned: the filter runs inside
  // the search, so k allowed neighbours come back whenever that many exist.
  Napi::Value SearchKnn(const Napi::CallbackInfo& info) {
    const SearchRequest request = Request(info);
    Found found = Guard(info.Env(), [&] { return Find(request); });
    return Results(info.Env(), found);
  }

  // The same search on libuv's pool, resolving to the same result: the caller's thread goes on meanwhile (the
  // retrieval service ranks keywords while the graph is walked).
  Napi::Value SearchKnnAsync(const Napi::CallbackInfo& info);

  SearchRequest Request(const Napi::CallbackInfo& info) {
    Ready(info.Env());
    SearchRequest request;
    request.query = Quantised(info, 0);
    request.k = Size(info, 1, "k");
    request.filtered = info.Length() > 2 && !info[2].IsUndefined();
    if (!request.filtered) return request;
    if (!info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
      throw Napi::TypeError::New(info.Env(), "allowed keys must be a Uint32Array");
    auto keys = info[2].As<Napi::Uint32Array>();
    for (size_t i = 0; i < keys.ElementLength(); ++i) {
      const uint32_t key = keys[i];
      if (key >= request.allowed.size()) request.allowed.resize(size_t(key) + 1, false);
      if (request.allowed[key]) continue;
      request.allowed[key] = true;
      request.distinct.push_back(key);
    }
    return request;
  }

  Found FindAllowed(Graph& graph, const SearchRequest& request) {
    size_t admitted = 0;
    for (const uint32_t key : request.distinct) {
      const auto labels = labels_of_key_.find(key);
      if (labels != labels_of_key_.end()) admitted += labels->second.size();
    }
    if (admitted == 0 || request.k == 0) return Found();
    const size_t keyed = key_of_label_.size();
    const size_t exact_below = static_cast<size_t>(std::sqrt(kExactFilterCrossover * static_cast<double>(keyed)));
    if (admitted <= std::max(kExactFilterVectors, exact_below)) return Exact(graph, request.query, request.k, request.distinct);
    KeyFilter filter(key_of_label_, request.allowed);
    return graph.searchKnn(request.query.data(), request.k, &filter);
  }

  // Compares the query with every vector of the allowed keys; keeps the k nearest.
  Found Exact(Graph& graph, const std::vector<uint8_t>& query, size_t k, const std::vector<uint32_t>& keys) {
    Found nearest;
    for (const uint32_t key : keys) {
      const auto labels = labels_of_key_.find(key);
      if (labels == labels_of_key_.end()) continue;
      for (const hnswlib::labeltype label : labels->second) {
        hnswlib::tableint id;
        if (!Locate(graph, label, id) || graph.isMarkedDeleted(id)) continue;
        Keep(nearest, k, graph.fstdistfunc_(query.data(), graph.getDataByInternalId(id), graph.dist_func_param_), label);
      }
    }
    return nearest;
  }

  // Compares the query with every live vector; keeps the k nearest.
  static Found ExactAll(Graph& graph, const std::vector<uint8_t>& query, size_t k) {
    Found nearest;
    if (k == 0) return nearest;
    const size_t count = graph.getCurrentElementCount();
    for (hnswlib::tableint id = 0; id < count; ++id) {
      if (graph.isMarkedDeleted(id)) continue;
      Keep(nearest, k, graph.fstdistfunc_(query.data(), graph.getDataByInternalId(id), graph.dist_func_param_), graph.getExternalLabel(id));
    }
    return nearest;
  }

  // Keeps the k nearest seen so far; of equally near ones the lower labels, whatever order they come in.
  static void Keep(Found& nearest, size_t k, float distance, hnswlib::labeltype label) {
    const std::pair<float, hnswlib::labeltype> candidate(distance, label);
    if (nearest.size() < k) nearest.push(candidate);
    else if (candidate < nearest.top()) {
      nearest.pop();
      nearest.push(candidate);
    }
  }

  // Access keys (the caller's: Hearth uses the chunk's document) that filtered searches match.
  // Kept beside the graph, not in its file: the caller sets them again after a load.
  Napi::Value SetKeys(const Napi::CallbackInfo& info) {
    Ready(info.Env());
    if (info.Length() < 2 || !info[0].IsArray() || !info[1].IsArray()) throw Napi::TypeError::New(info.Env(), "labels and keys must be arrays");
    auto labels = info[0].As<Napi::Array>();
    auto keys = info[1].As<Napi::Array>();
    if (labels.Length() != keys.Length()) throw Napi::RangeError::New(info.Env(), "labels and keys differ in length");
    std::vector<std::pair<hnswlib::labeltype, uint32_t>> pairs;
    pairs.reserve(labels.Length());
    for (uint32_t i = 0; i < labels.Length(); ++i) {
      const Napi::Value label = labels[i];
      const Napi::Value key = keys[i];
      const double l = label.IsNumber() ? label.As<Napi::Number>().DoubleValue() : -1;
      const double v = key.IsNumber() ? key.As<Napi::Number>().DoubleValue() : -1;
      if (!(l >= 0) || l > 9007199254740991.0 || std::floor(l) != l || !(v >= 0) || v >= 4294967295.0 || std::floor(v) != v)
        throw Napi::RangeError::New(info.Env(), "labels must be non-negative integers and keys 32-bit unsigned integers below 2^32 - 1");
      pairs.emplace_back(static_cast<hnswlib::labeltype>(l), static_cast<uint32_t>(v));
    }
    std::unique_lock<std::shared_mutex> changing(searches_);
    for (const auto& [label, key] : pairs) {
      ForgetKey(label);
      key_of_label_.Set(label, key);
      labels_of_key_[key].insert(label);
    }
    return info.Env().Undefined();
  }

  // The internal id of a label in the graph (false: none): the array first, trusted only when that element holds
  // this label, else hnswlib's map.
  bool Locate(const Graph& graph, hnswlib::labeltype label, hnswlib::tableint& id) const {
    const uint32_t known = id_of_label_.Get(label);
    if (known != PerLabel::kNone && known < graph.cur_element_count && graph.getExternalLabel(known) == label) {
      id = known;
      return true;
    }
    const auto slot = graph.label_lookup_.find(label);
    if (slot == graph.label_lookup_.end()) return false;
    id = slot->second;
    return true;
  }

  // id_of_label_ anew from the graph's own map (a new or freshly read graph).
  void IndexIds() {
    id_of_label_.Clear();
    if (!graph_) return;
    for (const auto& [label, id] : graph_->label_lookup_) id_of_label_.Set(label, id);
  }

  void ClearKeys() {
    key_of_label_.Clear();
    labels_of_key_.clear();
  }

  void ForgetKey(hnswlib::labeltype label) {
    const uint32_t key = key_of_label_.Get(label);
    if (key == PerLabel::kNone) return;
    const auto labels = labels_of_key_.find(key);
    if (labels != labels_of_key_.end() && labels->second.erase(label) && labels->second.empty()) labels_of_key_.erase(labels);
    key_of_label_.Erase(label);
  }

  Napi::Value SetEf(const Napi::CallbackInfo& info) {
    Graph& graph = Ready(info.Env());
    const size_t ef = Size(info, 0, "ef");
    std::unique_lock<std::shared_mutex> changing(searches_);
    graph.setEf(ef);
    return info.Env().Undefined();
  }

  // Every label in the graph, including those marked deleted.
  Napi::Value GetIdsList(const Napi::CallbackInfo& info) {
    Graph& graph = Ready(info.Env());
    auto labels = Napi::Array::New(info.Env(), graph.label_lookup_.size());
    uint32_t at = 0;
    for (const auto& entry : graph.label_lookup_) labels.Set(at++, Napi::Number::New(info.Env(), static_cast<double>(entry.first)));
    return labels;
  }

  Napi::Value GetCurrentCount(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), graph_ ? static_cast<double>(graph_->cur_element_count) : 0);
  }

  Napi::Value GetMaxElements(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), graph_ ? static_cast<double>(graph_->max_elements_) : 0);
  }

  Napi::Value GetNumDimensions(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(space_->dim()));
  }

  std::unique_ptr<Int8CosineSpace> space_;
  std::unique_ptr<Graph> graph_;
  std::atomic<bool> busy_{false};
  std::shared_mutex searches_;
  PerLabel key_of_label_;
  // Each label's internal id, as hnswlib's label_lookup_ holds it, for the exact path: an array read instead of a
  // hash lookup per admitted vector. An entry goes stale when a deleted element is reused for another label, so it
  // is checked against the element's own label before use (Locate).
  PerLabel id_of_label_;
  std::unordered_map<uint32_t, std::unordered_set<hnswlib::labeltype>> labels_of_key_;
};

// Work for one index on libuv's pool, settled as a promise; the index stays alive until it ends.
class IndexWork : public Napi::AsyncWorker {
 public:
  // Queues the work; its promise settles on the main thread when it ends.
  Napi::Promise Start() {
    Queue();
    return deferred_.Promise();
  }

  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 protected:
  IndexWork(Napi::Env env, const char* name, Index* index, Napi::Object self)
      : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)), index_(index) {
    self_ = Napi::Persistent(self);
  }

  Napi::Promise::Deferred deferred_;
  Index* index_;

 private:
  Napi::ObjectReference self_;  // keeps the index alive until the work ends
};

// Reading and writing run on libuv's pool so that a 50 MB index never stalls the event loop.
class FileWork : public IndexWork {
 public:
  FileWork(Napi::Env env, Index* index, Napi::Object self, std::string path, bool write, bool allow_replace_deleted)
      : IndexWork(env, write ? "hnsw-int8:write" : "hnsw-int8:read", index, self),
        path_(std::move(path)),
        write_(write),
        allow_replace_deleted_(allow_replace_deleted) {}

  void Execute() override {
    try {
      if (write_) {
        Graph* graph = index_->graph();
        graph->saveIndex(path_);  // hnswlib does not check its stream: a full disk shows as a short file
        std::ifstream written(path_, std::ios::binary | std::ios::ate);
        if (!written || static_cast<size_t>(written.tellg()) != graph->indexFileSize()) throw std::runtime_error("index file was not written in full");
        return;
      }
      Int8CosineSpace* space = index_->space();
      loaded_ = std::make_unique<Graph>(space, path_, false, 0, allow_replace_deleted_);
      // hnswlib's file does not record the element type: reject a file written for another one.
      if (loaded_->size_data_per_element_ != loaded_->size_links_level0_ + space->get_data_size() + sizeof(hnswlib::labeltype))
        throw std::runtime_error("index file holds vectors of another type or dimension");
    } catch (const std::exception& error) {
      SetError(error.what());
    }
  }

  void OnOK() override {
    index_->busy() = false;
    if (loaded_) index_->Adopt(std::move(loaded_));
    deferred_.Resolve(Env().Undefined());
  }

  void OnError(const Napi::Error& error) override {
    index_->busy() = false;
    IndexWork::OnError(error);
  }

 private:
  std::string path_;
  bool write_;
  bool allow_replace_deleted_;
  std::unique_ptr<Graph> loaded_;
};

Napi::Value Index::QueueFileWork(const Napi::CallbackInfo& info, bool write, bool allow_replace_deleted) {
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(info.Env(), "path must be a string");
  if (write) Ready(info.Env());
  if (busy_.exchange(true)) throw Napi::Error::New(info.Env(), kBusy);
  return (new FileWork(info.Env(), this, info.This().As<Napi::Object>(), info[0].As<Napi::String>(), write, allow_replace_deleted))->Start();
}

// One search on libuv's pool, under a shared hold of the index's lock (see Index::searches).
class SearchWork : public IndexWork {
 public:
  SearchWork(Napi::Env env, Index* index, Napi::Object self, SearchRequest request)
      : IndexWork(env, "hnsw-int8:search", index, self), request_(std::move(request)) {}

  void Execute() override {
    std::shared_lock<std::shared_mutex> searching(index_->searches());
    try {
      found_ = index_->Find(request_);
    } catch (const std::exception& error) {
      SetError(error.what());
    }
  }

  void OnOK() override { deferred_.Resolve(Index::Results(Env(), found_)); }

 private:
  SearchRequest request_;
  Found found_;
};

Napi::Value Index::SearchKnnAsync(const Napi::CallbackInfo& info) {
  return (new SearchWork(info.Env(), this, info.This().As<Napi::Object>(), Request(info)))->Start();
}

// Soft term matching's scoring (plugins/retrieval/soft-match.ts), here because it is the one loop of a search that
// multiplies thousands of vectors: each of the question's terms against each distinct word of the candidate chunks
// (~6,600 words × 8 terms × 128 dimensions a search took ~25 ms in JavaScript), then each chunk's best match per
// term. Arguments: the terms' vectors (t × dim); the word-vector table's rows (any number × dim, int8, each row's
// components × its scale: a quarter of float32's memory to read, the words' rows lying anywhere in it) and scales; the
// dimension; per word its row (-1: no vector); the terms' weights (t); each term's own word among the words or -1 (it
// meets itself at 1); the chunks' words one after another and where each chunk's end. Returns each chunk's
// Σ weight × best / Σ weight, best being the term's largest similarity (at least 0) with one of the chunk's words.
template <typename Element, napi_typedarray_type kType>
Napi::TypedArrayOf<Element> TypedArgument(const Napi::CallbackInfo& info, size_t at, const char* name) {
  if (info.Length() <= at || !info[at].IsTypedArray() || info[at].As<Napi::TypedArray>().TypedArrayType() != kType)
    throw Napi::TypeError::New(info.Env(), std::string(name) + " has the wrong type");
  return info[at].As<Napi::TypedArrayOf<Element>>();
}

// One word against every term: out[t] = max(0, word · term t). Eight running sums a dot product, so that the compiler
// vectorises the float sum without reordering one chain (SSE2 / NEON).
void Similarities(const float* word, const float* terms, size_t width, size_t dim, float* out) {
  for (size_t t = 0; t < width; ++t) {
    const float* term = terms + t * dim;
    float sums[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= dim; i += 8)
      for (size_t lane = 0; lane < 8; ++lane) sums[lane] += word[i + lane] * term[i + lane];
    float dot = 0;
    for (; i < dim; ++i) dot += word[i] * term[i];
    for (float sum : sums) dot += sum;
    out[t] = std::max(0.0f, dot);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2,fma"))) float HorizontalSum(__m256 sum) {
  __m128 lanes = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
  lanes = _mm_add_ps(lanes, _mm_movehl_ps(lanes, lanes));
  lanes = _mm_add_ss(lanes, _mm_shuffle_ps(lanes, lanes, 0x55));
  return _mm_cvtss_f32(lanes);
}

// The same with AVX2 and FMA where the CPU has them, straight from the int8 row: eight terms at once (`terms` holds
// `blocks` × 8 rows, zero rows past the last term), each 8-component slice of the word widened to floats once for all
// eight and each term's sum in its own register. Sums in another order than Similarities: the last bits may differ,
// not the ranking. Dimensions not a multiple of 8 finish in scalar.
__attribute__((target("avx2,fma"))) void SimilaritiesAvx2(const int8_t* row, float scale, const float* terms, size_t blocks, size_t dim, float* out) {
  const size_t whole = dim & ~size_t(7);
  for (size_t block = 0; block < blocks; ++block) {
    const float* base = terms + block * 8 * dim;
    __m256 sums[8];
#pragma GCC unroll 8
    for (int t = 0; t < 8; ++t) sums[t] = _mm256_setzero_ps();
    for (size_t i = 0; i < whole; i += 8) {
      const __m256 slice = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + i))));
#pragma GCC unroll 8
      for (int t = 0; t < 8; ++t) sums[t] = _mm256_fmadd_ps(slice, _mm256_loadu_ps(base + t * dim + i), sums[t]);
    }
    for (int t = 0; t < 8; ++t) {
      float dot = HorizontalSum(sums[t]);
      for (size_t i = whole; i < dim; ++i) dot += static_cast<float>(row[i]) * base[t * dim + i];
      out[block * 8 + t] = std::max(0.0f, dot * scale);
    }
  }
}

// Read once, on the first call (not while the addon is being loaded, before the CPU's features are known).
// HEARTH_PORTABLE_KERNEL=1 keeps the portable loop (the tests compare the two on one box; an ARM box runs only it).
bool HasAvx2() {
  static const bool avx2 = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) &&
                           std::getenv("HEARTH_PORTABLE_KERNEL") == nullptr;
  return avx2;
}
#else
bool HasAvx2() { return false; }
void SimilaritiesAvx2(const int8_t*, float, const float*, size_t, size_t, float*) {}
#endif

Napi::Value SoftMatchScores(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  auto terms = TypedArgument<float, napi_float32_array>(info, 0, "terms");
  auto rows = TypedArgument<int8_t, napi_int8_array>(info, 1, "rows");
  auto scales = TypedArgument<float, napi_float32_array>(info, 2, "scales");
  if (info.Length() < 4 || !info[3].IsNumber()) throw Napi::TypeError::New(env, "dimension must be a number");
  const int64_t dimension = info[3].As<Napi::Number>().Int64Value();
  auto word_rows = TypedArgument<int32_t, napi_int32_array>(info, 4, "wordRows");
  auto weights = TypedArgument<double, napi_float64_array>(info, 5, "weights");
  auto term_words = TypedArgument<int32_t, napi_int32_array>(info, 6, "termWords");
  auto chunk_words = TypedArgument<int32_t, napi_int32_array>(info, 7, "chunkWords");
  auto chunk_ends = TypedArgument<int32_t, napi_int32_array>(info, 8, "chunkEnds");
  if (dimension < 1 || terms.ElementLength() % dimension || rows.ElementLength() % dimension)
    throw Napi::RangeError::New(env, "vectors must be whole rows of the dimension");
  const size_t dim = static_cast<size_t>(dimension);
  const size_t width = terms.ElementLength() / dim;
  const int64_t row_count = static_cast<int64_t>(std::min(rows.ElementLength() / dim, scales.ElementLength()));
  const size_t count = word_rows.ElementLength();
  for (size_t w = 0; w < count; ++w)
    if (word_rows[w] < -1 || word_rows[w] >= row_count) throw Napi::RangeError::New(env, "a word's row is out of range");
  if (weights.ElementLength() != width || term_words.ElementLength() != width)
    throw Napi::RangeError::New(env, "weights and termWords need one entry per term");
  for (size_t t = 0; t < width; ++t)
    if (term_words[t] < -1 || term_words[t] >= static_cast<int64_t>(count)) throw Napi::RangeError::New(env, "a term's word is out of range");
  const size_t chunks = chunk_ends.ElementLength();
  int32_t previous = 0;
  for (size_t c = 0; c < chunks; ++c) {
    if (chunk_ends[c] < previous || static_cast<size_t>(chunk_ends[c]) > chunk_words.ElementLength())
      throw Napi::RangeError::New(env, "chunkEnds must rise within chunkWords");
    previous = chunk_ends[c];
  }
  for (size_t i = 0; i < static_cast<size_t>(previous); ++i)
    if (chunk_words[i] < 0 || static_cast<size_t>(chunk_words[i]) >= count) throw Napi::RangeError::New(env, "a chunk's word is out of range");

  // Row w of `similarity`: word w against each term (`stride` values a row: the terms rounded up to eights).
  const size_t blocks = (width + 7) / 8;
  const size_t stride = blocks * 8;
  std::vector<float> padded(stride * dim, 0.0f);
  std::copy(terms.Data(), terms.Data() + width * dim, padded.begin());
  std::vector<float> similarity(count * stride, 0.0f);
  const int8_t* row_data = rows.Data();
  const bool avx2 = HasAvx2();
  std::vector<float> word(dim);
  // The words' rows lie anywhere in the table: each is asked for from memory a few words ahead of its turn.
  constexpr size_t kAhead = 4;
  const auto prefetch = [&](size_t w) {
    if (w >= count || word_rows[w] < 0) return;
    const int8_t* row = row_data + static_cast<size_t>(word_rows[w]) * dim;
    for (size_t at = 0; at < dim; at += 64) __builtin_prefetch(row + at);
  };
  for (size_t w = 0; w < std::min(count, kAhead); ++w) prefetch(w);
  for (size_t w = 0; w < count; ++w) {
    prefetch(w + kAhead);
    if (word_rows[w] < 0) continue;
    const size_t row = static_cast<size_t>(word_rows[w]);
    const int8_t* quantised = row_data + row * dim;
    if (avx2) {
      SimilaritiesAvx2(quantised, scales[row], padded.data(), blocks, dim, similarity.data() + w * stride);
      continue;
    }
    for (size_t i = 0; i < dim; ++i) word[i] = static_cast<float>(quantised[i]) * scales[row];
    Similarities(word.data(), padded.data(), width, dim, similarity.data() + w * stride);
  }
  for (size_t t = 0; t < width; ++t)
    if (term_words[t] >= 0) similarity[static_cast<size_t>(term_words[t]) * stride + t] = 1.0f;

  double total = 0;
  for (size_t t = 0; t < width; ++t) total += weights[t];
  auto scores = Napi::Float64Array::New(env, chunks);
  std::vector<float> best(width);
  size_t start = 0;
  for (size_t c = 0; c < chunks; ++c) {
    std::fill(best.begin(), best.end(), 0.0f);
    const size_t end = static_cast<size_t>(chunk_ends[c]);
    for (size_t i = start; i < end; ++i) {
      const float* row = similarity.data() + static_cast<size_t>(chunk_words[i]) * stride;
      for (size_t t = 0; t < width; ++t) best[t] = std::max(best[t], row[t]);
    }
    double sum = 0;
    for (size_t t = 0; t < width; ++t) sum += weights[t] * best[t];
    scores[c] = total > 0 ? sum / total : 0;
    start = end;
  }
  return scores;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Int8HnswIndex", Index::Define(env));
  exports.Set("softMatchScores", Napi::Function::New(env, SoftMatchScores, "softMatchScores"));
  return exports;
}

}  // namespace

NODE_API_MODULE(hnsw_int8, Init)
