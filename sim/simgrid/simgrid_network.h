// The network half of the SimGrid seam (with simgrid_adapter.cpp the only code that includes
// <simgrid/s4u.hpp>): builds a PlatformSpec as SimGrid zones, split-duplex links, explicit routes and HBM
// loopbacks, and starts activities on its GPU hosts from inside an actor. Use only inside one SimEngine
// created with that platform.
#pragma once

#include <cstdint>
#include <memory>

#include "sim/simgrid/simgrid_platform.h"

namespace tokenline::sg {

// A set of concurrent activities started by the calling actor; wait_all() blocks it until all are done.
class Activities {
 public:
  Activities();
  ~Activities();
  Activities(const Activities&) = delete;
  Activities& operator=(const Activities&) = delete;
  // Computation of `flops` at the host's speed (shares the GPU with other execs on it).
  void exec(int host, double flops);
  // Bytes from GPU src to GPU dst over the platform route; src == dst crosses that GPU's HBM link.
  void transfer(int src, int dst, double bytes);
  // Bytes between GPU gpu's host memory and the GPU over its PCIe link (PlatformSpec::host_links):
  // to_gpu, a host-tier load; else a store. REQUIRES: the GPU has a host link.
  void host_transfer(int gpu, double bytes, bool to_gpu);
  // wait_all(), returning the virtual time the last of them finished (0 when none ran).
  double wait_all_finish_s();
  void wait_all();
  // Forgets the activities that have finished, without blocking (fire-and-forget flows).
  void drop_finished();
  bool empty() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenline::sg
