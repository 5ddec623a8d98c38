#include "sim/driver/pd_simulation.h"

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "engine/core/instance_loop.h"
#include "engine/core/pd_coordinator.h"
#include "engine/core/router.h"
#include "run/recorder.h"
#include "sim/backends/simgrid_backend.h"
#include "sim/driver/autoscaler.h"
#include "sim/driver/autoscaler_fleet.h"
#include "sim/driver/executor_factory.h"
#include "sim/driver/run_frame.h"
#include "sim/driver/simulation.h"
#include "sim/simgrid/link_meter.h"
#include "sim/simgrid/sim_clock.h"
#include "sim/simgrid/simgrid_adapter.h"
#include "sim/simgrid/simgrid_network.h"
#include "sim/simgrid/simgrid_platform.h"
#include "traces/request_row.h"

namespace tokenline {

namespace {

class PdDriver;

// trace.json, autoscaled: each instance's lifecycle spans (cold start, draining) on a thread of its own; the
// pools' instance counts on a process of their own (as sim/driver/simulation.cpp's).
constexpr int kLifecycleTid = 100000;
constexpr int kFleetTracePid = 1000001;

// One instance and what its actor runs the instance loop with: its executor, its clock, and itself as the
// loop's observer, whose prefill or decode side the driver supplies.
struct PdSlot final : StepObserver {
  PdSlot(PdDriver& owner, int32_t slot_index, bool is_prefill, const InstanceConfig& config,
         std::function<bool()> finished)
      : driver(owner),
        index(slot_index),
        prefill(is_prefill),
        instance(std::make_unique<Instance>(config)),
        clock(std::move(finished)) {}
  bool may_step() override;
  void on_preemption(RequestId id, double now_s, bool retraction) override;
  void before_execute(const StepPlan& plan, double start_s) override;
  void on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
               const InstanceCounters& counters) override;
  void on_records(std::span<const RequestRecord> records) override;

  PdDriver& driver;
  int32_t index;
  bool prefill;                        // a prefill instance (else decode)
  std::unique_ptr<Instance> instance;  // autoscaled: a fresh one (empty caches) each time the slot starts
  std::unique_ptr<SimExecutor> executor;
  SimgridBackend* simgrid = nullptr;  // --backend simgrid: the executor
  SimClock clock;
  int first_gpu = 0;  // --backend simgrid: the instance's first platform GPU
  int rank_gpus = 1;  // GPUs per attention-DP rank (its tp group)
  // Autoscaled pools: the slot's actor waits on `control` while off, starting, or draining with hand-offs
  // still to leave; its cold start's times, its drain's start, and whether it has served before.
  std::unique_ptr<sg::Signal> control;
  double started_s = 0, ready_s = 0, drain_s = 0;
  bool served = false;
};

// An autoscaled pool (prefill or decode): its slots [first, first + size), its log and policy, and its live
// instances' pool-local indexes in slot order (the router's views map to them).
struct ScaledPool {
  const char* name = "";
  int32_t first = 0;
  int32_t size = 0;
  AutoscaleConfig config;
  std::unique_ptr<FleetLog> log;
  std::optional<Autoscaler> policy;
  std::vector<int32_t> live;
};

// One flow of a KV hand-off, metered from its start once the whole hand-off has arrived.
struct KvShard {
  int src = 0;
  int dst = 0;
  double bytes = 0;
  double start_s = 0;
};

// One prefill rank's outgoing link: transfers leave one after another.
struct Sender {
  int32_t prefill_instance = 0;
  PdLinkRate rate;
  double bytes_per_token = 0;
  int layers = 1;
  std::vector<int> src_gpus;  // --backend simgrid: the rank's tp GPUs, each sending its shard
  std::deque<RequestId> queue;
  std::unique_ptr<sg::Signal> signal;
  bool waiting = false;
  double free_since_s = 0;
};

// Wakes a sender's actor if it waits.
void wake(Sender& s) {
  if (!s.waiting) return;
  s.waiting = false;
  s.signal->notify();
}

// A decode-side request: its KV arrives with it, so it needs no prefix identity.
RequestSpec kv_spec(RequestId id, int64_t prompt_tokens, int64_t output_tokens) {
  RequestSpec spec;
  spec.id = id;
  spec.prompt_tokens = prompt_tokens;
  spec.output_tokens = output_tokens;
  return spec;
}

PdPoolShape pool_shape(const SimConfig& config, const PdConfig& pd) {
  const InstanceConfig& p = config.instances.front().config;
  const InstanceConfig& d = config.instances[static_cast<size_t>(pd.prefill_instances)].config;
  return PdPoolShape{.prefill_instances = pd.prefill_instances,
                     .prefill_pages_per_instance = p.kv.total_pages * p.dp_ranks,
                     .decode_instances = pd.decode_instances,
                     .decode_ranks = d.dp_ranks,
                     .decode_pages_per_rank = d.kv.total_pages,
                     .decode_requests_per_rank = d.scheduler.max_running_requests,
                     .page_tokens = d.kv.page_tokens};
}

class PdDriver {
 public:
  PdDriver(const SimConfig& config, const PdConfig& pd, std::span<const CostModel> cms,
           ArrivalSource& source);
  SimResult run();

