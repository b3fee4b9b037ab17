// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/cascade/binary_morphology.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "common/str_cat.h"

namespace patchfeed::augment {
namespace {

constexpr double kMaxRadius = 127;  // extents up to 255 fit the byte distances below

Status CheckRadius(double radius, const char* shape) {
  if (!(radius >= 0.5 && radius <= kMaxRadius)) {
    return InvalidArgumentError(StrCat("binary operator: a ", shape, " radius of ", radius,
                                       " is outside [0.5, ", kMaxRadius, "]"));
  }
  return Status::Ok();
}

// One run of footprint voxels along X: output voxel (z, y, x) takes the OR of the input over
// (z + dz, y + dy, x + a .. x + a + len).
struct Run {
  int64_t dz, dy, a, len;
};

// The X-runs of the footprint voxels for which `keep(z, y, x)` (footprint indices) holds.
template <typename Keep>
std::vector<Run> RunsOf(const Footprint& fp, Keep keep) {
  std::vector<Run> runs;
  const int64_t kz = fp.size[0], ky = fp.size[1], kx = fp.size[2];
  const int64_t cz = (kz - 1) / 2, cy = (ky - 1) / 2, cx = (kx - 1) / 2;
  for (int64_t z = 0; z < kz; ++z) {
    for (int64_t y = 0; y < ky; ++y) {
      const uint8_t* row = fp.mask.data() + (z * ky + y) * kx;
      const auto in = [&](int64_t x) { return row[x] != 0 && keep(z, y, x); };
      for (int64_t x = 0; x < kx;) {
        if (!in(x)) {
          ++x;
          continue;
        }
        int64_t end = x;
        while (end + 1 < kx && in(end + 1))
          ++end;
        runs.push_back({z - cz, y - cy, x - cx, end - x});
        x = end + 1;
      }
    }
  }
  return runs;
}

std::vector<Run> RunsOf(const Footprint& fp) {
  return RunsOf(fp, [](int64_t, int64_t, int64_t) { return true; });
}

// Marks the (z, y) rows of `mask` with any foreground in `row_any`; returns how many.
int64_t MarkActiveRows(const MaskShape& shape, std::span<const uint8_t> mask,
                       std::vector<uint8_t>& row_any) {
  const int64_t rows = shape[0] * shape[1], nx = shape[2];
  row_any.resize(static_cast<size_t>(rows));
  int64_t active = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const bool any = std::memchr(mask.data() + r * nx, 1, static_cast<size_t>(nx)) != nullptr;
    row_any[static_cast<size_t>(r)] = any ? 1 : 0;
    active += any ? 1 : 0;
  }
  return active;
}

// Dilation of `src` as a union of X-runs, written to `dst` (or OR-ed into it): with fd(x) the
// distance from x to the next foreground voxel at or after x in its row, run (dz, dy, a, len)
// reaches (z, y, x) iff fd at (z + dz, y + dy, x + a) <= len. Each output row is finished
// before the next (runs inner), so it stays in L1 and the rows it reads (within the
// footprint's Z reach) stay in L2; the comparison loop is byte-wide and vectorises. Exact for
// any footprint; one pass per run over the active rows (about pi r^2 runs for a ball). `src`
// may be `dst`; s.row_any must mark `src`'s active rows; |a| and |a + len| must be <= `pad`.
void DilateByRuns(std::span<const Run> runs, int64_t pad, const MaskShape& shape,
                  std::span<const uint8_t> src, std::span<uint8_t> dst, bool or_into,
                  MorphologyScratch& s) {
  // Named copies, not a structured binding: clang 14 cannot capture those in a lambda.
  const int64_t nz = shape[0], ny = shape[1], nx = shape[2];
  const int64_t width = nx + 2 * pad;
  const int64_t rows = nz * ny;
  s.distance.resize(static_cast<size_t>(rows * width));
  for (int64_t r = 0; r < rows; ++r) {
    if (!s.row_any[static_cast<size_t>(r)])
      continue;  // never read
    const uint8_t* in = src.data() + r * nx;
    uint8_t* fd = s.distance.data() + r * width;
    int d = 255;
    for (int64_t j = width - 1; j >= 0; --j) {
      const int64_t x = j - pad;
      d = x >= 0 && x < nx && in[x] ? 0 : std::min(d + 1, 255);
      fd[j] = static_cast<uint8_t>(d);
    }
  }
  for (int64_t z = 0; z < nz; ++z) {
    for (int64_t y = 0; y < ny; ++y) {
      uint8_t* out = dst.data() + (z * ny + y) * nx;
      if (!or_into)
        std::fill(out, out + nx, uint8_t{0});
      for (const Run& run : runs) {
        const int64_t zz = z + run.dz, yy = y + run.dy;
        if (zz < 0 || zz >= nz || yy < 0 || yy >= ny)
          continue;
        const int64_t r = zz * ny + yy;
        if (!s.row_any[static_cast<size_t>(r)])
          continue;
        const uint8_t* fd = s.distance.data() + r * width + pad + run.a;
        const auto len = static_cast<uint8_t>(run.len);
        for (int64_t x = 0; x < nx; ++x)
          out[x] |= static_cast<uint8_t>(fd[x] <= len);
      }
    }
  }
}

// The footprint as a Euclidean ball in doubled coordinates plus a few extra voxels: with
// extent n_d, parity c_d = (n_d even) and anchor a_d = (n_d - 1) / 2 per axis, and
// e_d = 2 o_d - c_d for offset o, the core is {o : sum_d e_d^2 <= t}, all of it in the
// footprint, and `extra` holds the footprint's X-runs outside the core. skimage's balls are
// cores up to their shell (samples symmetric about the centre, spacing s with r / s =
// (n - 1) / 2), where float rounding keeps some shell voxels and drops others, often
// asymmetrically: those are the extras. Derived from the mask voxel by voxel, never assumed.
struct BallForm {
  std::array<int64_t, 3> n{}, anchor{}, parity{};
  int64_t t = 0;
  std::vector<Run> extra;

