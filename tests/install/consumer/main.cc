// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Built against an installed patchfeed only: writes a small dataset, loads two batches with
// nnU-Net's augmentation, checks their shapes, and reads one box with the codec directly.
// Including the top-level header of each layer proves the installed headers are complete.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "augment/nnunet_pipeline.h"
#include "codec/open_array.h"
#include "loader/loader.h"
#include "loader/synthetic_dataset.h"

namespace pl = patchfeed::loader;

namespace {

patchfeed::Status Run(const std::string& folder) {
  pl::SyntheticDatasetOptions synth;
  synth.num_cases = 2;
  synth.spatial_shape = {40, 40, 40};
  synth.patch_size = {24, 24, 24};
  pl::LoaderConfig config;
  PATCHFEED_ASSIGN_OR_RETURN(config.dataset, pl::WriteSyntheticDataset(folder, synth));
  config.sampler.patch_size = {32, 32, 32};  // the crop nnU-Net's rotations sample from
  config.sampler.batch_size = 2;
  config.num_threads = 2;
  config.augment.emplace();
  const std::vector<int64_t> patch = {24, 24, 24};
  config.augment->pipeline = patchfeed::augment::NnUNetAugmentConfig::Default(patch);
  PATCHFEED_ASSIGN_OR_RETURN(std::unique_ptr<pl::Loader> loader, pl::Loader::Create(config));
  for (int step = 0; step < 2; ++step) {
    PATCHFEED_ASSIGN_OR_RETURN(pl::Lease batch, loader->Next());
    const pl::ArrayView* image = batch.array("image");
    if (image == nullptr || image->shape != std::vector<int64_t>{2, 1, 24, 24, 24}) {
      return patchfeed::InternalError("the batch has no image of shape (2, 1, 24, 24, 24)");
    }
  }
  const std::string case_file = (std::filesystem::path(folder) / "case_000.b2nd").string();
  // OpenArray (codec/open_array.h) includes every format's folder: their installed headers too.
  PATCHFEED_ASSIGN_OR_RETURN(const std::unique_ptr<patchfeed::codec::ArrayReader> array,
                             patchfeed::codec::OpenArray(case_file));
  PATCHFEED_ASSIGN_OR_RETURN(
      const std::vector<std::byte> box,
      array->ReadBox(patchfeed::codec::Box{{0, 0, 0, 0}, {1, 4, 4, 4}}, std::vector<std::byte>(4)));
  if (box.size() != 4 * 4 * 4 * 4) {
    return patchfeed::InternalError("a 4^3 float box is not 256 bytes");
  }
  return patchfeed::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer FOLDER\n");
    return 2;
  }
  const patchfeed::Status status = Run(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "consumer: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("consumer: two augmented batches and a codec box from the installed patchfeed\n");
  return 0;
}