  // The instance loop's observer calls, by role (PdSlot forwards them).
  bool prefill_may_step(int32_t index) const { return !pd_state_.prefill_blocked(index); }
  void before_prefill_step(int32_t index, const StepPlan& plan, double start_s);
  void drain_prefill(int32_t index, std::span<const RequestRecord> records);
  void drain_decode(int32_t index, std::span<const RequestRecord> records);
  Recorder& recorder() { return frame_.recorder(); }
  void after_step(const PdSlot& slot);

 private:
  void dispatch(RequestSpec&& spec, double sent_s);
  void run_prefill(int32_t index);
  void run_sender(size_t index);
  void finish_request(const RequestRecord& record, int32_t instance, const Recorder::PdHop* hop);
  void grant();
  void deliver(RequestId id, double start_s, double end_s);
  void wake_all();
  bool decode_can_end() const;
  void attach_executor(int32_t index, const CostModel& cm, int& first_gpu);
  void add_senders(int32_t index, const CostModel& cm, int32_t ranks);
  double transfer_on_network(const Sender& s, const PdLive& l);
  void queue_streams(int32_t index, const StepPlan& plan, double start_s);
  void stream_on_network(Sender& s, RequestId first);
  void start_shards(sg::Activities& flows, const Sender& s, const PdLive& l, double bytes,
                    std::vector<KvShard>& shards);
  void meter_shards(const std::vector<KvShard>& shards, double end_s);
  void wait_handed_off(Sender& s, const std::vector<RequestId>& group);
  size_t sender_of(int32_t prefill_instance, int32_t rank) const {
    return sender_base_[static_cast<size_t>(prefill_instance)] + static_cast<size_t>(rank);
  }
  int32_t pick_decode(const RequestSpec& spec);
  bool prefill_finished(int32_t index);
  bool decode_finished(int32_t index) const;
  void end_slot(const PdSlot& slot);
  void fed();

  // Autoscaling (pd_.autoscaled(); docs/autoscaling.md "PD"): pools_[0] scales the prefill instances by
  // their queue, pools_[1] the decode instances by their KV reservations, each by its own policy.
  bool scaled() const { return pd_.autoscaled(); }
  ScaledPool& pool_of(const PdSlot& slot) { return pools_[slot.prefill ? 0 : 1]; }
  int32_t local(const PdSlot& slot) const { return slot.index - pools_[slot.prefill ? 0 : 1].first; }
  int32_t decode_reservations(int32_t decode_instance) const;
  void start_pools();
  void run_scaled(PdSlot& slot);
  void run_autoscaler();
  void sync(ScaledPool& pool, double now_s);
  void start_instance(ScaledPool& pool, double now_s);
  void stop_instance(ScaledPool& pool, double now_s);
  void go_live(PdSlot& slot);
  void retire(PdSlot& slot);
  void set_state(PdSlot& slot, SlotState state, double now_s);
  void note_load(const PdSlot& slot, double now_s);
  void refresh_live(ScaledPool& pool);

