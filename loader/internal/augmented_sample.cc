// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/augmented_sample.h"

// The sampler draws nnU-Net's enlarged crop, but only the window of it that the spatial
// transform samples is read: when no rotation or scaling is drawn (64 % of nnU-Net's samples)
// that window is the patch itself, read straight into the batch slot; otherwise it is read into
// per-worker staging and resampled into the slot. The rest of the pipeline then runs in place.

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "common/str_cat.h"
#include "loader/internal/nonfinite_count.h"
#include "loader/internal/shared_pieces.h"

namespace patchfeed::loader::internal_loader {
namespace {

using augment::SampleView;

// The part of a crop window that 3D resampling reads: the patch's sampling positions form a
// box turned by the affine matrix (an oriented box); a voxel is read only within 1 of one of
// them. A block is wanted iff it, grown by that distance (and a voxel against rounding),
// meets the oriented box: the separating-axis test over the 3 block axes, the 3 box axes and
// their 9 cross products. Array coordinates, any channel axis ignored. The blocks in the
// corners of a rotated sample's window are skipped.
struct Footprint {
  int first_spatial = 1;                        // the array's axis 0 is its channels, or not
  std::array<double, 3> centre{};               // in array coordinates
  std::array<std::array<double, 3>, 3> axis{};  // matrix columns (box edge directions)
  std::array<double, 3> half{};                 // half extents along the columns
};

bool FootprintWants(const void* context, const int64_t* lo, const int64_t* hi) {
  const Footprint& f = *static_cast<const Footprint*>(context);
  constexpr double kMargin = 2.0;  // neighbour distance 1 + a voxel against rounding
  std::array<double, 3> bc{}, bh{};
  for (int d = 0; d < 3; ++d) {
    const int a = d + f.first_spatial;
    bc[d] = 0.5 * static_cast<double>(lo[a] + hi[a] - 1) - f.centre[d];
    bh[d] = 0.5 * static_cast<double>(hi[a] - 1 - lo[a]) + kMargin;
  }
  const auto separated = [&](const std::array<double, 3>& l) {
    double rb = 0, ro = 0, dist = 0;
    for (int d = 0; d < 3; ++d) {
      rb += std::abs(l[d]) * bh[d];
      dist += l[d] * bc[d];
    }
    for (int k = 0; k < 3; ++k) {
      const auto& a = f.axis[k];
      ro += std::abs(l[0] * a[0] + l[1] * a[1] + l[2] * a[2]) * f.half[k];
    }
    return std::abs(dist) > (rb + ro) * (1 + 1e-9) + 1e-9;
  };
  for (int d = 0; d < 3; ++d) {
    std::array<double, 3> e{};
    e[d] = 1;
    if (separated(e) || separated(f.axis[d])) {
      return false;
    }
    for (int k = 0; k < 3; ++k) {
      const auto& a = f.axis[k];
      // e_d x a_k
      std::array<double, 3> c{};
      c[0] = e[1] * a[2] - e[2] * a[1];
      c[1] = e[2] * a[0] - e[0] * a[2];
      c[2] = e[0] * a[1] - e[1] * a[0];
      if (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] > 1e-18 && separated(c)) {
        return false;
      }
    }
  }
  return true;
}

// Widens a window of the previous stage's label map (items of `dtype`, C-contiguous over
// `box`) to int16 in `dst`, -1 where the box lies outside the case of `case_shape` (nnU-Net's
// pad value after its cast to int16; the read padded with 0 in the file's type, which for an
// unsigned type cannot hold -1).
template <typename T>
Status WidenLabels(const std::byte* raw, const codec::Box& box,
                   const std::vector<int64_t>& case_shape, int16_t* dst) {
  std::array<int64_t, 3> extent{1, 1, 1}, lo{0, 0, 0}, hi{1, 1, 1};
  const size_t lead = 3 - box.start.size();
  for (size_t d = 0; d < box.start.size(); ++d) {
    extent[lead + d] = box.stop[d] - box.start[d];
    lo[lead + d] = std::clamp<int64_t>(-box.start[d], 0, extent[lead + d]);
    hi[lead + d] =
        std::clamp<int64_t>(case_shape[d] - box.start[d], lo[lead + d], extent[lead + d]);
  }
  const auto* src = reinterpret_cast<const T*>(raw);
  int64_t i = 0;
  for (int64_t z = 0; z < extent[0]; ++z) {
    for (int64_t y = 0; y < extent[1]; ++y) {
      for (int64_t x = 0; x < extent[2]; ++x, ++i) {
        const bool inside =
            z >= lo[0] && z < hi[0] && y >= lo[1] && y < hi[1] && x >= lo[2] && x < hi[2];
        T v{};
        std::memcpy(&v, src + i, sizeof(T));  // little-endian files on little-endian hosts
        const auto label = static_cast<int64_t>(v);
        // Only uint16 can exceed int16, nnU-Net's type for the crop (its cast would wrap).
        if (inside && label > std::numeric_limits<int16_t>::max()) {
          return InvalidArgumentError(StrCat(
              "the previous stage's segmentation holds label ", label,
              ", more than int16 holds: nnU-Net's labels are 0 (background) to the last class"));
        }
        dst[i] = inside ? static_cast<int16_t>(label) : int16_t{-1};
      }
    }
  }
  return Status::Ok();
}

Status WidenPreviousSeg(const std::string& dtype, const std::byte* raw, const codec::Box& box,
                        const std::vector<int64_t>& case_shape, int16_t* dst) {
  if (dtype == "|u1") {
    return WidenLabels<uint8_t>(raw, box, case_shape, dst);
  }
  if (dtype == "<u2") {
    return WidenLabels<uint16_t>(raw, box, case_shape, dst);
  }
  if (dtype == "|i1") {
    return WidenLabels<int8_t>(raw, box, case_shape, dst);
  }
  return WidenLabels<int16_t>(raw, box, case_shape, dst);  // CheckOutputTypes allowed no other
}

}  // namespace