  int64_t e(int d, int64_t offset) const { return 2 * offset - parity[static_cast<size_t>(d)]; }
};

std::optional<BallForm> AsBallForm(const Footprint& fp) {
  BallForm b;
  for (size_t d = 0; d < 3; ++d) {
    b.n[d] = fp.size[d];
    b.parity[d] = fp.size[d] % 2 == 0 ? 1 : 0;
    b.anchor[d] = (fp.size[d] - 1) / 2;
  }
  const auto sum = [&](int64_t z, int64_t y, int64_t x) {
    const int64_t ez = b.e(0, z - b.anchor[0]), ey = b.e(1, y - b.anchor[1]),
                  ex = b.e(2, x - b.anchor[2]);
    return ez * ez + ey * ey + ex * ex;
  };
  const auto for_each = [&](auto f) {
    for (int64_t z = 0, i = 0; z < b.n[0]; ++z) {
      for (int64_t y = 0; y < b.n[1]; ++y) {
        for (int64_t x = 0; x < b.n[2]; ++x, ++i)
          f(z, y, x, fp.mask[static_cast<size_t>(i)] != 0);
      }
    }
  };
  // The core stops below the nearest voxel the footprint leaves out.
  int64_t first_out = std::numeric_limits<int64_t>::max();
  for_each([&](int64_t z, int64_t y, int64_t x, bool in) {
    if (!in)
      first_out = std::min(first_out, sum(z, y, x));
  });
  int64_t t = -1;
  for_each([&](int64_t z, int64_t y, int64_t x, bool in) {
    if (in && sum(z, y, x) < first_out)
      t = std::max(t, sum(z, y, x));
  });
  if (t < 0)
    return std::nullopt;
  // The X pass looks at any distance; the box's next |e| beyond n - 1 must be outside the core.
  if ((b.n[2] + 1) * (b.n[2] + 1) <= t)
    return std::nullopt;
  // Distances are uint16: t + 1 plus the largest e^2 added in the Y and Z passes must fit.
  const int64_t largest = std::max((b.n[0] - 1) * (b.n[0] - 1), (b.n[1] - 1) * (b.n[1] - 1));
  if (t + 1 + largest > 65535)
    return std::nullopt;
  b.t = t;
  b.extra = RunsOf(fp, [&](int64_t z, int64_t y, int64_t x) { return sum(z, y, x) > t; });
  return b;
}

// Dilation by a BallForm's core as a separable squared-distance computation: the X pass takes
// each voxel's nearest foreground in its row (on each side, in doubled coordinates), the Y and
// Z passes add e^2 over the footprint's offsets and keep the minimum; a voxel is set iff the
// result is <= t. Values above t are clamped to t + 1. Exact, and its cost, ~2n uint16
// operations per voxel (vectorised along X), grows with the extent n, not its square.
// Needs s.row_any for `mask`.
void DilateSeparable(const BallForm& b, const MaskShape& shape, std::span<uint8_t> mask,
                     MorphologyScratch& s) {
  // Named copies, not a structured binding: clang 14 cannot capture those in a lambda.
  const int64_t nz = shape[0], ny = shape[1], nx = shape[2];
  const int64_t n = nz * ny * nx;
  const auto cap = static_cast<uint16_t>(b.t + 1);
  const auto clamp_sq = [&](int64_t e) { return e * e > b.t ? cap : static_cast<uint16_t>(e * e); };
  s.dist_a.resize(static_cast<size_t>(n));
  s.dist_b.resize(static_cast<size_t>(n));
  s.row.resize(static_cast<size_t>(nx));
  const int64_t c = b.parity[2];
  constexpr int64_t kNone = -1;
  for (int64_t r = 0; r < nz * ny; ++r) {
    const uint8_t* in = mask.data() + r * nx;
    uint16_t* h = s.dist_a.data() + r * nx;
    if (!s.row_any[static_cast<size_t>(r)]) {
      std::fill(h, h + nx, cap);
      continue;
    }
    // Nearest foreground at or after x + c: e = 2 (j - x) - c.
    int64_t next = kNone;
    for (int64_t x = nx - 1; x >= 0; --x) {
      if (c == 0 && in[x])
        next = x;
      h[x] = next == kNone ? cap : clamp_sq(2 * (next - x) - c);
      if (c == 1 && in[x])
        next = x;
    }
    // Nearest foreground at or before x: e = 2 (x - j) + c.
    int64_t last = kNone;
    for (int64_t x = 0; x < nx; ++x) {
      if (in[x])
        last = x;
      if (last != kNone)
        h[x] = std::min(h[x], clamp_sq(2 * (x - last) + c));
    }
  }
  // One pass along axis `d` (0: Z, 1: Y) from `src` to `dst`, or (final) into the mask as a
  // threshold.
  const auto pass = [&](int d, const uint16_t* src, uint16_t* dst, bool final) {
    const auto dd = static_cast<size_t>(d);
    const int64_t extent = d == 0 ? nz : ny;
    for (int64_t z = 0; z < nz; ++z) {
      for (int64_t y = 0; y < ny; ++y) {
        const int64_t pos = d == 0 ? z : y;
        uint16_t* out = final ? s.row.data() : dst + (z * ny + y) * nx;
        std::fill(out, out + nx, cap);
        for (int64_t o = -b.anchor[dd]; o < b.n[dd] - b.anchor[dd]; ++o) {
          const int64_t p = pos + o;
          const int64_t e = b.e(d, o);
          if (p < 0 || p >= extent || e * e > b.t)
            continue;
          const auto add = static_cast<uint16_t>(e * e);
          const uint16_t* in = src + ((d == 0 ? p : z) * ny + (d == 0 ? y : p)) * nx;
          for (int64_t x = 0; x < nx; ++x)
            out[x] = std::min(out[x], static_cast<uint16_t>(in[x] + add));
        }
        if (final) {
          uint8_t* m = mask.data() + (z * ny + y) * nx;
          for (int64_t x = 0; x < nx; ++x)
            m[x] = static_cast<uint8_t>(out[x] <= b.t);
        }
      }
    }
  };
  pass(1, s.dist_a.data(), s.dist_b.data(), /*final=*/false);
  pass(0, s.dist_b.data(), nullptr, /*final=*/true);
}

void Dilate(const Footprint& fp, const MaskShape& shape, std::span<uint8_t> mask,
            MorphologyScratch& s, MorphologyMethod method) {
  const int64_t active = MarkActiveRows(shape, mask, s.row_any);
  if (active == 0)
    return;  // nothing to dilate
  const int64_t pad = fp.size[2];
  std::optional<BallForm> b;
  if (method != MorphologyMethod::kRuns)
    b = AsBallForm(fp);
  if (b && method == MorphologyMethod::kAuto) {
    // Per voxel, a run costs ~0.046 ns per active source row (32 bytes a vector op; empty
    // rows are skipped) and the separable passes ~1.75 + 0.2 n ns whatever the mask (a 128^3
    // patch, bench/README.md section 5). Small radii and sparse masks favour the runs, radii
    // past ~5 on dense masks (erosion's complement) the separable passes.
    const double active_fraction =
        static_cast<double>(active) / static_cast<double>(shape[0] * shape[1]);
    const double runs = 0.046 * static_cast<double>(RunsOf(fp).size()) * active_fraction;
    const double separable = 1.75 + 0.2 * static_cast<double>(fp.size[2]) +
                             0.046 * static_cast<double>(b->extra.size()) * active_fraction;
    if (runs < separable)
      b.reset();
  }
  if (!b) {
    DilateByRuns(RunsOf(fp), pad, shape, mask, mask, /*or_into=*/false, s);
    return;
  }
  if (b->extra.empty()) {
    DilateSeparable(*b, shape, mask, s);
    return;
  }
  s.source.assign(mask.begin(), mask.end());
  DilateSeparable(*b, shape, mask, s);
  DilateByRuns(b->extra, pad, shape, s.source, mask, /*or_into=*/true, s);
}

void Invert(std::span<uint8_t> mask) {
  for (uint8_t& v : mask)
    v ^= 1;
}

void Erode(const Footprint& fp, const MaskShape& shape, std::span<uint8_t> mask,
           MorphologyScratch& s, MorphologyMethod method) {
  Invert(mask);
  Dilate(fp, shape, mask, s, method);
  Invert(mask);
}

}  // namespace