  const SimConfig& config_;
  PdConfig pd_;
  std::span<const CostModel> cms_;
  RunFrame frame_;
  Router prefill_router_;
  Router decode_router_;
  PdCoordinator pd_state_;  // hand-off state, decode reservations, record merging
  std::vector<std::unique_ptr<PdSlot>> slots_;
  std::vector<const Instance*> prefill_views_;
  std::vector<const Instance*> decode_views_;
  std::vector<Sender> senders_;
  std::vector<size_t> sender_base_;  // by prefill instance
  std::vector<PdGrant> grants_;
  int32_t prefill_done_ = 0;
  std::vector<int64_t> outstanding_;  // per prefill instance: hand-offs it made, not yet delivered
  std::array<ScaledPool, 2> pools_;
  std::unique_ptr<sg::Signal> autoscaler_signal_;
};

PdDriver::PdDriver(const SimConfig& config, const PdConfig& pd, std::span<const CostModel> cms,
                   ArrivalSource& source)
    : config_(config),
      pd_(pd),
      cms_(cms),
      frame_(config, source, cms[0].hbm_bw,
             [this](RequestSpec&& spec, double sent_s) { dispatch(std::move(spec), sent_s); }),
      prefill_router_(config.router, config.instances.front().config.kv.page_tokens, config.router_weights),
      decode_router_(config.router, config.instances.front().config.kv.page_tokens, config.router_weights),
      pd_state_(pool_shape(config, pd)) {
  int first_gpu = 0;
  for (int32_t i = 0; i < config.instance_count(); ++i) {
    const SimConfig::InstanceSpec& spec = config.instances[static_cast<size_t>(i)];
    const bool prefill = i < pd.prefill_instances;
    std::function<bool()> finished;
    if (prefill) {
      finished = [this, i] { return prefill_finished(i); };
    } else {
      finished = [this, i] { return decode_finished(i); };
    }
    slots_.push_back(std::make_unique<PdSlot>(*this, i, prefill, spec.config, std::move(finished)));
    slots_.back()->rank_gpus = cms[static_cast<size_t>(i)].parallel.gpus() / spec.config.dp_ranks;
    attach_executor(i, cms[static_cast<size_t>(i)], first_gpu);
    (prefill ? prefill_views_ : decode_views_).push_back(slots_.back()->instance.get());
    frame_.recorder().describe_instance(i, spec.parallel_name, spec.config.dp_ranks,
                                        spec.config.kv.total_pages);
    frame_.recorder().set_role(i, spec.config.scheduler.role);
    if (prefill) add_senders(i, cms[static_cast<size_t>(i)], spec.config.dp_ranks);
  }
  outstanding_.assign(static_cast<size_t>(pd.prefill_instances), 0);
  if (scaled()) start_pools();
}

// A prefill instance's loop ends once it is idle and the feed has ended (and its waiting hand-offs no longer
// hold its pool), or, draining, once it is idle and every hand-off it made has been delivered.
bool PdDriver::prefill_finished(int32_t index) {
  if (slots_[static_cast<size_t>(index)]->instance->has_work()) return false;
  if (scaled() && pools_[0].log->state(index) == SlotState::kDraining)
    return outstanding_[static_cast<size_t>(index)] == 0;
  return !pd_state_.prefill_blocked(index) && frame_.feeder().done();
}

// A decode instance's loop ends once it is idle and nothing can come to any decode instance any more, or,
// draining, once it is idle and no reservation on it is still in transfer.
bool PdDriver::decode_finished(int32_t index) const {
  if (slots_[static_cast<size_t>(index)]->instance->has_work()) return false;
  if (decode_can_end()) return true;
  const int32_t k = index - pd_.prefill_instances;
  return scaled() && pools_[1].log->state(k) == SlotState::kDraining && decode_reservations(k) == 0;
}

int32_t PdDriver::decode_reservations(int32_t decode_instance) const {
  const int32_t ranks =
      config_.instances[static_cast<size_t>(pd_.prefill_instances + decode_instance)].config.dp_ranks;
  int32_t n = 0;
  for (int32_t r = 0; r < ranks; ++r) n += pd_state_.handoff().reserved_requests(decode_instance, r);
  return n;
}

// The router's pick among the decode instances it sees (autoscaled: the live ones), as a pool index.
int32_t PdDriver::pick_decode(const RequestSpec& spec) {
  const int32_t picked = decode_router_.pick(decode_views_, spec);
  return scaled() ? pools_[1].live[static_cast<size_t>(picked)] : picked;
}

// One sender per rank of prefill instance `index`; with --backend simgrid, each sends from its tp GPUs.
void PdDriver::add_senders(int32_t index, const CostModel& cm, int32_t ranks) {
  sender_base_.push_back(senders_.size());
  const PdSlot& slot = *slots_[static_cast<size_t>(index)];
  const PdTransfer per_token = pd_transfer(cm, 1);
  for (int32_t r = 0; r < ranks; ++r) {
    Sender s;
    s.prefill_instance = index;
    s.rate = pd_link_rate(pd_.link, cm, cm.parallel.tp);
    s.bytes_per_token = per_token.total_bytes();
    s.layers = cm.model.layers;
    for (int g = 0; g < slot.rank_gpus && frame_.platform(); ++g)
      s.src_gpus.push_back(slot.first_gpu + r * slot.rank_gpus + g);
    senders_.push_back(std::move(s));
  }
}

// With --backend simgrid, instances take consecutive GPUs of the platform: the prefill ones first, then
// the decode ones.
void PdDriver::attach_executor(int32_t index, const CostModel& cm, int& first_gpu) {
  PdSlot& slot = *slots_[static_cast<size_t>(index)];
  slot.first_gpu = first_gpu;
  slot.executor = make_executor(config_, cm, index, frame_.platform(), frame_.link_meter(), first_gpu);
  if (frame_.platform()) slot.simgrid = static_cast<SimgridBackend*>(slot.executor.get());
}

// The KV as network flows: each tp GPU of the prefill rank sends its shard to a GPU of the decode rank,
// all at once, over the platform's routes (sharing links with the instances' collectives). Returns the end.
double PdDriver::transfer_on_network(const Sender& s, const PdLive& l) {
  std::vector<KvShard> shards;
  {
    sg::Activities flows;
    start_shards(flows, s, l, l.transfer_bytes, shards);
    flows.wait_all();
  }
  meter_shards(shards, sg::now_s());
  return sg::now_s();
}

// --backend simgrid --pd-transfer layer: the requests whose last chunk runs in the step starting now join the
// hand-off queue at once (not after the step), so a granted one can stream each layer's KV as the step
// writes it. The step is priced now; its layers are taken to end at equal intervals of that price.
void PdDriver::queue_streams(int32_t index, const StepPlan& plan, double start_s) {
  PdSlot& slot = *slots_[static_cast<size_t>(index)];
  bool queued = false;
  double layer_s = 0;
  for (const Batch& b : plan.batches.ranks) {
    for (const BatchEntry& e : b.entries) {
      if (e.phase != Phase::kPrefill || !e.last_chunk) continue;
      if (!queued)
        layer_s = slot.simgrid->price_ahead(plan.batches).total_s /
                  static_cast<double>(cms_[static_cast<size_t>(index)].model.layers);
      queued = true;
      PdLive& l = pd_state_.live(e.id);
      l.prefill_rank = b.rank;
      l.streamed = true;
      l.stream_start_s = start_s;
      l.stream_layer_s = layer_s;
      pd_state_.enqueue(e.id, pick_decode(kv_spec(e.id, l.prompt_tokens, l.output_tokens)));
    }
  }
  if (queued) grant();
}

// Starts one flow per tp GPU of the sender to the granted decode rank, each with its share of `bytes`,
// and notes them in `shards` for the meter.
void PdDriver::start_shards(sg::Activities& flows, const Sender& s, const PdLive& l, double bytes,
                            std::vector<KvShard>& shards) {
  const PdSlot& d = *slots_[static_cast<size_t>(pd_.prefill_instances + l.grant.decode_instance)];
  const int dst_first = d.first_gpu + l.grant.decode_rank * d.rank_gpus;
  const double shard_bytes = bytes / static_cast<double>(s.src_gpus.size());
  for (size_t k = 0; k < s.src_gpus.size(); ++k) {
    const int dst = dst_first + static_cast<int>(k) % d.rank_gpus;
    flows.transfer(s.src_gpus[k], dst, shard_bytes);
    shards.push_back({s.src_gpus[k], dst, shard_bytes, sg::now_s()});
  }
}

// Each shard's bytes on every link of its route, spread over [its start, end_s].
void PdDriver::meter_shards(const std::vector<KvShard>& shards, double end_s) {
  for (const KvShard& p : shards) {
    for (const sg::PlatformHop& h :
         frame_.platform()->routes[static_cast<size_t>(p.src)][static_cast<size_t>(p.dst)])
      frame_.link_meter()->add(h.link * 2 + (h.up ? 0 : 1), p.start_s, end_s, p.bytes);
  }
}

// Blocks sender `s` until every request of `group` has left its prefill instance (drain_prefill wakes it).
void PdDriver::wait_handed_off(Sender& s, const std::vector<RequestId>& group) {
  for (RequestId id : group) {
    while (!pd_state_.live(id).handed_off) {
      s.waiting = true;
      s.signal->wait();
    }
  }
}

// The layer stream of the requests queued at the front of `s` from one prefill step: layer k of each leaves
// when the step's k-th layer ends (all at once for layers already past when the grant came), the last one
// not before the step has really ended. Delivers them all when every flow has arrived.
void PdDriver::stream_on_network(Sender& s, RequestId first) {
  std::vector<RequestId> group{first};
  const PdLive& head = pd_state_.live(first);
  while (!s.queue.empty() && pd_state_.live(s.queue.front()).streamed &&
         pd_state_.live(s.queue.front()).stream_start_s == head.stream_start_s) {
    group.push_back(s.queue.front());
    s.queue.pop_front();
  }
  const double popped_s = sg::now_s();
  for (RequestId id : group) {
    PdLive& l = pd_state_.live(id);
    l.transfer_bytes = s.bytes_per_token * double(l.prompt_tokens);
  }
  std::vector<KvShard> shards;
  sg::Activities flows;
  for (int k = 0; k < s.layers; ++k) {
    if (k == s.layers - 1) wait_handed_off(s, group);
    const double due_s = head.stream_start_s + (k + 1) * head.stream_layer_s;
    if (due_s > sg::now_s()) sg::sleep_until(due_s);
    for (RequestId id : group) {
      const PdLive& l = pd_state_.live(id);
      start_shards(flows, s, l, l.transfer_bytes / s.layers, shards);
    }
  }
  flows.wait_all();
  meter_shards(shards, sg::now_s());
  double posting_s = 0;  // the group's descriptors, posted one request after another (PdConfig)
  for (RequestId id : group) posting_s += pd_.handoff_per_token_s * double(pd_state_.live(id).prompt_tokens);
  if (posting_s > 0) sg::sleep_until(sg::now_s() + posting_s);
  const double end = sg::now_s();
  s.free_since_s = end;
  for (RequestId id : group) deliver(id, std::max(popped_s, pd_state_.live(id).handoff_s), end);
}

void PdDriver::wake_all() {
  for (auto& slot : slots_) slot->clock.wake();
  for (Sender& s : senders_) wake(s);
  frame_.feeder().wake();
}

// The request reaches the prefill instances now; its record's arrival is the client's send time.
void PdDriver::dispatch(RequestSpec&& spec, double sent_s) {
  const int32_t picked = prefill_router_.pick(prefill_views_, spec);
  const int32_t index = scaled() ? pools_[0].live[static_cast<size_t>(picked)] : picked;
  frame_.recorder().on_arrival(index, spec.id, sent_s);
  const bool prefill_fits =
      slots_[static_cast<size_t>(index)]->instance->rank(0).validate(spec, false) == RejectReason::kNone;
  if (const std::optional<RequestRecord> rejected = pd_state_.arrive(spec, index, prefill_fits, sent_s)) {
    finish_request(*rejected, index, nullptr);
    return;
  }
  slots_[static_cast<size_t>(index)]->instance->add_request(std::move(spec), sent_s);
  if (scaled()) note_load(*slots_[static_cast<size_t>(index)], sg::now_s());
  wake_all();
}

void PdDriver::finish_request(const RequestRecord& record, int32_t instance, const Recorder::PdHop* hop) {
  if (hop != nullptr) {
    frame_.recorder().on_record(record, instance, *hop);
  } else {
    frame_.recorder().on_record(record, instance);
  }
  pd_state_.forget(record.id);
  if (scaled() && record.status == RequestStatus::kFinished) {
    // As metrics.json's goodput (and sim/driver/simulation.cpp): the client's first token.
    const double first_s = record.first_token_s + config_.feed.first_token_latency_s;
    const double finish_s = std::max(record.finish_s, first_s);
    const bool ttft_ok = config_.slo.ttft_s <= 0 || first_s - record.arrival_s <= config_.slo.ttft_s;
    const bool tpot_ok = config_.slo.tpot_s <= 0 ||
                         request_tpot_s(first_s, finish_s, record.generated_tokens) <= config_.slo.tpot_s;
    pools_[1].log->on_finished(finish_s, ttft_ok && tpot_ok);
  }
  frame_.feeder().on_finished(std::span(&record, 1));  // the feeder sees it at the next wake_all()
}

// Grants decode pages to waiting hand-offs (the core decides which and where) and queues their KV on the
// prefill rank's sender.
void PdDriver::grant() {
  grants_.clear();
  pd_state_.grant(grants_);
  for (const PdGrant& g : grants_) {
    senders_[sender_of(g.prefill_instance, pd_state_.live(g.id).prefill_rank)].queue.push_back(g.id);
    if (scaled())
      note_load(*slots_[static_cast<size_t>(pd_.prefill_instances + g.decode_instance)], sg::now_s());
  }
  if (!grants_.empty()) wake_all();
}

void PdDriver::drain_prefill(int32_t index, std::span<const RequestRecord> records) {
  bool handed = false, streamed = false;
  for (const RequestRecord& r : records) {
    if (r.status != RequestStatus::kHandedOff) {  // rejected by the prefill instance
      finish_request(r, index, nullptr);
      frame_.feeder().wake();  // closed loop: its slot is free, and no hand-off may follow to wake the feeder
      continue;
    }
    frame_.recorder().on_handoff(r, index);
    ++outstanding_[static_cast<size_t>(index)];
    PdLive& l = pd_state_.handed_off(r);
    if (l.streamed) {  // queued when its last step started (queue_streams): its sender waits for this
      l.handed_off = true;
      l.handoff_s = sg::now_s();
      streamed = true;
      continue;
    }
    pd_state_.enqueue(r.id, pick_decode(kv_spec(r.id, r.prompt_tokens, r.output_tokens)));
    handed = true;
  }
  if (handed) grant();
  if (streamed) wake_all();
}

void PdDriver::drain_decode(int32_t index, std::span<const RequestRecord> records) {
  for (const RequestRecord& r : records) {
    const PdLive& l = pd_state_.live(r.id);
    const RequestRecord merged = pd_state_.merge_decode_record(r);
    const Recorder::PdHop hop{
        .decode_instance = index, .transfer_bytes = l.transfer_bytes, .transfer_s = l.transfer_s};
    finish_request(merged, l.prefill_instance, &hop);
  }
  if (scaled()) note_load(*slots_[static_cast<size_t>(index)], sg::now_s());
  grant();
  wake_all();
}

void PdDriver::deliver(RequestId id, double start_s, double end_s) {
  pd_state_.delivered(id, end_s - start_s);
  const PdLive& l = pd_state_.live(id);
  --outstanding_[static_cast<size_t>(l.prefill_instance)];
  frame_.recorder().on_kv_transfer(id, l.prefill_instance, l.grant.decode_instance, start_s, end_s,
                                   l.transfer_bytes);
  const int32_t index = pd_.prefill_instances + l.grant.decode_instance;
  slots_[static_cast<size_t>(index)]->instance->add_request_with_kv(
      kv_spec(id, l.prompt_tokens, l.output_tokens), end_s, l.grant.decode_rank);
  wake_all();
}

void PdDriver::run_sender(size_t index) {
  Sender& s = senders_[index];
  while (true) {
    if (s.queue.empty()) {
      if (prefill_done_ == pd_.prefill_instances && pd_state_.waiting() == 0) return;
      s.waiting = true;
      s.signal->wait();
      continue;
    }
    const RequestId id = s.queue.front();
    s.queue.pop_front();
    PdLive& l = pd_state_.live(id);
    if (frame_.platform() && l.streamed) {
      stream_on_network(s, id);
      continue;
    }
    l.transfer_bytes = s.bytes_per_token * double(l.prompt_tokens);
    const double start = sg::now_s();
    const double posting_s = pd_.handoff_per_token_s * double(l.prompt_tokens);
    if (frame_.platform()) {
      if (posting_s > 0) sg::sleep_until(start + posting_s);
      const double end = transfer_on_network(s, l);
      s.free_since_s = end;
      deliver(id, start, end);
      continue;
    }
    double end = start + posting_s + s.rate.time_s(l.transfer_bytes);
    if (pd_.mode == PdTransferMode::kLayerStream) {
      // Layers left while the prompt was prefilled (if the link was free then); the last layer's share
      // goes after the last chunk.
      const double wire_s = l.transfer_bytes / s.rate.bytes_per_s;
      const double window = std::max(l.first_chunk_start_s, s.free_since_s);
      end = std::max(start + wire_s / s.layers, window + wire_s) + s.rate.latency_s + posting_s;
    }
    sg::sleep_until(end);
    s.free_since_s = end;
    deliver(id, start, end);
  }
}

// Before a prefill step executes: each request's first chunk start (the analytic layer stream's window),
// and with --backend simgrid --pd-transfer layer the requests whose last chunk this step runs.
void PdDriver::before_prefill_step(int32_t index, const StepPlan& plan, double start_s) {
  for (const Batch& b : plan.batches.ranks) {
    for (const BatchEntry& e : b.entries) {
      PdLive& l = pd_state_.live(e.id);
      if (l.first_chunk_start_s < 0) l.first_chunk_start_s = start_s;
    }
  }
  if (slots_[static_cast<size_t>(index)]->simgrid && pd_.mode == PdTransferMode::kLayerStream)
    queue_streams(index, plan, start_s);
}

void PdDriver::run_prefill(int32_t index) {
  PdSlot& slot = *slots_[static_cast<size_t>(index)];
  run_instance_loop(*slot.instance, *slot.executor, slot.clock, slot);
  end_slot(slot);
}

// A slot's actor has returned for good: a prefill one counts as done (the senders and decode instances
// may then end).
void PdDriver::end_slot(const PdSlot& slot) {
  if (!slot.prefill) return;
  ++prefill_done_;
  wake_all();
}

bool PdDriver::decode_can_end() const {
  return prefill_done_ == pd_.prefill_instances && pd_state_.waiting() == 0 && pd_state_.in_transfer() == 0;
}

bool PdSlot::may_step() {
  return !prefill || driver.prefill_may_step(index);
}

void PdSlot::on_preemption(RequestId id, double now_s, bool retraction) {
  driver.recorder().on_preemption(index, id, now_s, retraction);
}

void PdSlot::before_execute(const StepPlan& plan, double start_s) {
  if (prefill) driver.before_prefill_step(index, plan, start_s);
}

void PdSlot::on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
                     const InstanceCounters& counters) {
  driver.recorder().on_step(index, plan, outcome, executor->last_breakdown(), start_s, counters);
  driver.after_step(*this);
}