AugmentedSamples::AugmentedSamples(const LoaderParts& parts, SampleReader* reader)
    : parts_(parts), reader_(*reader) {}

augment::PieceRunner AugmentedSamples::Pieces(ReadRound& round) const {
  const int helpers = parts_.num_threads - 1;
  if (helpers == 0 || round.on_consumer()) {
    return augment::PieceRunner();  // one after another on this thread
  }
  return augment::PieceRunner(
      [&round, helpers](int64_t count, const augment::PieceRunner::Body& body) {
        RunSharedPieces(round, helpers, count, body);
      });
}

StreamId AugmentedSamples::Stream(BatchId batch, int64_t sample) const {
  // Keyed by the sample's position in the global batch, so a rank's samples augment the same
  // however the batch is split over ranks.
  return StreamId{.seed = parts_.config.sampler.seed,
                  .epoch = batch.epoch,
                  .batch = batch.batch,
                  .rank = 0,
                  .position = static_cast<uint32_t>(parts_.sampler->rank_offset() + sample)};
}

bool AugmentedSamples::SegStaged() const {
  return parts_.regions.has_value() || parts_.previous_seg >= 0;
}

std::span<const int64_t> AugmentedSamples::PipelineCrop() const {
  // nnU-Net's 2d: the (1, Y, X) crop of a 3-D case is a 2-D crop (Y, X).
  return std::span(parts_.config.sampler.patch_size).subspan(parts_.slab_2d ? 1 : 0);
}

