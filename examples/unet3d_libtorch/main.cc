// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// A small 3-D U-Net trained with libtorch on patchfeed batches: nnU-Net's augmentation runs in
// the loader's threads, the batch reaches torch as tensors over the ring slot (no copy), and a
// checkpoint holds the model, the optimiser and the loader's position, so a resumed run sees
// exactly the batches an uninterrupted one would have. Ctrl-C stops after the current step
// and saves. See README.md in this folder.
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "augment/crop_size.h"
#include "bindings/torch_cpp/batch_tensors.h"
#include "loader/loader.h"
#include "loader/synthetic_dataset.h"

namespace pl = patchfeed::loader;
namespace pt = patchfeed::torch_cpp;
using patchfeed::Result;
using patchfeed::Status;
using patchfeed::StrCat;

namespace {

std::atomic<bool> g_stop{false};
void OnSigint(int) { g_stop.store(true); }

struct Options {
  std::string dir;     // nnU-Net-style folder (or where --generate writes)
  int generate = 0;    // write this many synthetic cases into dir first
  int64_t steps = 50;  // train until this many steps in all (resumes count)
  int64_t batch = 2;
  std::vector<int64_t> patch = {32, 32, 32};
  int threads = 2;
  int classes = 3;  // background + labels 1..classes-1
  double lr = 1e-2;
  uint64_t seed = 42;
  std::string checkpoint;  // folder; empty: no checkpoint
  bool resume = false;
  bool print_batches = false;  // a line per step naming its batch (for tests)
};

bool ParseList(const std::string& s, std::vector<int64_t>* out) {
  out->clear();
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const std::string item =
        s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v <= 0) {
      return false;
    }
    out->push_back(v);
    if (comma == std::string::npos) {
      break;
    }
    pos = comma + 1;
  }
  return out->size() == 3;
}

bool Parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--resume") {
      o->resume = true;
    } else if (a == "--print-batches") {
      o->print_batches = true;
    } else if (!has_value) {
      return false;
    } else if (a == "--dir") {
      o->dir = argv[++i];
    } else if (a == "--generate") {
      o->generate = std::atoi(argv[++i]);
    } else if (a == "--steps") {
      o->steps = std::atoll(argv[++i]);
    } else if (a == "--batch") {
      o->batch = std::atoll(argv[++i]);
    } else if (a == "--patch") {
      if (!ParseList(argv[++i], &o->patch)) {
        return false;
      }
    } else if (a == "--threads") {
      o->threads = std::atoi(argv[++i]);
    } else if (a == "--classes") {
      o->classes = std::atoi(argv[++i]);
    } else if (a == "--lr") {
      o->lr = std::atof(argv[++i]);
    } else if (a == "--seed") {
      o->seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--checkpoint") {
      o->checkpoint = argv[++i];
    } else {
      return false;
    }
  }
  return !o->dir.empty() && o->steps > 0 && o->batch > 0 && o->threads > 0 && o->classes >= 2;
}

// ---- The model: two poolings, instance norm and LeakyReLU as nnU-Net's U-Nets use them. ----

struct ConvBlockImpl : torch::nn::Module {
  ConvBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1(register_module(
            "conv1",
            torch::nn::Conv3d(torch::nn::Conv3dOptions(in, out, 3).stride(stride).padding(1)))),
        norm1(register_module("norm1", torch::nn::InstanceNorm3d(
                                           torch::nn::InstanceNorm3dOptions(out).affine(true)))),
        conv2(register_module("conv2",
                              torch::nn::Conv3d(torch::nn::Conv3dOptions(out, out, 3).padding(1)))),
        norm2(register_module("norm2", torch::nn::InstanceNorm3d(
                                           torch::nn::InstanceNorm3dOptions(out).affine(true)))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::leaky_relu(norm1(conv1(x)), 0.01);
    return torch::leaky_relu(norm2(conv2(x)), 0.01);
  }

  torch::nn::Conv3d conv1, conv2;
  torch::nn::InstanceNorm3d norm1, norm2;
};
TORCH_MODULE(ConvBlock);