void PdDriver::after_step(const PdSlot& slot) {
  if (scaled()) note_load(slot, sg::now_s());
}

void PdSlot::on_records(std::span<const RequestRecord> records) {
  if (prefill) {
    driver.drain_prefill(index, records);
  } else {
    driver.drain_decode(index, records);
  }
}

SimResult PdDriver::run() {
  std::unique_ptr<sg::SimEngine> engine = frame_.engine([this] { fed(); });
  for (Sender& s : senders_) s.signal = std::make_unique<sg::Signal>();
  for (int32_t i = 0; i < config_.instance_count(); ++i) {
    PdSlot* slot = slots_[static_cast<size_t>(i)].get();
    if (scaled()) {
      engine->add_actor((slot->prefill ? "prefill-" : "decode-") + std::to_string(i),
                        [this, slot] { run_scaled(*slot); });
    } else if (i < pd_.prefill_instances) {
      engine->add_actor("prefill-" + std::to_string(i), [this, i] { run_prefill(i); });
    } else {
      engine->add_actor("decode-" + std::to_string(i),
                        [slot] { run_instance_loop(*slot->instance, *slot->executor, slot->clock, *slot); });
    }
  }
  for (size_t s = 0; s < senders_.size(); ++s)
    engine->add_actor("kv-sender-" + std::to_string(s), [this, s] { run_sender(s); });
  if (!scaled()) return frame_.run(*engine, std::string(to_string(config_.backend)));
  engine->add_actor("autoscaler", [this] { run_autoscaler(); });
  return frame_.run(*engine, std::string(to_string(config_.backend)), pools_[0].log.get(),
                    pools_[1].log.get());
}

