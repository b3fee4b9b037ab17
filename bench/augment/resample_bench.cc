// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Times ResampleAffine on nnU-Net's rotated and scaled case (a 205^3 crop -> 128^3 patch,
// rotations of ~0.4 rad about all three axes, scale 0.85) for a list of channel counts, one
// thread, and prints the median CPU milliseconds per call; with --hash, prints a 64-bit FNV-1a
// hash of every output of a set of fixed cases (3D and 2D, with and without labels, elastic
// displacements, a window of a crop, strided views) so two builds can be compared bit for bit.
// A plain main() (not Google Benchmark): bench/README.md section 7 alternates two builds of it.
// With --one-plane every image channel reads channel 0's plane (channel stride 0): the same
// instructions over one channel's input bytes, to tell the gathers' arithmetic from their
// memory traffic.
//
//   patchfeed_resample_bench [--channels 1,2,4,9] [--reps 5] [--labels 0|1] [--one-plane]
//                            [--hash]

#include <time.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "augment/sample_view.h"
#include "augment/spatial/affine_resample.h"

namespace {

using patchfeed::augment::SampleView;
namespace ia = patchfeed::internal_augment;

double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// A smooth pattern plus deterministic noise, different per channel.
void FillImage(std::vector<float>& v, int64_t channels, const std::array<int64_t, 3>& s) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  int64_t k = 0;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t z = 0; z < s[0]; ++z) {
      for (int64_t y = 0; y < s[1]; ++y) {
        for (int64_t x = 0; x < s[2]; ++x, ++k) {
          state = state * 6364136223846793005ull + 1442695040888963407ull;
          const auto noise = static_cast<float>(state >> 40) * 0x1.0p-24f - 0.5f;
          v[static_cast<size_t>(k)] = std::sin(0.05f * static_cast<float>(z + 3 * c)) *
                                          std::cos(0.07f * static_cast<float>(y)) +
                                      0.01f * static_cast<float>(x) + noise;
        }
      }
    }
  }
}

// Labels 0..3 in nested spheres, shifted per channel.
void FillLabels(std::vector<int16_t>& v, int64_t channels, const std::array<int64_t, 3>& s) {
  int64_t k = 0;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t z = 0; z < s[0]; ++z) {
      for (int64_t y = 0; y < s[1]; ++y) {
        for (int64_t x = 0; x < s[2]; ++x, ++k) {
          const double dz = static_cast<double>(z) - 0.45 * static_cast<double>(s[0]) - c;
          const double dy = static_cast<double>(y) - 0.5 * static_cast<double>(s[1]);
          const double dx = static_cast<double>(x) - 0.55 * static_cast<double>(s[2]);
          const double r = std::sqrt(dz * dz + dy * dy + dx * dx) / static_cast<double>(s[0]);
          v[static_cast<size_t>(k)] = static_cast<int16_t>(r < 0.15   ? 3
                                                           : r < 0.25 ? 2
                                                           : r < 0.4  ? 1
                                                                      : 0);
        }
      }
    }
  }
}

// x(i) = A (i - (P - 1)/2) + (S - 1)/2 with A = scale * Rz Ry Rx, as SpatialTransform forms it.
ia::AffineSamplingMap MakeMap(int dims, const std::array<int64_t, 3>& in,
                              const std::array<int64_t, 3>& out, double ax, double ay, double az,
                              double scale) {
  ia::AffineSamplingMap map;
  map.spatial_dims = dims;
  using M = std::array<std::array<double, 3>, 3>;
  auto mul = [](const M& a, const M& b) {
    M r{};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        for (int k = 0; k < 3; ++k) {
          r[i][j] += a[i][k] * b[k][j];
        }
      }
    }
    return r;
  };
  const M rx{{{1, 0, 0}, {0, std::cos(ax), -std::sin(ax)}, {0, std::sin(ax), std::cos(ax)}}};
  const M ry{{{std::cos(ay), 0, std::sin(ay)}, {0, 1, 0}, {-std::sin(ay), 0, std::cos(ay)}}};
  const M rz{{{std::cos(az), -std::sin(az), 0}, {std::sin(az), std::cos(az), 0}, {0, 0, 1}}};
  M a = dims == 3
            ? mul(rz, mul(ry, rx))
            : M{{{std::cos(az), -std::sin(az), 0}, {std::sin(az), std::cos(az), 0}, {0, 0, 1}}};
  for (auto& r : a) {
    for (double& e : r) {
      e *= scale;
    }
  }
  map.matrix = a;
  for (int d = 0; d < dims; ++d) {
    double o = (static_cast<double>(in[d]) - 1.0) / 2.0;
    for (int k = 0; k < dims; ++k) {
      o -= a[d][k] * (static_cast<double>(out[k]) - 1.0) / 2.0;
    }
    map.origin[d] = o;
  }
  return map;
}

uint64_t Fnv1a(const void* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    h = (h ^ b[i]) * 0x100000001b3ull;
  }
  return h;
}

