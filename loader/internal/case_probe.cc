// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/case_probe.h"

#include "codec/dtype.h"

// The cases are checked in the order a user's mistake is most likely: first whether the
// patch's rank fits the arrays at all (a wrong patch_size is the configuration's fault, not
// every case's), then each case against the layout most cases share (so that one odd case is
// the one named, whichever its index), and only then are label maps read for foreground
// indexes, which would otherwise be the first to trip over a wrong rank.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include <oneapi/tbb/task_group.h>

#include "common/str_cat.h"
#include "loader/internal/task_spawn.h"

namespace patchfeed::loader::internal_loader {
namespace {

// What one output array must share across the cases for them to make one batch.
struct Layout {
  size_t ndim = 0;
  int64_t channels = 0;
  std::string dtype;
  int64_t itemsize = 0;

  friend bool operator==(const Layout&, const Layout&) = default;
};

// An array without a channel axis (OutputArray::channel_axis) has one channel.
Layout LayoutOf(const ArrayProbe& probe, bool channel_axis) {
  const std::vector<int64_t>& shape = probe.geometry.shape;
  const int64_t channels = !channel_axis ? 1 : (shape.empty() ? 0 : shape[0]);
  return {shape.size(), channels, probe.dtype, probe.geometry.itemsize};
}

// The axes an output's arrays have beyond the patch's: its channel axis, if any.
size_t LeadingAxes(const OutputArray& out) { return out.channel_axis ? 1 : 0; }

std::string Describe(const Layout& l) {
  return StrCat(l.channels, l.channels == 1 ? " channel" : " channels", " of '", l.dtype, "'");
}

// Runs fn(c) in `arena`'s workers for every case whose problem is still OK; fn records a
// case's trouble in problems[c] (each task writes only its own entry).
template <typename Fn>
void ForEachGoodCase(tbb::task_arena& arena, std::vector<Status>& problems, const Fn& fn) {
  TsanToken done;
  arena.execute([&] {
    tbb::task_group group;
    for (size_t c = 0; c < problems.size(); ++c) {
      if (problems[c].ok()) {
        RunTask(group, &done, [&fn, c] { fn(static_cast<int64_t>(c)); });
      }
    }
    group.wait();
  });
  TsanAcquire(&done);
}

// Opens every case's output arrays (leaving the most recent ones open in the cache).
void OpenCases(tbb::task_arena& arena, LoaderParts& p, std::vector<Status>& problems) {
  const size_t outputs = p.outputs.size();
  p.probes.assign(problems.size() * outputs, ArrayProbe{});
  ForEachGoodCase(arena, problems, [&p, &problems, outputs](int64_t c) {
    for (size_t o = 0; o < outputs; ++o) {
      auto reader = p.files->Get(c, p.outputs[o].dataset_array);
      if (!reader.ok()) {
        problems[static_cast<size_t>(c)] =
            reader.status().WithContext("array '" + p.outputs[o].name + "'");
        return;
      }
      p.probes[static_cast<size_t>(c) * outputs + o] = DescribeArray(**reader);
    }
  });
}

// The patch's rank against the arrays': kInvalidArgument when no readable case has output
// `o` with one axis more than the patch (its channels).
Status CheckPatchRank(const LoaderParts& p, size_t o, const std::vector<Status>& problems) {
  const Dataset& ds = p.config.dataset;
  const size_t lead = LeadingAxes(p.outputs[o]);
  const size_t want = p.config.sampler.patch_size.size() + lead;
  int64_t first = -1;
  for (size_t c = 0; c < problems.size(); ++c) {
    if (!problems[c].ok()) {
      continue;
    }
    const std::vector<int64_t>& shape = p.probe(static_cast<int64_t>(c), o).geometry.shape;
    if (shape.size() == want) {
      return Status::Ok();
    }
    if (first < 0) {
      first = static_cast<int64_t>(c);
    }
  }
  if (first < 0) {
    return Status::Ok();  // no case opened: that is every case's problem, reported as such
  }
  const std::vector<int64_t>& shape = p.probe(first, o).geometry.shape;
  const size_t patch = want - lead;
  const size_t spatial = shape.size() < lead ? 0 : shape.size() - lead;
  if (lead == 0) {
    return InvalidArgumentError(
        StrCat("loader: the previous stage's segmentation '", p.outputs[o].name, "' of case '",
               ds.case_id(first), "' has shape ", ShapeToString(shape), "; it needs ", patch,
               " spatial axes and no channel axis, as nnU-Net writes predicted_next_stage files"));
  }
  return InvalidArgumentError(StrCat(
      "loader: patch_size has ", patch, patch == 1 ? " dimension" : " dimensions",
      " but the cases' arrays have ", spatial, " spatial dimensions (array '", p.outputs[o].name,
      "' of case '", ds.case_id(first), "' has shape ", ShapeToString(shape), "); give ", spatial,
      " sizes", spatial == 3 && patch == 2 ? ", or (1, Y, X) for 2-D patches from 3-D cases" : ""));
}

// Checks every readable case against the layout most of them share, per output array, and
// sets the outputs' dtype, channels and item size from it. A case that differs, or whose
// arrays differ in spatial shape, gets its problem.
Status ChooseLayouts(LoaderParts& p, std::vector<Status>& problems) {
  const Dataset& ds = p.config.dataset;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    PATCHFEED_RETURN_IF_ERROR(CheckPatchRank(p, o, problems));
  }
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    OutputArray& out = p.outputs[o];
    const size_t lead = LeadingAxes(out);
    const size_t want = p.config.sampler.patch_size.size() + lead;
    // The most common layout of the right rank; a tie goes to the one seen first.
    std::vector<std::pair<Layout, int64_t>> seen;
    for (size_t c = 0; c < problems.size(); ++c) {
      const Layout l = LayoutOf(p.probe(static_cast<int64_t>(c), o), out.channel_axis);
      if (!problems[c].ok() || l.ndim != want) {
        continue;
      }
      auto it =
          std::find_if(seen.begin(), seen.end(), [&l](const auto& s) { return s.first == l; });
      if (it == seen.end()) {
        seen.emplace_back(l, 1);
      } else {
        ++it->second;
      }
    }
    if (seen.empty()) {
      return Status::Ok();  // every case is bad
    }
    const Layout* common = &seen[0].first;
    int64_t votes = seen[0].second;
    for (const auto& [layout, n] : seen) {
      if (n > votes) {
        common = &layout;
        votes = n;
      }
    }
    out.channels = common->channels;
    out.dtype = common->dtype;
    out.itemsize = common->itemsize;
    for (size_t c = 0; c < problems.size(); ++c) {
      if (!problems[c].ok()) {
        continue;
      }
      const auto ci = static_cast<int64_t>(c);
      const ArrayProbe& probe = p.probe(ci, o);
      const std::vector<int64_t>& shape = probe.geometry.shape;
      const std::string where = StrCat("array '", out.name, "' (", ds.path(ci, out.dataset_array),
                                       ") has shape ", ShapeToString(shape));
      const Layout l = LayoutOf(probe, out.channel_axis);
      if (l.ndim != want) {
        problems[c] = InvalidArgumentError(
            StrCat(where, ": ", shape.size() - lead, " spatial dimensions, the patch has ",
                   want - lead, lead == 0 ? " (no channel axis)" : ""));
      } else if (l != *common) {
        problems[c] = InvalidArgumentError(StrCat(where, " with ", Describe(l), "; ", votes,
                                                  " other cases have ", Describe(*common)));
      } else if (o > 0 && !std::equal(shape.begin() + static_cast<std::ptrdiff_t>(lead),
                                      shape.end(), p.probe(ci, 0).geometry.shape.begin() + 1)) {
        problems[c] = InvalidArgumentError(StrCat(where, ": its spatial axes differ from array '",
                                                  p.outputs[0].name, "' ",
                                                  ShapeToString(p.probe(ci, 0).geometry.shape)));
      }
    }
  }
  return Status::Ok();
}