// The feeder has sent its last request: idle instances may end; autoscaled, the policy stops, slots that
// are off end and cold starts under way are called off.
void PdDriver::fed() {
  wake_all();
  if (!scaled()) return;
  if (autoscaler_signal_) autoscaler_signal_->notify();
  for (auto& slot : slots_) {
    if (slot->control) slot->control->notify();
  }
}

// ---- autoscaling -------------------------------------------------------------------------------------

void PdDriver::start_pools() {
  pools_[0].name = "prefill";
  pools_[0].first = 0;
  pools_[0].size = pd_.prefill_instances;
  pools_[0].config = pd_.prefill_scale;
  pools_[1].name = "decode";
  pools_[1].first = pd_.prefill_instances;
  pools_[1].size = pd_.decode_instances;
  pools_[1].config = pd_.decode_scale;
  ChromeTraceWriter& trace = frame_.recorder().trace();
  if (trace.enabled()) trace.process_name(kFleetTracePid, "fleet");
  for (ScaledPool& pool : pools_) {
    std::vector<int32_t> gpus;
    for (int32_t k = 0; k < pool.size; ++k)
      gpus.push_back(config_.instances[static_cast<size_t>(pool.first + k)].gpus);
    // The decode pool's log keeps the SLO windows (a request finishes there).
    const bool slo = &pool == &pools_[1] && config_.slo.enabled();
    pool.log = std::make_unique<FleetLog>(pool.config, std::move(gpus), slo);
    pool.policy.emplace(pool.config);
    for (int32_t k = 0; k < pool.size; ++k) {
      PdSlot& slot = *slots_[static_cast<size_t>(pool.first + k)];
      if (trace.enabled()) trace.thread_name(slot.index + 1, kLifecycleTid, "lifecycle");
      if (k < pool.config.initial_instances) {
        set_state(slot, SlotState::kLive, 0.0);  // the starting pools are up before the run
        slot.served = true;
        note_load(slot, 0.0);
      } else if (!slot.prefill) {
        pd_state_.set_decode_open(k, false);
      }
    }
    refresh_live(pool);
  }
}