void AugmentedSamples::Plan(ReadRound& round, int64_t sample, const SampleSpec& spec) const {
  const std::span<const int64_t> crop = PipelineCrop();
  const augment::NnUNetAugmentConfig& pipeline = parts_.config.augment->pipeline;
  const size_t dims = crop.size();
  const size_t lead = parts_.slab_2d ? 1 : 0;  // the slab's axis of one voxel
  AugmentedTask task;
  task.sample = sample;
  task.params = augment::DrawNnUNetAugmentParams(pipeline, Stream(round.batch(), sample),
                                                 parts_.outputs[0].channels);
  task.window = augment::NnUNetSpatialWindow(task.params, pipeline, crop);
  task.first_read = round.reads().size();
  std::vector<int64_t> offset(lead, 0), extent(lead, 1);
  offset.insert(offset.end(), task.window.origin.begin(), task.window.origin.begin() + dims);
  extent.insert(extent.end(), task.window.shape.begin(), task.window.shape.begin() + dims);
  // Without rotation or scaling the window is the patch: read it straight into the slot (the
  // segmentation as labels; as regions, or with the cascade's second channel, it is staged).
  const bool direct = !task.params.spatial.transforms();
  // 3D rotations and scalings read only the blocks near the sampling positions. The plans are
  // made here, before the round's tasks, so that reads in flight can fetch their bytes.
  Footprint footprint, spatial_footprint;  // arrays with a channel axis, and without
  codec::BlockFilter filter, spatial_filter;
  if (!direct && dims == 3 && !pipeline.dummy_2d && !task.params.spatial.do_deform) {
    const auto a = augment::SpatialAffineMatrix(task.params.spatial, 3);
    for (size_t i = 0; i < 3; ++i) {
      footprint.centre[i] =
          static_cast<double>(spec.box_start[i]) + (static_cast<double>(crop[i]) - 1) / 2;
      footprint.half[i] = (static_cast<double>(pipeline.patch_size[i]) - 1) / 2;
      for (size_t k = 0; k < 3; ++k) {
        footprint.axis[k][i] = a[i][k];
      }
    }
    filter = {&FootprintWants, &footprint};
    spatial_footprint = footprint;
    spatial_footprint.first_spatial = 0;
    spatial_filter = {&FootprintWants, &spatial_footprint};
  }
  for (size_t o = 0; o < parts_.outputs.size(); ++o) {
    const OutputArray& out = parts_.outputs[o];
    SampleRead read = MakeSampleRead(sample, o, out.channels, spec, offset, extent);
    if (!out.channel_axis) {
      read.box.start.erase(read.box.start.begin());
      read.box.stop.erase(read.box.stop.begin());
      read.dst.shape.erase(read.dst.shape.begin());
    }
    if (direct && (o == 0 || !SegStaged())) {
      // The sample's part of the slot; the slab's axis of one voxel takes any stride.
      const StridedView slot = parts_.ring.views(round.slot())[o].Slice(sample);
      read.dst.data = slot.data;
      read.dst.byte_strides = slot.byte_strides;
      read.dst.byte_strides.insert(read.dst.byte_strides.begin() + 1, lead, 0);
    } else {
      // Staging is C-contiguous (channels, [1,] *window); its address is the worker's.
      read.dst = StridedView::Contiguous(nullptr, std::move(read.dst.shape), out.itemsize);
    }
    const Status planned = codec::PlanBox(parts_.probe(spec.case_index, o).geometry, read.box,
                                          out.channel_axis ? filter : spatial_filter, &read.plan);
    const SampleRead* added = round.AddRead(std::move(read));
    if (!planned.ok() && !task.unplanned) {
      reader_.Fail(round, *added, nullptr, planned);
      task.unplanned = true;
    }
  }
  round.augmented.push_back(std::move(task));
}