// What the outputs' dtypes must allow: nnU-Net's types under augmentation, the pad values.
Status CheckOutputTypes(LoaderParts& p) {
  if (p.config.augment) {
    for (size_t o = 0; o < p.outputs.size(); ++o) {
      const OutputArray& out = p.outputs[o];
      if (static_cast<int>(o) == p.previous_seg) {
        if (out.dtype != "|u1" && out.dtype != "<u2" && out.dtype != "|i1" && out.dtype != "<i2") {
          return InvalidArgumentError(
              "loader: the previous stage's segmentation '" + out.name +
              "' must hold labels as uint8, uint16, int8 or int16 (nnU-Net writes uint8 or "
              "uint16); the cases have '" +
              out.dtype + "'");
        }
        continue;
      }
      const char* want = o == 0 ? "<f4" : "<i2";
      if (out.dtype != want) {
        return InvalidArgumentError("loader: augmentation needs array '" + out.name + "' as '" +
                                    want + "' (nnU-Net's type), the cases have '" + out.dtype +
                                    "'");
      }
    }
  }
  for (OutputArray& out : p.outputs) {
    double pad = 0;
    std::memcpy(&pad, out.pad_item.data(), sizeof(double));
    if (p.config.check_finite) {
      out.nonfinite = NonFiniteTestFor(out.dtype);
      if (out.nonfinite && !std::isfinite(pad)) {
        return InvalidArgumentError(StrCat(
            "loader: the pad value of '", out.name, "' is ", pad,
            ", but check_finite is on: every sample reaching past a case's border would fail; "
            "give a finite pad value"));
      }
    }
    auto item = codec::ItemFromDouble(out.dtype, out.itemsize, pad);
    if (!item.ok()) {
      return item.status().WithContext("loader: pad value of '" + out.name + "'");
    }
    out.pad_item = std::move(*item);
  }
  return Status::Ok();
}