void ChannelToMask(SampleView<const float> channel, std::vector<uint8_t>& mask) {
  const int64_t n = channel.spatial_size();
  mask.resize(static_cast<size_t>(n));
  uint8_t* m = mask.data();
  if (channel.channel_is_contiguous()) {  // the usual case, and a loop that vectorises
    for (int64_t i = 0; i < n; ++i)
      m[i] = channel.data[i] != 0.0f ? 1 : 0;
    return;
  }
  for (int64_t i0 = 0; i0 < channel.shape[0]; ++i0) {
    for (int64_t i1 = 0; i1 < channel.shape[1]; ++i1) {
      for (int64_t i2 = 0; i2 < channel.shape[2]; ++i2)
        *m++ = channel.at(0, i0, i1, i2) != 0.0f ? 1 : 0;
    }
  }
}

void MaskToChannel(std::span<const uint8_t> mask, SampleView<float> channel) {
  const uint8_t* m = mask.data();
  if (channel.channel_is_contiguous()) {
    for (int64_t i = 0; i < channel.spatial_size(); ++i)
      channel.data[i] = m[i] ? 1.0f : 0.0f;
    return;
  }
  for (int64_t i0 = 0; i0 < channel.shape[0]; ++i0) {
    for (int64_t i1 = 0; i1 < channel.shape[1]; ++i1) {
      for (int64_t i2 = 0; i2 < channel.shape[2]; ++i2)
        channel.at(0, i0, i1, i2) = *m++ ? 1.0f : 0.0f;
    }
  }
}