void AugmentedSamples::Run(ReadRound& round, const AugmentedTask& task) noexcept {
  if (round.cancelled() || task.unplanned) {
    return;
  }
  const SampleRead& image_read = round.reads()[task.first_read];
  const int64_t sample = task.sample;
  const augment::NnUNetAugmentParams& params = task.params;
  const augment::NnUNetAugmentConfig& pipeline = parts_.config.augment->pipeline;
  const std::span<const int64_t> crop = PipelineCrop();
  const int dims = static_cast<int>(crop.size());
  const bool direct = !params.spatial.transforms();
  const bool has_seg = parts_.outputs.size() > 1;
  const bool cascade = parts_.previous_seg >= 0;
  // The pipeline's segmentation channels: the cascade's second is the previous stage's.
  const int64_t seg_channels = cascade ? 2 : (has_seg ? parts_.outputs[1].channels : 0);
  Staging& staging = staging_.local();
  const augment::PieceRunner pieces = Pieces(round);
  // The segmentation the pipeline writes: the slot's, or staging when the slot holds regions
  // or only the cascade's channel 0.
  const std::span<const int64_t> patch(pipeline.patch_size.data(), static_cast<size_t>(dims));
  int64_t patch_voxels = 1;
  for (const int64_t p : patch) {
    patch_voxels *= p;
  }
  int64_t crop_voxels = 1;
  for (const int64_t c : crop) {
    crop_voxels *= c;
  }
  if (has_seg && SegStaged()) {
    staging.seg_labels.resize(static_cast<size_t>(seg_channels * patch_voxels));
  }
  // The reads' destinations: the slot, or this worker's staging. The cascade's previous-stage
  // read lands in staging in its file's type and is widened into segmentation channel 1.
  std::vector<StridedView> read_into(parts_.outputs.size());
  for (size_t o = 0; o < parts_.outputs.size(); ++o) {
    const SampleRead& read = round.reads()[task.first_read + o];
    read_into[o] = read.dst;
    if (read_into[o].data == nullptr) {
      // Items of this window, and of the largest window it can be: the whole crop (windows
      // are clipped to it), with the same leading axes (channels, nnU-Net 2d's slab).
      int64_t items = 1;
      int64_t window_voxels = 1;
      const size_t rank = read.dst.shape.size();
      for (size_t a = 0; a < rank; ++a) {
        items *= read.dst.shape[a];
        if (a + static_cast<size_t>(dims) >= rank) {
          window_voxels *= read.dst.shape[a];
        }
      }
      const auto bound = [&](int64_t scale) {
        return static_cast<size_t>(items / window_voxels * crop_voxels * scale);
      };
      if (o == 0) {
        read_into[o].data = reinterpret_cast<std::byte*>(
            staging.image.Reserve(static_cast<size_t>(items), bound(1)));
      } else if (static_cast<int>(o) == parts_.previous_seg) {
        const int64_t itemsize = parts_.outputs[o].itemsize;
        read_into[o].data =
            staging.previous.Reserve(static_cast<size_t>(items * itemsize), bound(itemsize));
      } else if (direct) {  // the patch itself, labels for the region conversion
        read_into[o].data = reinterpret_cast<std::byte*>(staging.seg_labels.data());
      } else {
        const int64_t seg_read_channels = cascade ? 2 : 1;
        read_into[o].data = reinterpret_cast<std::byte*>(staging.seg.Reserve(
            static_cast<size_t>(items * seg_read_channels), bound(seg_read_channels)));
      }
    }
    if (!ReadInPieces(round, read, read_into[o], staging, pieces)) {
      return;
    }
  }
  if (cascade) {
    // Channel 1 follows channel 0 in the segmentation's staging (C-contiguous, 2 channels).
    const SampleRead& previous =
        round.reads()[task.first_read + static_cast<size_t>(parts_.previous_seg)];
    const OutputArray& out = parts_.outputs[static_cast<size_t>(parts_.previous_seg)];
    read_into[1].shape[0] = 2;
    auto* channel1 = reinterpret_cast<int16_t*>(read_into[1].data + read_into[1].byte_strides[0]);
    const Status widened = WidenPreviousSeg(
        out.dtype, read_into[static_cast<size_t>(parts_.previous_seg)].data, previous.box,
        parts_.probe(previous.case_index, static_cast<size_t>(parts_.previous_seg)).geometry.shape,
        channel1);
    if (!widened.ok()) {
      reader_.Fail(round, previous, nullptr, widened);
      return;
    }
  }
  // What the pipeline sees of a read into staging: without the slab axis of nnU-Net's 2d.
  const auto pipeline_view = [&](const StridedView& v) {
    return parts_.slab_2d ? v.Squeeze(1) : v;
  };

  const int slot = round.slot();
  const std::vector<ArrayView>& views = parts_.ring.views(slot);
  const SampleView<float> image = augment::SampleViewOf<float>(views[0].Slice(sample));
  SampleView<int16_t> seg;
  seg.channels = 0;
  seg.spatial_dims = dims;
  if (has_seg) {
    seg = SegStaged()
              ? SampleView<int16_t>::Contiguous(staging.seg_labels.data(), seg_channels, patch)
              : augment::SampleViewOf<int16_t>(views[1].Slice(sample));
  }
  Status st;
  if (!direct) {
    // Where the window lies in the crop, for the resampler's crop-relative positions.
    SampleView<const int16_t> seg_window;
    seg_window.channels = 0;
    seg_window.spatial_dims = dims;
    if (has_seg) {
      seg_window = augment::SampleViewOf<const int16_t>(pipeline_view(read_into[1]));
    }
    st = augment::ApplyNnUNetSpatialWindow(
        params, pipeline, crop, task.window,
        augment::SampleViewOf<const float>(pipeline_view(read_into[0])), seg_window, image, seg,
        staging.pipeline, pieces);
  }
  if (st.ok()) {
    st = augment::ApplyNnUNetAfterSpatial(params, pipeline, Stream(round.batch(), sample), image,
                                          seg, staging.pipeline, pieces);
  }
  if (st.ok() && has_seg) {
    // The batch's segmentation is channel 0; the cascade's channel 1 was only the one-hot's.
    st = WriteTargets(slot, sample, cascade ? seg.channel(0) : seg, staging);
  }
  if (st.ok() && parts_.outputs[0].nonfinite) {
    // The sample as delivered, after the pipeline's last pass over it.
    const int64_t n = CountNonFinite(views[0].Slice(sample), *parts_.outputs[0].nonfinite);
    if (n > 0) {
      round.AddNonFinite(image_read, n);
    }
  }
  if (!st.ok()) {
    reader_.Fail(round, image_read, nullptr, st.WithContext("augmentation"));
  }
}