struct UNet3dImpl : torch::nn::Module {
  UNet3dImpl(int64_t in_channels, int64_t classes, int64_t width = 8)
      : enc1(register_module("enc1", ConvBlock(in_channels, width, 1))),
        enc2(register_module("enc2", ConvBlock(width, 2 * width, 2))),
        bottom(register_module("bottom", ConvBlock(2 * width, 4 * width, 2))),
        up2(register_module(
            "up2", torch::nn::ConvTranspose3d(
                       torch::nn::ConvTranspose3dOptions(4 * width, 2 * width, 2).stride(2)))),
        dec2(register_module("dec2", ConvBlock(4 * width, 2 * width, 1))),
        up1(register_module("up1",
                            torch::nn::ConvTranspose3d(
                                torch::nn::ConvTranspose3dOptions(2 * width, width, 2).stride(2)))),
        dec1(register_module("dec1", ConvBlock(2 * width, width, 1))),
        head(register_module("head",
                             torch::nn::Conv3d(torch::nn::Conv3dOptions(width, classes, 1)))) {}

  torch::Tensor forward(torch::Tensor x) {
    const torch::Tensor s1 = enc1(x);
    const torch::Tensor s2 = enc2(s1);
    torch::Tensor y = bottom(s2);
    y = dec2(torch::cat({up2(y), s2}, 1));
    y = dec1(torch::cat({up1(y), s1}, 1));
    return head(y);
  }

  ConvBlock enc1, enc2, bottom;
  torch::nn::ConvTranspose3d up2;
  ConvBlock dec2;
  torch::nn::ConvTranspose3d up1;
  ConvBlock dec1;
  torch::nn::Conv3d head;
};
TORCH_MODULE(UNet3d);

// nnU-Net's loss: cross-entropy plus the negative soft Dice of the foreground classes (over the
// batch as one volume, smooth 1e-5, as MemoryEfficientSoftDiceLoss with batch_dice).
torch::Tensor DiceCeLoss(const torch::Tensor& logits, const torch::Tensor& target) {
  const torch::Tensor ce = torch::nn::functional::cross_entropy(logits, target);
  const torch::Tensor probs = torch::softmax(logits, 1);
  const torch::Tensor onehot =
      torch::one_hot(target, logits.size(1)).permute({0, 4, 1, 2, 3}).to(probs.dtype());
  const std::vector<int64_t> axes = {0, 2, 3, 4};
  const torch::Tensor intersect = (probs * onehot).sum(axes);
  const torch::Tensor sums = probs.sum(axes) + onehot.sum(axes);
  const torch::Tensor dice = (2 * intersect + 1e-5) / (sums + 1e-5).clamp_min(1e-8);
  return ce - dice.slice(0, 1).mean();
}

// ---- Checkpoints: the model, the optimiser and the loader's position. ----

Status SaveCheckpoint(const std::string& folder, UNet3d& model, torch::optim::SGD& optimizer,
                      const pl::LoaderState& state, int64_t step) {
  std::filesystem::create_directories(folder);
  torch::save(model, folder + "/model.pt");
  torch::save(optimizer, folder + "/optimizer.pt");
  std::ofstream out(folder + "/loader_state.txt");
  out << state.seed << ' ' << state.epoch << ' ' << state.next_batch << ' ' << state.rank << ' '
      << state.world_size << ' ' << step << '\n';
  if (!out) {
    return patchfeed::InternalError(StrCat("cannot write ", folder, "/loader_state.txt"));
  }
  return Status::Ok();
}

Result<int64_t> LoadLoaderState(const std::string& folder, pl::LoaderState* state) {
  std::ifstream in(folder + "/loader_state.txt");
  int64_t step = 0;
  if (!(in >> state->seed >> state->epoch >> state->next_batch >> state->rank >>
        state->world_size >> step)) {
    return patchfeed::InvalidArgumentError(
        StrCat("no readable checkpoint in ", folder, " (loader_state.txt)"));
  }
  return step;
}

