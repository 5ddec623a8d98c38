#include "sim/simgrid/simgrid_network.h"

#include <algorithm>
#include <cassert>
#include <simgrid/s4u.hpp>
#include <vector>

#include "sim/simgrid/simgrid_network_build.h"

namespace tokenline::sg {
namespace s4u = simgrid::s4u;

namespace {

constexpr double kDriverSpeedFlops = 1e9;  // the driver host only runs actors; it never computes

std::vector<s4u::Host*>& gpu_hosts() {
  static std::vector<s4u::Host*> hosts;  // one platform per process (SimGrid's engine is a singleton)
  return hosts;
}

std::vector<s4u::Host*>& dram_hosts() {  // per GPU: the host memory behind its PCIe link (null: none)
  static std::vector<s4u::Host*> hosts;
  return hosts;
}

s4u::Link* make_link(s4u::NetZone* zone, const PlatformLink& l) {
  return zone->create_split_duplex_link(l.name, l.bw_per_direction)->set_latency(l.latency_s)->seal();
}

}  // namespace

s4u::Host* build_network(const PlatformSpec& spec) {
  auto* zone = s4u::create_full_zone(spec.name.empty() ? "cluster" : spec.name);
  std::vector<s4u::Host*>& hosts = gpu_hosts();
  hosts.clear();
  for (const PlatformHost& h : spec.hosts) hosts.push_back(zone->create_host(h.name, h.speed_flops));
  std::vector<s4u::Link*> links;
  for (const PlatformLink& l : spec.links) links.push_back(make_link(zone, l));
  for (size_t s = 0; s < hosts.size(); ++s) {
    auto* hbm = zone->create_link(spec.hosts[s].name + "-hbm", spec.hosts[s].hbm_bw)->set_latency(0)->seal();
    zone->add_route(hosts[s]->get_netpoint(), hosts[s]->get_netpoint(), nullptr, nullptr,
                    {s4u::LinkInRoute(hbm)}, false);
    for (size_t t = 0; t < hosts.size(); ++t) {
      if (s == t) continue;
      std::vector<s4u::LinkInRoute> route;
      for (const PlatformHop& hop : spec.routes[s][t]) {
        route.emplace_back(links[static_cast<size_t>(hop.link)],
                           hop.up ? s4u::LinkInRoute::Direction::UP : s4u::LinkInRoute::Direction::DOWN);
      }
      zone->add_route(hosts[s]->get_netpoint(), hosts[t]->get_netpoint(), nullptr, nullptr, route, false);
    }
  }
  std::vector<s4u::Host*>& dram = dram_hosts();
  dram.assign(hosts.size(), nullptr);
  for (size_t g = 0; g < spec.host_links.size() && g < hosts.size(); ++g) {
    if (spec.host_links[g] < 0) continue;
    s4u::Link* pcie = links[static_cast<size_t>(spec.host_links[g])];
    dram[g] = zone->create_host(spec.hosts[g].name + "-dram", kDriverSpeedFlops);
    zone->add_route(dram[g]->get_netpoint(), hosts[g]->get_netpoint(), nullptr, nullptr,
                    {s4u::LinkInRoute(pcie, s4u::LinkInRoute::Direction::DOWN)}, false);
    zone->add_route(hosts[g]->get_netpoint(), dram[g]->get_netpoint(), nullptr, nullptr,
                    {s4u::LinkInRoute(pcie, s4u::LinkInRoute::Direction::UP)}, false);
  }
  s4u::Host* driver = zone->create_host("driver", kDriverSpeedFlops);
  zone->seal();
  return driver;
}

struct Activities::Impl {
  std::vector<s4u::ActivityPtr> running;
};

Activities::Activities() : impl_(std::make_unique<Impl>()) {}
Activities::~Activities() = default;

void Activities::exec(int host, double flops) {
  if (flops <= 0) return;
  s4u::ExecPtr e = s4u::this_actor::exec_init(flops);
  e->set_host(gpu_hosts()[static_cast<size_t>(host)]);
  impl_->running.push_back(e->start());
}

void Activities::transfer(int src, int dst, double bytes) {
  if (bytes <= 0) return;
  const auto& hosts = gpu_hosts();
  impl_->running.push_back(s4u::Comm::sendto_async(
      hosts[static_cast<size_t>(src)], hosts[static_cast<size_t>(dst)], static_cast<uint64_t>(bytes + 0.5)));
}

void Activities::host_transfer(int gpu, double bytes, bool to_gpu) {
  if (bytes <= 0) return;
  s4u::Host* host = dram_hosts()[static_cast<size_t>(gpu)];
  s4u::Host* dev = gpu_hosts()[static_cast<size_t>(gpu)];
  assert(host != nullptr && "host transfer on a GPU without a host link");
  impl_->running.push_back(
      s4u::Comm::sendto_async(to_gpu ? host : dev, to_gpu ? dev : host, static_cast<uint64_t>(bytes + 0.5)));
}

double Activities::wait_all_finish_s() {
  double last = 0;
  for (s4u::ActivityPtr& a : impl_->running) {
    a->wait();
    last = std::max(last, a->get_finish_time());
  }
  impl_->running.clear();
  return last;
}

void Activities::wait_all() {
  for (s4u::ActivityPtr& a : impl_->running) a->wait();
  impl_->running.clear();
}

void Activities::drop_finished() {
  std::erase_if(impl_->running, [](s4u::ActivityPtr& a) { return a->test(); });
}

bool Activities::empty() const {
  return impl_->running.empty();
}

}  // namespace tokenline::sg