struct Case {
  const char* name;
  int dims;
  std::array<int64_t, 3> in;
  std::array<int64_t, 3> out;
  int64_t channels;
  int64_t seg_channels;
  ia::LabelInterpolation mode;
  int16_t padding;
  double ax, ay, az, scale;
  bool elastic;
  bool window;      // input is a window of a larger crop
  bool transposed;  // image input viewed with its two last axes swapped (non-unit last stride)
};

void RunHashCase(const Case& k) {
  const int dims = k.dims;
  std::array<int64_t, 3> in = k.in, out = k.out;
  if (dims == 2) {
    in[2] = 1;
    out[2] = 1;
  }
  int64_t in_vox = in[0] * in[1] * in[2], out_vox = out[0] * out[1] * out[2];
  std::vector<float> image(static_cast<size_t>(in_vox * std::max<int64_t>(k.channels, 1)));
  FillImage(image, k.channels, in);
  std::vector<int16_t> seg(static_cast<size_t>(in_vox * std::max<int64_t>(k.seg_channels, 1)));
  FillLabels(seg, k.seg_channels, in);
  std::vector<float> image_out(static_cast<size_t>(out_vox * std::max<int64_t>(k.channels, 1)));
  std::vector<int16_t> seg_out(static_cast<size_t>(out_vox * std::max<int64_t>(k.seg_channels, 1)));
  const std::span<const int64_t> in_span(in.data(), static_cast<size_t>(dims));
  const std::span<const int64_t> out_span(out.data(), static_cast<size_t>(dims));
  ia::AffineSamplingMap map = MakeMap(dims, in, out, k.ax, k.ay, k.az, k.scale);
  auto image_in = SampleView<const float>::Contiguous(image.data(), k.channels, in_span);
  auto seg_in = SampleView<const int16_t>::Contiguous(seg.data(), k.seg_channels, in_span);
  if (k.transposed) {
    std::swap(image_in.strides[dims - 2], image_in.strides[dims - 1]);  // a cube: shapes equal
  }
  if (k.window) {
    // The input is the sub-box from `o` of a crop 6 voxels larger per axis (positions in crop
    // coordinates).
    for (int d = 0; d < dims; ++d) {
      map.crop_shape[d] = in[d] + 6;
      map.window_origin[d] = 3;
      map.origin[d] += 3.0;
    }
  }
  std::vector<float> disp;
  if (k.elastic) {
    disp.resize(static_cast<size_t>(dims * out_vox));
    for (size_t i = 0; i < disp.size(); ++i) {
      disp[i] = 1.7f * std::sin(0.013f * static_cast<float>(i));
    }
  }
  auto iout = SampleView<float>::Contiguous(image_out.data(), k.channels, out_span);
  auto sout = SampleView<int16_t>::Contiguous(seg_out.data(), k.seg_channels, out_span);
  ia::ResampleScratch scratch;
  ia::ResampleAffine(map, image_in, iout, seg_in, sout, k.mode, k.padding,
                     k.elastic ? disp.data() : nullptr, scratch);
  std::printf("%-28s image %016llx seg %016llx\n", k.name,
              static_cast<unsigned long long>(
                  Fnv1a(image_out.data(), static_cast<size_t>(out_vox * k.channels) * 4)),
              static_cast<unsigned long long>(
                  Fnv1a(seg_out.data(), static_cast<size_t>(out_vox * k.seg_channels) * 2)));
}