void PdDriver::set_state(PdSlot& slot, SlotState state, double now_s) {
  ScaledPool& pool = pool_of(slot);
  pool.log->set_state(local(slot), state, now_s);
  if (!slot.prefill) pd_state_.set_decode_open(local(slot), state == SlotState::kLive);
  ChromeTraceWriter& trace = frame_.recorder().trace();
  if (!trace.enabled()) return;
  trace.counter(kFleetTracePid, std::string(pool.name) + " instances", now_s,
                {{"live", pool.log->count(SlotState::kLive)},
                 {"starting", pool.log->count(SlotState::kStarting)},
                 {"draining", pool.log->count(SlotState::kDraining)}});
}

// The pool's metric's inputs from the slot: a prefill instance's waiting and running requests (Dynamo's
// planner scales prefill workers by their queue), a decode instance's requests and the KV pages reserved on
// it for requests granted to it, delivered or in transfer (Dynamo's planner scales decode workers by KV
// utilisation, scheduled + queued KV over the pool's KV), over its pages.
void PdDriver::note_load(const PdSlot& slot, double now_s) {
  ScaledPool& pool = pool_of(slot);
  const int32_t k = local(slot);
  if (pool.log->state(k) == SlotState::kOff || pool.log->state(k) == SlotState::kStarting) return;
  const InstanceCounters c = slot.instance->counters();
  if (slot.prefill) {
    pool.log->on_load(k, now_s, c.waiting, c.running, c.kv.used_pages, c.kv.total_pages);
    return;
  }
  const InstanceConfig& ic = config_.instances[static_cast<size_t>(slot.index)].config;
  int64_t reserved = 0;
  for (int32_t r = 0; r < ic.dp_ranks; ++r) reserved += pd_state_.handoff().reserved_pages(k, r);
  pool.log->on_load(k, now_s, c.waiting, c.running, reserved, ic.kv.total_pages * ic.dp_ranks);
}

