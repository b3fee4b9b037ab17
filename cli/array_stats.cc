// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/array_stats.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/half_float.h"
#include "common/str_cat.h"

namespace patchfeed::cli {
namespace {

// Running totals. Integers keep exact extremes (int64 or uint64 ranges); floats count NaN and
// the infinities apart and leave them out of min, max and mean.
struct Totals {
  int64_t count = 0, nan = 0, posinf = 0, neginf = 0, finite = 0;
  long double sum = 0;
  bool is_float = false, is_unsigned = false;
  double fmin = 0, fmax = 0;
  int64_t imin = 0, imax = 0;
  uint64_t umin = 0, umax = 0;

  void AddFloat(double v) {
    ++count;
    if (std::isnan(v)) {
      ++nan;
    } else if (std::isinf(v)) {
      ++(v > 0 ? posinf : neginf);
    } else {
      fmin = finite == 0 ? v : std::fmin(fmin, v);
      fmax = finite == 0 ? v : std::fmax(fmax, v);
      ++finite;
      sum += v;
    }
  }
  void AddSigned(int64_t v) {
    ++count;
    imin = finite == 0 || v < imin ? v : imin;
    imax = finite == 0 || v > imax ? v : imax;
    ++finite;
    sum += v;
  }
  void AddUnsigned(uint64_t v) {
    ++count;
    umin = finite == 0 || v < umin ? v : umin;
    umax = finite == 0 || v > umax ? v : umax;
    ++finite;
    sum += v;
  }
};

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// The item at `p` as an unsigned integer of `size` bytes, from `big_endian` order.
uint64_t LoadBits(const std::byte* p, int64_t size, bool big_endian) {
  uint64_t bits = 0;
  for (int64_t i = 0; i < size; ++i) {
    const auto byte = static_cast<uint64_t>(p[big_endian ? size - 1 - i : i]);
    bits |= byte << (8 * i);
  }
  return bits;
}

void AddItems(const std::vector<std::byte>& data, char kind, int64_t size, bool big_endian,
              Totals& t) {
  for (size_t at = 0; at + static_cast<size_t>(size) <= data.size();
       at += static_cast<size_t>(size)) {
    const uint64_t bits = LoadBits(data.data() + at, size, big_endian);
    if (kind == 'f') {
      if (size == 2) {
        t.AddFloat(HalfBitsToFloat(static_cast<uint16_t>(bits)));
      } else if (size == 4) {
        float f;
        const auto b = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b, 4);
        t.AddFloat(f);
      } else {
        double d;
        std::memcpy(&d, &bits, 8);
        t.AddFloat(d);
      }
    } else if (kind == 'i') {
      // Sign-extend from the item's width.
      const int shift = static_cast<int>(64 - 8 * size);
      t.AddSigned(static_cast<int64_t>(bits << shift) >> shift);
    } else {
      t.AddUnsigned(bits);
    }
  }
}

}  // namespace

Result<std::string> ArrayStatsJson(const codec::ArrayReader& array) {
  const std::string& dtype = array.dtype();
  const int64_t size = array.itemsize();
  const char kind = dtype.size() >= 2 ? dtype[1] : '?';
  const bool known = ((kind == 'b' || kind == 'i' || kind == 'u') &&
                      (size == 1 || size == 2 || size == 4 || size == 8)) ||
                     (kind == 'f' && (size == 2 || size == 4 || size == 8));
  if (!known) {
    return UnimplementedError(
        StrCat(array.path(), ": statistics of dtype '", dtype,
               "' (--stats reads bool, integers and floats of 2, 4 or 8 bytes)"));
  }
  const bool big_endian = dtype[0] == '>';
  Totals t;
  t.is_float = kind == 'f';
  t.is_unsigned = kind == 'u' || kind == 'b';
  const codec::NdGeometry& g = array.geometry();
  const std::vector<std::byte> pad(static_cast<size_t>(size));
  // Every chunk of the grid in C order, each read alone.
  std::vector<int64_t> index(g.shape.size(), 0);
  bool empty = false;
  for (const int64_t s : g.shape)
    empty = empty || s == 0;
  while (!empty) {
    codec::Box box;
    for (size_t d = 0; d < index.size(); ++d) {
      box.start.push_back(index[d] * g.chunkshape[d]);
      box.stop.push_back(std::min(box.start[d] + g.chunkshape[d], g.shape[d]));
    }
    PATCHFEED_ASSIGN_OR_RETURN(const std::vector<std::byte> data, array.ReadBox(box, pad));
    AddItems(data, kind, size, big_endian, t);
    size_t d = index.size();
    while (d > 0) {
      --d;
      if (++index[d] < g.chunks_per_dim[d])
        break;
      index[d] = 0;
      if (d == 0)
        empty = true;
    }
    if (index.empty())
      break;
  }
  std::string min = "null", max = "null", mean = "null";
  if (t.finite > 0) {
    mean = Number(static_cast<double>(t.sum / static_cast<long double>(t.finite)));
    if (t.is_float) {
      min = Number(t.fmin);
      max = Number(t.fmax);
    } else if (t.is_unsigned) {
      min = std::to_string(t.umin);
      max = std::to_string(t.umax);
    } else {
      min = std::to_string(t.imin);
      max = std::to_string(t.imax);
    }
  }
  return StrCat("{\"count\": ", t.count, ", \"min\": ", min, ", \"max\": ", max,
                ", \"mean\": ", mean, ", \"nan\": ", t.nan, ", \"posinf\": ", t.posinf,
                ", \"neginf\": ", t.neginf, "}");
}

}  // namespace patchfeed::cli