void RunHashes() {
  using LI = ia::LabelInterpolation;
  const Case cases[] = {
      {"3d_rot_scale_c4_seg",
       3,
       {205, 205, 205},
       {128, 128, 128},
       4,
       1,
       LI::kLinear,
       -1,
       0.4,
       -0.3,
       0.5,
       0.85,
       false,
       false,
       false},
      {"3d_rot_c1_seg",
       3,
       {205, 205, 205},
       {128, 128, 128},
       1,
       1,
       LI::kLinear,
       -1,
       -0.5,
       0.2,
       0.1,
       1.0,
       false,
       false,
       false},
      {"3d_scale_c9",
       3,
       {150, 150, 150},
       {96, 96, 96},
       9,
       0,
       LI::kLinear,
       0,
       0.0,
       0.0,
       0.0,
       1.3,
       false,
       false,
       false},
      {"3d_rot_c2_nearest",
       3,
       {61, 61, 61},
       {40, 40, 40},
       2,
       2,
       LI::kNearest,
       0,
       0.7,
       0.1,
       -0.2,
       0.9,
       false,
       false,
       false},
      {"3d_rot_c3_elastic",
       3,
       {61, 61, 61},
       {40, 40, 40},
       3,
       1,
       LI::kLinear,
       -1,
       0.3,
       0.3,
       0.3,
       1.1,
       true,
       false,
       false},
      {"3d_rot_c4_window",
       3,
       {61, 61, 61},
       {40, 40, 40},
       4,
       1,
       LI::kLinear,
       -1,
       0.2,
       -0.6,
       0.4,
       0.8,
       false,
       true,
       false},
      {"3d_rot_c4_outside",
       3,
       {40, 40, 40},
       {48, 48, 48},
       4,
       1,
       LI::kLinear,
       0,
       0.6,
       0.5,
       0.4,
       1.4,
       false,
       false,
       false},
      {"3d_rot_c4_transposed",
       3,
       {61, 61, 61},
       {40, 40, 40},
       4,
       0,
       LI::kLinear,
       0,
       0.2,
       0.5,
       0.1,
       0.9,
       false,
       false,
       true},
      {"3d_rot_c5_odd",
       3,
       {45, 45, 45},
       {37, 37, 37},
       5,
       1,
       LI::kLinear,
       -1,
       0.9,
       0.2,
       -0.7,
       0.75,
       false,
       false,
       false},
      {"2d_rot_c4_seg",
       2,
       {300, 300, 1},
       {200, 200, 1},
       4,
       1,
       LI::kLinear,
       -1,
       0,
       0,
       0.6,
       0.9,
       false,
       false,
       false},
      {"2d_rot_c2_elastic",
       2,
       {90, 90, 1},
       {64, 64, 1},
       2,
       1,
       LI::kLinear,
       -1,
       0,
       0,
       -0.3,
       1.2,
       true,
       false,
       false},
  };
  for (const Case& k : cases) {
    RunHashCase(k);
  }
}

std::vector<int64_t> ParseList(const char* s) {
  std::vector<int64_t> v;
  while (*s != '\0') {
    char* end = nullptr;
    v.push_back(std::strtoll(s, &end, 10));
    s = *end == ',' ? end + 1 : end;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> channel_list = {1, 2, 4, 9};
  int reps = 5;
  bool labels = false;
  bool one_plane = false;
  bool hash = false;
  bool timing_option = false;  // --hash hashes fixed cases: it takes none of these
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    timing_option |= arg != "--hash";
    if (arg == "--hash") {
      hash = true;
    } else if (arg == "--channels" && a + 1 < argc) {
      channel_list = ParseList(argv[++a]);
    } else if (arg == "--reps" && a + 1 < argc) {
      reps = std::atoi(argv[++a]);
    } else if (arg == "--labels" && a + 1 < argc) {
      labels = std::atoi(argv[++a]) != 0;
    } else if (arg == "--one-plane") {
      one_plane = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--channels 1,2,4,9] [--reps 5] [--labels 0|1] [--one-plane] "
                   "[--hash]\n",
                   argv[0]);
      return 2;
    }
  }
  if (hash) {
    if (timing_option) {
      std::fprintf(stderr, "%s: --hash hashes its fixed cases and takes no other option\n",
                   argv[0]);
      return 2;
    }
    RunHashes();
    return 0;
  }
  const std::array<int64_t, 3> in{205, 205, 205}, out{128, 128, 128};
  const int64_t max_c = *std::max_element(channel_list.begin(), channel_list.end());
  const int64_t in_vox = in[0] * in[1] * in[2], out_vox = out[0] * out[1] * out[2];
  std::vector<float> image(static_cast<size_t>(in_vox * max_c));
  FillImage(image, max_c, in);
  std::vector<int16_t> seg(static_cast<size_t>(in_vox));
  FillLabels(seg, 1, in);
  std::vector<float> image_out(static_cast<size_t>(out_vox * max_c));
  std::vector<int16_t> seg_out(static_cast<size_t>(out_vox));
  const ia::AffineSamplingMap map = MakeMap(3, in, out, 0.4, -0.3, 0.5, 0.85);
  ia::ResampleScratch scratch;
  std::printf("channels labels median_cpu_ms min_cpu_ms ms_per_channel\n");
  for (const int64_t c : channel_list) {
    auto image_in = SampleView<const float>::Contiguous(image.data(), c, in);
    if (one_plane) {
      image_in.channel_stride = 0;
    }
    const auto seg_in = SampleView<const int16_t>::Contiguous(seg.data(), labels ? 1 : 0, in);
    const auto iout = SampleView<float>::Contiguous(image_out.data(), c, out);
    const auto sout = SampleView<int16_t>::Contiguous(seg_out.data(), labels ? 1 : 0, out);
    std::vector<double> ms;
    for (int r = 0; r <= reps; ++r) {  // the first run warms up
      const double t0 = CpuMs();
      ia::ResampleAffine(map, image_in, iout, seg_in, sout, ia::LabelInterpolation::kLinear, -1,
                         nullptr, scratch);
      const double t1 = CpuMs();
      if (r > 0) {
        ms.push_back(t1 - t0);
      }
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::printf("%8lld %6d %13.2f %10.2f %14.2f\n", static_cast<long long>(c), labels ? 1 : 0,
                median, ms.front(), median / static_cast<double>(c));
  }
  return 0;
}