void PdDriver::refresh_live(ScaledPool& pool) {
  const bool prefill = &pool == &pools_[0];
  std::vector<const Instance*>& views = prefill ? prefill_views_ : decode_views_;
  pool.live.clear();
  views.clear();
  for (int32_t k = 0; k < pool.size; ++k) {
    if (pool.log->state(k) != SlotState::kLive) continue;
    pool.live.push_back(k);
    views.push_back(slots_[static_cast<size_t>(pool.first + k)]->instance.get());
  }
}

// A slot's actor: off until its pool's policy starts it, then its cold start, then the instance loop while
// it is live and draining; drained, it is off again (and may start again, as a new instance).
void PdDriver::run_scaled(PdSlot& slot) {
  ScaledPool& pool = pool_of(slot);
  const int32_t k = local(slot);
  slot.control = std::make_unique<sg::Signal>();
  while (true) {
    if (pool.log->state(k) == SlotState::kOff && frame_.feeder().done()) break;
    if (pool.log->state(k) == SlotState::kOff) {
      slot.control->wait();
      continue;
    }
    while (pool.log->state(k) == SlotState::kStarting && sg::now_s() < slot.ready_s &&
           !frame_.feeder().done()) {
      slot.control->wait_until(slot.ready_s);
    }
    if (pool.log->state(k) == SlotState::kOff) continue;  // called off by a scale-down
    if (pool.log->state(k) == SlotState::kStarting) {
      if (sg::now_s() < slot.ready_s) {  // the feed ended first: no request will come to it
        frame_.recorder().trace().complete(slot.index + 1, kLifecycleTid, "cold_start (called off)",
                                           slot.started_s, sg::now_s() - slot.started_s);
        set_state(slot, SlotState::kOff, sg::now_s());
        break;
      }
      go_live(slot);
    }
    run_instance_loop(*slot.instance, *slot.executor, slot.clock, slot);
    if (pool.log->state(k) != SlotState::kDraining || slot.instance->has_work()) break;
    retire(slot);
  }
  end_slot(slot);
}

