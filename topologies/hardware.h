// Hardware: one accelerator model and the links around it, as read from topologies/hardware/<name>.json.
// Plain data, validated by the loader (hardware_loader.h); every field is in SI units (bytes, bytes/s, s,
// FLOP/s). Owned by value; no I/O here, so engine/model can include it cheaply.
#pragma once

#include <string>

namespace tokenline {

enum class Dtype { kFp8, kBf16, kFp16, kFp32, kNvfp4 };

struct Efficiency {
  // Achieved / peak for each op class; 1.0 means "ideal". Sources live in the JSON next to each value.
  double gemm = 1.0;       // dense and grouped GEMMs (compute-bound side of the roofline)
  double attention = 1.0;  // attention / indexer kernels (compute side)
  double hbm = 1.0;        // streaming HBM reads and writes (memory side)
  double nvlink = 1.0;     // collective bus bandwidth achieved vs the ring figure below
  double ib = 1.0;         // network bandwidth achieved vs line rate
};

struct Hardware {
  std::string name;           // "h200"
  double peak_flops_fp8 = 0;  // dense FLOP/s, no sparsity
  double peak_flops_bf16 = 0;
  double peak_flops_fp32 = 0;
  double peak_flops_nvfp4 = 0;  // 0 where the part has no FP4 tensor cores
  double hbm_bytes = 0;         // capacity per GPU, the datasheet's figure (the seed's, --ideal's)
  // Device memory as the driver reports it (nvidia-smi memory.total, torch total_memory), MiB; what a serving
  // engine sizes its pools from. 0: not given, hbm_bytes stands for it.
  double device_mib = 0;
  double hbm_bw = 0;                 // bytes/s per GPU, peak
  double usable_hbm_fraction = 0.9;  // share of HBM a serving engine may use (mem_fraction_static)
  double nvlink_bw = 0;              // bytes/s per GPU per direction (NVLink port, peak)
  double nvlink_ring_bw = 0;         // effective all-reduce ring bandwidth the seed uses (787 GB/s on H200)
  double nvlink_latency_s = 0;       // one hop
  double ib_bw = 0;                  // bytes/s per NIC per direction (400 Gb/s NDR = 50 GB/s)
  double ib_seed_bw = 0;             // the seed's IB column: 200 Gb/s ~= 25 GB/s per direction
  double ib_latency_s = 0;
  int nics_per_gpu = 1;            // IB NICs per GPU (rail-optimized HGX: one ConnectX-7 per GPU)
  int gpus_per_node = 8;           // GPUs in one NVLink domain (HGX board: 8; GB200 NVL72: the rack's 72)
  double collective_launch_s = 0;  // fixed cost per collective (kernel launch + sync), the seed's 3-5 us
  double kernel_launch_s = 0;      // fixed cost per non-collective kernel under CUDA Graph replay
  Efficiency efficiency;           // default factors; --ideal replaces them with 1.0
  // The GPU's link to host DRAM (a host KV tier's loads and stores); 0: not given (no host tier).
  std::string host_link_kind;      // "pcie5-x16", "nvlink-c2c"
  double host_link_bw = 0;         // bytes/s per direction
  double host_link_latency_s = 0;  // per transfer

  // The device memory a serving engine sees: the driver's total where the JSON gives it, else hbm_bytes.
  double device_memory_bytes() const { return device_mib > 0 ? device_mib * 1024.0 * 1024.0 : hbm_bytes; }

  double peak_flops(Dtype d) const {
    switch (d) {
      case Dtype::kFp8:
        return peak_flops_fp8;
      case Dtype::kBf16:
        return peak_flops_bf16;
      case Dtype::kFp16:
        return peak_flops_bf16;
      case Dtype::kFp32:
        return peak_flops_fp32;
      case Dtype::kNvfp4:
        return peak_flops_nvfp4 > 0 ? peak_flops_nvfp4 : peak_flops_fp8;
    }
    return 0;
  }
};

}  // namespace tokenline