bool AugmentedSamples::ReadInPieces(ReadRound& round, const SampleRead& read,
                                    const StridedView& dst, Staging& staging,
                                    const augment::PieceRunner& pieces) {
  SampleRead& split = staging.split_read;
  split.sample = read.sample;
  split.output = read.output;
  split.case_index = read.case_index;
  split.box = read.box;
  split.dst = dst;
  split.plan = read.plan;
  split.fetched = read.fetched;
  split.fetched_store = read.fetched_store;
  // About two runs per thread: each run re-reads its chunk's header and offsets and decodes
  // alone, so runs of min_task_bytes (~30 for a 1-channel 128^3 patch) cost 5-15 % more CPU
  // per sample than one run; with one thread the whole plan is one run.
  staging.runs.clear();
  if (parts_.num_threads > 1) {
    int64_t bytes = 0;
    for (int64_t i = 0; i < split.plan.num_pieces(); ++i) {
      bytes += split.plan.piece(i).nbytes;
    }
    staging.runs = GroupPieces(
        split.plan, std::max(parts_.config.min_task_bytes, bytes / (2 * parts_.num_threads)));
  } else {
    staging.runs.push_back(WholePlan(split.plan));
  }
  std::atomic<bool> ok{true};
  pieces.ForEach(static_cast<int64_t>(staging.runs.size()), [&](int64_t i) {
    if (!reader_.ReadRun(round, split, staging.runs[static_cast<size_t>(i)])) {
      ok.store(false, std::memory_order_relaxed);
    }
  });
  split.fetched = nullptr;  // its bytes are the round's: hold nothing past it
  split.fetched_store = nullptr;
  return ok.load(std::memory_order_relaxed);
}

Status AugmentedSamples::WriteTargets(int slot, int64_t sample, SampleView<int16_t> seg,
                                      Staging& staging) const {
  const std::vector<ArrayView>& views = parts_.ring.views(slot);
  if (parts_.regions) {
    const SampleView<uint8_t> regions = augment::SampleViewOf<uint8_t>(views[1].Slice(sample));
    PATCHFEED_RETURN_IF_ERROR(augment::ApplySegmentationToRegions(*parts_.regions, seg, regions),
                              "regions");
    for (const TargetArray& t : parts_.targets) {
      PATCHFEED_RETURN_IF_ERROR(
          augment::DownsampleSegNearestExact<uint8_t>(
              regions, augment::SampleViewOf<uint8_t>(views[t.ring_array].Slice(sample)),
              staging.pipeline.intensity),
          "deep-supervision target");
    }
    return Status::Ok();
  }
  if (parts_.previous_seg >= 0) {
    PATCHFEED_RETURN_IF_ERROR(
        augment::CopySample<int16_t>(seg, augment::SampleViewOf<int16_t>(views[1].Slice(sample)),
                                     "the segmentation and its batch slot"));
  }
  for (const TargetArray& t : parts_.targets) {
    PATCHFEED_RETURN_IF_ERROR(
        augment::DownsampleSegNearestExact<int16_t>(
            seg, augment::SampleViewOf<int16_t>(views[t.ring_array].Slice(sample)),
            staging.pipeline.intensity),
        "deep-supervision target");
  }
  return Status::Ok();
}

}  // namespace patchfeed::loader::internal_loader