void PdDriver::go_live(PdSlot& slot) {
  if (slot.served) {  // a new instance in a slot used before: empty caches and pools
    slot.instance = std::make_unique<Instance>(config_.instances[static_cast<size_t>(slot.index)].config);
  }
  slot.served = true;
  const AutoscaleConfig& a = pool_of(slot).config;
  ChromeTraceWriter& trace = frame_.recorder().trace();
  const int pid = slot.index + 1;
  trace.complete(pid, kLifecycleTid, "cold_start", slot.started_s, slot.ready_s - slot.started_s);
  trace.complete(pid, kLifecycleTid, "load_weights", slot.started_s, a.weights_load_s);
  trace.complete(pid, kLifecycleTid, "engine_start", slot.started_s + a.weights_load_s, a.engine_start_s);
  set_state(slot, SlotState::kLive, sg::now_s());
  note_load(slot, sg::now_s());
  refresh_live(pool_of(slot));
  if (!slot.prefill) grant();  // hand-offs waiting for pages may fit the new decode instance
}

// As the co-located driver's: a drained instance holds no page anyone needs, or the run fails.
void PdDriver::retire(PdSlot& slot) {
  frame_.recorder().trace().complete(slot.index + 1, kLifecycleTid, "draining", slot.drain_s,
                                     sg::now_s() - slot.drain_s);
  const InstanceCounters c = slot.instance->counters();
  pool_of(slot).log->on_drain_end(local(slot), sg::now_s(), c.kv.used_pages);
  std::string why;
  if (c.kv.used_pages != 0 || !slot.instance->check(&why))
    throw std::runtime_error(std::string(pool_of(slot).name) + " instance " + std::to_string(slot.index) +
                             " drained holding " + std::to_string(c.kv.used_pages) +
                             " KV pages someone needs" + (why.empty() ? "" : ": " + why));
  set_state(slot, SlotState::kOff, sg::now_s());
}

// The policies' actor: both pools synced every interval (prefill first) until the feed ends.
void PdDriver::run_autoscaler() {
  autoscaler_signal_ = std::make_unique<sg::Signal>();
  const double interval_s = pools_[0].config.interval_s;
  double next_s = interval_s;
  while (!frame_.feeder().done()) {
    if (sg::now_s() < next_s) {
      autoscaler_signal_->wait_until(next_s);
      continue;
    }
    for (ScaledPool& pool : pools_) sync(pool, next_s);
    next_s += interval_s;
  }
}

// As the co-located driver's sync (sim/driver/simulation.cpp): the metric, averaged over the instances that
// served, is rescaled to those counted (live and starting).
void PdDriver::sync(ScaledPool& pool, double now_s) {
  std::optional<double> metric = pool.log->sync(now_s);
  int32_t current = pool.log->count(SlotState::kLive) + pool.log->count(SlotState::kStarting);
  const int32_t serving = pool.log->count(SlotState::kLive) + pool.log->count(SlotState::kDraining);
  if (metric && current > 0) metric = *metric * serving / current;
  const int32_t desired = pool.policy->recommend(now_s, current, metric);
  pool.log->on_decision(now_s, current, desired, metric);
  for (; current < desired && pool.log->count(SlotState::kOff) > 0; ++current) start_instance(pool, now_s);
  for (; current > desired; --current) stop_instance(pool, now_s);
}

// The pool's lowest off slot starts its cold start.
void PdDriver::start_instance(ScaledPool& pool, double now_s) {
  for (int32_t k = 0; k < pool.size; ++k) {
    if (pool.log->state(k) != SlotState::kOff) continue;
    PdSlot& slot = *slots_[static_cast<size_t>(pool.first + k)];
    slot.started_s = now_s;
    slot.ready_s = now_s + pool.config.cold_start_s();
    set_state(slot, SlotState::kStarting, now_s);
    if (slot.control) slot.control->notify();
    return;
  }
}

// A scale-down calls off the pool's newest cold start if there is one, else drains its highest live slot:
// it takes no new request (a decode instance no new grant) and finishes its own.
void PdDriver::stop_instance(ScaledPool& pool, double now_s) {
  for (int32_t k = pool.size - 1; k >= 0; --k) {
    if (pool.log->state(k) != SlotState::kStarting) continue;
    PdSlot& slot = *slots_[static_cast<size_t>(pool.first + k)];
    frame_.recorder().trace().complete(slot.index + 1, kLifecycleTid, "cold_start (called off)",
                                       slot.started_s, now_s - slot.started_s);
    set_state(slot, SlotState::kOff, now_s);
    if (slot.control) slot.control->notify();
    return;
  }
  for (int32_t k = pool.size - 1; k >= 0; --k) {
    if (pool.log->state(k) != SlotState::kLive) continue;
    PdSlot& slot = *slots_[static_cast<size_t>(pool.first + k)];
    slot.drain_s = now_s;
    const InstanceCounters c = slot.instance->counters();
    pool.log->on_drain_start(k, now_s, c.waiting + c.running, c.kv.used_pages, c.kv.cached_pages);
    set_state(slot, SlotState::kDraining, now_s);
    refresh_live(pool);
    slot.clock.wake();  // an idle loop looks again and ends
    return;
  }
}

}  // namespace

SimResult run_pd_simulation(const SimConfig& config, const PdConfig& pd,
                            std::span<const CostModel> cost_models, ArrivalSource& source) {
  PdDriver driver(config, pd, cost_models, source);
  return driver.run();
}

}  // namespace tokenline