bool SeparableApplies(const Footprint& fp) { return AsBallForm(fp).has_value(); }

Result<Footprint> BallFootprint(double radius) {
  PATCHFEED_RETURN_IF_ERROR(CheckRadius(radius, "ball"));
  // numpy's mgrid[-r:r:n*1j] with n = 2r + 1: int(n) samples i * step + (-r).
  const auto n = static_cast<int64_t>(2 * radius + 1);
  const double step = n == 1 ? 1.0 : (radius - (-radius)) / static_cast<double>(n - 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<double>(i) * step + (-radius);
  Footprint fp;
  fp.size = {n, n, n};
  fp.mask.resize(static_cast<size_t>(n * n * n));
  const double r2 = radius * radius;
  for (int64_t z = 0; z < n; ++z) {
    for (int64_t y = 0; y < n; ++y) {
      for (int64_t x = 0; x < n; ++x) {
        const double zz = v[static_cast<size_t>(z)], yy = v[static_cast<size_t>(y)],
                     xx = v[static_cast<size_t>(x)];
        const double s = (xx * xx + yy * yy) + zz * zz;  // skimage: X**2 + Y**2 + Z**2
        fp.mask[static_cast<size_t>((z * n + y) * n + x)] = s <= r2 ? 1 : 0;
      }
    }
  }
  return fp;
}

Result<Footprint> DiskFootprint(double radius) {
  PATCHFEED_RETURN_IF_ERROR(CheckRadius(radius, "disk"));
  // numpy's arange(-r, r + 1): ceil((r + 1) - (-r)) samples -r + i.
  const auto n = static_cast<int64_t>(std::ceil((radius + 1) - (-radius)));
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = -radius + static_cast<double>(i);
  Footprint fp;
  fp.size = {1, n, n};
  fp.mask.resize(static_cast<size_t>(n * n));
  const double r2 = radius * radius;
  for (int64_t y = 0; y < n; ++y) {
    for (int64_t x = 0; x < n; ++x) {
      const double yy = v[static_cast<size_t>(y)], xx = v[static_cast<size_t>(x)];
      fp.mask[static_cast<size_t>(y * n + x)] = xx * xx + yy * yy <= r2 ? 1 : 0;
    }
  }
  return fp;
}

Result<Footprint> NnUNetFootprint(double radius, int spatial_dims) {
  return spatial_dims == 2 ? DiskFootprint(radius) : BallFootprint(radius);
}

Status ApplyBinaryMorphology(BinaryOperator op, const Footprint& fp, const MaskShape& shape,
                             std::span<uint8_t> mask, MorphologyScratch& scratch,
                             MorphologyMethod method) {
  if (shape[0] < 1 || shape[1] < 1 || shape[2] < 1 ||
      static_cast<int64_t>(mask.size()) != shape[0] * shape[1] * shape[2]) {
    return InvalidArgumentError("binary operator: the mask's size does not match its shape");
  }
  if (static_cast<int64_t>(fp.mask.size()) != fp.size[0] * fp.size[1] * fp.size[2] ||
      fp.size[2] > 255) {
    return InvalidArgumentError("binary operator: the footprint's mask does not match its size");
  }
  switch (op) {
    case BinaryOperator::kDilation:
      Dilate(fp, shape, mask, scratch, method);
      break;
    case BinaryOperator::kErosion:
      Erode(fp, shape, mask, scratch, method);
      break;
    case BinaryOperator::kClosing:
      Dilate(fp, shape, mask, scratch, method);
      Erode(fp, shape, mask, scratch, method);
      break;
    case BinaryOperator::kOpening:
      Erode(fp, shape, mask, scratch, method);
      Dilate(fp, shape, mask, scratch, method);
      break;
  }
  return Status::Ok();
}

}  // namespace patchfeed::augment