// Under kSkip, records the bad cases in p.excluded; else, or when none is good, the error
// listing them all (with the first one's code, so one bad case keeps its own).
Status ExcludeBadCases(LoaderParts& p, const std::vector<Status>& problems) {
  const Dataset& ds = p.config.dataset;
  std::vector<ExcludedCase> bad;
  const Status* first = nullptr;
  for (size_t c = 0; c < problems.size(); ++c) {
    if (!problems[c].ok()) {
      const auto ci = static_cast<int64_t>(c);
      bad.push_back({ci, ds.case_id(ci), std::string(problems[c].message())});
      first = first != nullptr ? first : &problems[c];
    }
  }
  if (bad.empty()) {
    return Status::Ok();
  }
  const bool none_left = bad.size() == problems.size();
  if (!none_left && p.config.error_policy == ErrorPolicy::kSkip) {
    for (const ExcludedCase& e : bad) {
      for (size_t o = 0; o < p.outputs.size(); ++o) {
        p.probes[static_cast<size_t>(e.case_index) * p.outputs.size() + o] = ArrayProbe{};
      }
    }
    p.excluded = std::move(bad);
    return Status::Ok();
  }
  std::string message =
      none_left ? (problems.size() == 1
                       ? std::string("loader: the dataset's one case cannot be used")
                       : StrCat("loader: none of the ", problems.size(), " cases can be used"))
                : StrCat("loader: ", bad.size(), " of ", problems.size(), " cases cannot be used");
  for (const ExcludedCase& e : bad) {
    message += StrCat("\n  case '", e.case_id, "' (#", e.case_index, "): ", e.reason);
  }
  if (!none_left) {
    message += "\nfix or remove them, or set error_policy to \"skip\" to leave them out";
  }
  return Status(first->code(), std::move(message));
}

}  // namespace

Result<std::vector<CaseInfo>> ProbeCases(tbb::task_arena& arena, LoaderParts& p) {
  std::vector<Status> problems(static_cast<size_t>(p.config.dataset.num_cases()));
  OpenCases(arena, p, problems);
  PATCHFEED_RETURN_IF_ERROR(ChooseLayouts(p, problems));
  const bool any_good =
      std::any_of(problems.begin(), problems.end(), [](const Status& s) { return s.ok(); });
  if (any_good) {
    PATCHFEED_RETURN_IF_ERROR(CheckOutputTypes(p));
  }
  if (p.foreground) {
    ForegroundStore* store = p.foreground.get();
    ForEachGoodCase(arena, problems, [store, &problems](int64_t c) {
      problems[static_cast<size_t>(c)] = store->Prepare(c);
    });
  }
  PATCHFEED_RETURN_IF_ERROR(ExcludeBadCases(p, problems));

  std::vector<CaseInfo> cases;
  for (size_t c = 0; c < problems.size(); ++c) {
    if (!problems[c].ok()) {
      continue;
    }
    const auto ci = static_cast<int64_t>(c);
    const std::vector<int64_t>& shape = p.probe(ci, 0).geometry.shape;
    CaseInfo info;
    info.spatial_shape.assign(shape.begin() + 1, shape.end());
    if (p.foreground) {
      info.foreground_counts = p.foreground->counts(ci);
    }
    info.dataset_index = ci;
    cases.push_back(std::move(info));
  }
  return cases;
}

}  // namespace patchfeed::loader::internal_loader