Status Train(const Options& o) {
  torch::manual_seed(static_cast<uint64_t>(o.seed));
  torch::set_num_threads(1);  // the loader has its own threads; keep the comparison fair
  pl::LoaderConfig config;
  if (o.generate > 0) {
    pl::SyntheticDatasetOptions synth;
    synth.num_cases = o.generate;
    synth.patch_size = o.patch;
    synth.spatial_shape = {o.patch[0] * 2, o.patch[1] * 2, o.patch[2] * 2};
    PATCHFEED_ASSIGN_OR_RETURN(config.dataset, pl::WriteSyntheticDataset(o.dir, synth));
  } else {
    PATCHFEED_ASSIGN_OR_RETURN(config.dataset, pl::Dataset::FromNnUNetFolder(o.dir));
  }
  // nnU-Net's initial patch size: the crop whose rotations by up to 30 degrees, scaled, still
  // cover the patch; need_to_pad lets samples reach the case borders, as nnU-Net pads.
  PATCHFEED_ASSIGN_OR_RETURN(config.sampler.patch_size, patchfeed::augment::CropForAugmentation(
                                                            o.patch, std::numbers::pi / 6));
  for (size_t d = 0; d < 3; ++d) {
    config.sampler.need_to_pad.push_back(config.sampler.patch_size[d] - o.patch[d]);
  }
  config.sampler.batch_size = o.batch;
  config.sampler.oversample_foreground = 0.33;
  config.sampler.seed = o.seed;
  config.num_threads = o.threads;
  config.consumer_produces = false;  // the trainer thread trains; the pool reads and augments
  config.augment.emplace();
  config.augment->pipeline = patchfeed::augment::NnUNetAugmentConfig::Default(o.patch);

  int64_t step = 0;
  if (o.resume) {
    pl::LoaderState state;
    PATCHFEED_ASSIGN_OR_RETURN(step, LoadLoaderState(o.checkpoint, &state));
    config.ResumeFrom(state);
    std::printf("resumed at step %lld (epoch %lld, batch %lld)\n", static_cast<long long>(step),
                static_cast<long long>(state.epoch), static_cast<long long>(state.next_batch));
  }
  PATCHFEED_ASSIGN_OR_RETURN(std::unique_ptr<pl::Loader> loader, pl::Loader::Create(config));
  std::printf(
      "%lld cases, crop %lldx%lldx%lld -> patch %lldx%lldx%lld, batch %lld, %d loader "
      "threads\n",
      static_cast<long long>(loader->num_cases()),
      static_cast<long long>(config.sampler.patch_size[0]),
      static_cast<long long>(config.sampler.patch_size[1]),
      static_cast<long long>(config.sampler.patch_size[2]), static_cast<long long>(o.patch[0]),
      static_cast<long long>(o.patch[1]), static_cast<long long>(o.patch[2]),
      static_cast<long long>(o.batch), o.threads);

  // As many input channels as the dataset's image has: (B, C, Z, Y, X).
  UNet3d model(loader->array_layout()[0].shape[1], o.classes);
  torch::optim::SGD optimizer(
      model->parameters(),
      torch::optim::SGDOptions(o.lr).momentum(0.99).nesterov(true).weight_decay(3e-5));
  if (o.resume) {
    try {
      torch::load(model, o.checkpoint + "/model.pt");
      torch::load(optimizer, o.checkpoint + "/optimizer.pt");
    } catch (const c10::Error& e) {
      return patchfeed::InvalidArgumentError(
          StrCat("cannot resume from ", o.checkpoint, ": ", e.what_without_backtrace()));
    }
  }

  std::signal(SIGINT, OnSigint);
  using Clock = std::chrono::steady_clock;
  double wait_s = 0, train_s = 0, first_losses = 0, last_losses = 0;
  int64_t first_n = 0, last_n = 0;
  const int64_t start = step;
  const int64_t window = std::max<int64_t>(1, (o.steps - start) / 4);
  while (step < o.steps && !g_stop.load()) {
    const auto t0 = Clock::now();
    PATCHFEED_ASSIGN_OR_RETURN(pl::Lease lease, loader->Next());
    const int64_t epoch = lease.epoch(), batch_index = lease.batch_index();
    const void* slot = lease.arrays()[0].data;
    PATCHFEED_ASSIGN_OR_RETURN(const pt::BatchTensors batch, pt::ToTensors(std::move(lease)));
    if (batch.tensors[0].data_ptr() != slot) {  // the contract of ToTensors: no copy
      return patchfeed::InternalError("the image tensor is not the ring slot's memory");
    }
    const auto t1 = Clock::now();
    const torch::Tensor& image = *batch.find("image");
    const torch::Tensor target = batch.find("seg")->squeeze(1).to(torch::kLong);
    // Labels outside [0, classes) would make one_hot and cross_entropy throw mid-step: say
    // which batch and which label instead.
    const int64_t max_label = target.max().item<int64_t>();
    if (max_label >= o.classes || target.min().item<int64_t>() < 0) {
      return patchfeed::InvalidArgumentError(
          StrCat("epoch ", epoch, ", batch ", batch_index, ": label ", max_label, " outside [0, ",
                 o.classes, "); pass --classes ", max_label + 1, " or more"));
    }
    if (o.print_batches) {
      // What the step saw: its batch and a checksum of the voxels (equal for equal batches).
      std::printf("batch step %lld epoch %lld index %lld sum %.6e\n", static_cast<long long>(step),
                  static_cast<long long>(epoch), static_cast<long long>(batch_index),
                  image.to(torch::kDouble).sum().item<double>() + target.sum().item<double>());
    }
    optimizer.zero_grad();
    const torch::Tensor loss = DiceCeLoss(model->forward(image), target);
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 12.0);
    optimizer.step();
    const auto t2 = Clock::now();
    wait_s += std::chrono::duration<double>(t1 - t0).count();
    train_s += std::chrono::duration<double>(t2 - t1).count();
    const double value = loss.item<double>();
    ++step;
    if (step - start <= window) {
      first_losses += value;
      ++first_n;
    }
    if (step > o.steps - window) {
      last_losses += value;
      ++last_n;
    }
    if (step % 10 == 0 || step == o.steps) {
      std::printf("step %lld/%lld loss %.4f\n", static_cast<long long>(step),
                  static_cast<long long>(o.steps), value);
    }
  }
  if (g_stop.load()) {
    std::printf("interrupted at step %lld\n", static_cast<long long>(step));
  }
  const pl::LoaderMetrics m = loader->metrics();
  std::printf(
      "time: training %.2f s, trainer waiting for batches %.2f s, loader waiting for "
      "free slots %.2f s\n",
      train_s, wait_s, static_cast<double>(m.producer_wait_ns) * 1e-9);
  std::printf("zero-copy: every step's tensors were the ring slot's memory\n");
  if (first_n > 0 && last_n > 0) {
    std::printf("mean loss: first %lld steps %.4f, last %lld steps %.4f\n",
                static_cast<long long>(first_n), first_losses / static_cast<double>(first_n),
                static_cast<long long>(last_n), last_losses / static_cast<double>(last_n));
  }
  if (!o.checkpoint.empty()) {
    PATCHFEED_RETURN_IF_ERROR(
        SaveCheckpoint(o.checkpoint, model, optimizer, loader->state(), step));
    std::printf("checkpoint: %s (step %lld)\n", o.checkpoint.c_str(), static_cast<long long>(step));
  }
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, &o) || (o.resume && o.checkpoint.empty())) {
    std::fprintf(stderr,
                 "usage: unet3d_libtorch --dir DIR [--generate N] [--steps N] [--batch B]\n"
                 "         [--patch Z,Y,X] [--threads T] [--classes K] [--lr LR] [--seed S]\n"
                 "         [--checkpoint FOLDER [--resume]] [--print-batches]\n");
    return 2;
  }
  Status status;
  try {
    status = Train(o);
  } catch (const c10::Error& e) {  // torch reports its errors by throwing
    status = patchfeed::InternalError(e.what_without_backtrace());
  } catch (const std::exception& e) {
    status = patchfeed::InternalError(e.what());
  }
  if (!status.ok()) {
    std::fprintf(stderr, "unet3d_libtorch: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
