// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "bindings/loader_options.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "bindings/augment_options.h"
#include "common/check.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

using loader::LoaderConfig;

[[noreturn]] void ThrowWrongType(const char* option, py::handle value) {
  throw py::type_error(std::string("loader option '") + option + "' has the wrong type (" +
                       py::str(py::type::of(value)).cast<std::string>() + ")");
}

// ---- How a field's type converts: Value<T>::FromPython(option, value) and ToPython(field) ---

/// A value pybind11 converts both ways (numbers, bool, str, Dataset); a failed conversion is a
/// TypeError naming the option instead of pybind11's generic message.
template <typename T>
struct Value {
  static T FromPython(const char* option, py::handle value) {
    try {
      return py::cast<T>(value);
    } catch (const py::cast_error&) {
      ThrowWrongType(option, value);
    }
  }
  static py::object ToPython(const T& x) { return py::cast(x); }
};

/// A list from any iterable, as Python's list() takes it, item by item.
template <typename T>
struct Value<std::vector<T>> {
  static std::vector<T> FromPython(const char* option, py::handle value) {
    if (!py::isinstance<py::iterable>(value)) {
      ThrowWrongType(option, value);
    }
    std::vector<T> out;
    for (const py::handle item : value) {
      out.push_back(Value<T>::FromPython(option, item));
    }
    return out;
  }
  static py::object ToPython(const std::vector<T>& xs) {
    py::list out;
    for (const T& x : xs) {
      out.append(Value<T>::ToPython(x));
    }
    return out;
  }
};

/// `arrays` items: (array name, pad value or None).
template <>
struct Value<loader::ArrayOptions> {
  static loader::ArrayOptions FromPython(const char* option, py::handle value) {
    auto [name, pad] =
        Value<std::pair<std::string, std::optional<double>>>::FromPython(option, value);
    return {std::move(name), pad};
  }
  static py::object ToPython(const loader::ArrayOptions& a) {
    return py::make_tuple(a.name, py::cast(a.pad_value));
  }
};

/// The Python spelling of each enum: the only one (patchfeed.Loader passes strings through).
template <typename E>
struct EnumNames;
template <>
struct EnumNames<loader::EpochMode> {
  static constexpr std::pair<loader::EpochMode, std::string_view> kNames[] = {
      {loader::EpochMode::kInfinite, "infinite"},
      {loader::EpochMode::kFiniteWithReplacement, "with_replacement"},
      {loader::EpochMode::kFiniteWithoutReplacement, "without_replacement"},
  };
};
template <>
struct EnumNames<loader::ForegroundOptions::Mode> {
  using Mode = loader::ForegroundOptions::Mode;
  static constexpr std::pair<Mode, std::string_view> kNames[] = {
      {Mode::kAuto, "auto"},
      {Mode::kOn, "on"},
      {Mode::kOff, "off"},
  };
};
template <>
struct EnumNames<storage::IoMode> {
  static constexpr std::pair<storage::IoMode, std::string_view> kNames[] = {
      {storage::IoMode::kMmap, "mmap"},
      {storage::IoMode::kPread, "pread"},
  };
};
template <>
struct EnumNames<storage::IoBackend> {
  static constexpr std::pair<storage::IoBackend, std::string_view> kNames[] = {
      {storage::IoBackend::kAuto, "auto"},
      {storage::IoBackend::kIoUring, "io_uring"},
      {storage::IoBackend::kPreadPool, "pread"},
  };
};
template <>
struct EnumNames<loader::ErrorPolicy> {
  static constexpr std::pair<loader::ErrorPolicy, std::string_view> kNames[] = {
      {loader::ErrorPolicy::kFail, "fail"},
      {loader::ErrorPolicy::kSkip, "skip"},
  };
};

/// An enum spelt as a string; anything else is a ValueError listing the spellings.
template <typename E>
requires std::is_enum_v<E> && requires { EnumNames<E>::kNames; }
struct Value<E> {
  static E FromPython(const char* option, py::handle value) {
    if (py::isinstance<py::str>(value)) {
      const auto s = value.cast<std::string>();
      for (const auto& [e, name] : EnumNames<E>::kNames) {
        if (s == name) {
          return e;
        }
      }
    }
    std::string allowed;
    const size_t n = std::size(EnumNames<E>::kNames);
    for (size_t i = 0; i < n; ++i) {
      allowed += i == 0 ? "'" : i + 1 < n ? ", '" : " or '";
      allowed += EnumNames<E>::kNames[i].second;
      allowed += "'";
    }
    throw py::value_error(std::string(option) + " must be " + allowed + ", not " +
                          py::repr(value).cast<std::string>());
  }
  static py::object ToPython(E e) {
    for (const auto& [x, name] : EnumNames<E>::kNames) {
      if (x == e) {
        return py::str(name.data(), name.size());
      }
    }
    PATCHFEED_DCHECK(false);  // an enumerator without a spelling above
    return py::none();
  }
};

/// pin_memory: None is kAuto (pin when CUDA is there), a true value kRequire, a false one
/// kOff (any value by its truth, as `if pin_memory:`).
template <>
struct Value<loader::PinMode> {
  static loader::PinMode FromPython(const char* /*option*/, py::handle value) {
    if (value.is_none()) {
      return loader::PinMode::kAuto;
    }
    const bool pin = py::bool_(py::reinterpret_borrow<py::object>(value));
    return pin ? loader::PinMode::kRequire : loader::PinMode::kOff;
  }
  static py::object ToPython(loader::PinMode mode) {
    switch (mode) {
      case loader::PinMode::kAuto:
        return py::none();
      case loader::PinMode::kRequire:
        return py::bool_(true);
      case loader::PinMode::kOff:
        return py::bool_(false);
    }
    PATCHFEED_DCHECK(false);
    return py::none();
  }
};

/// augmentation: None, or the dict (any mapping) AugmentOptionsFromDict reads.
template <>
struct Value<std::optional<loader::AugmentOptions>> {
  static std::optional<loader::AugmentOptions> FromPython(const char* /*option*/,
                                                          py::handle value) {
    if (value.is_none()) {
      return std::nullopt;
    }
    return AugmentOptionsFromDict(py::dict(py::reinterpret_borrow<py::object>(value)));
  }
  static py::object ToPython(const std::optional<loader::AugmentOptions>& a) {
    if (a.has_value()) {
      // Only None can be a keyword default here; loader_option_defaults() then fails loudly.
      throw py::value_error("the default of loader option 'augmentation' must be None");
    }
    return py::none();
  }
};

/// An optional string: None is nullopt.
template <>
struct Value<std::optional<std::string>> {
  static std::optional<std::string> FromPython(const char* option, py::handle value) {
    if (value.is_none()) {
      return std::nullopt;
    }
    if (!py::isinstance<py::str>(value)) {
      ThrowWrongType(option, value);
    }
    return value.cast<std::string>();
  }
  static py::object ToPython(const std::optional<std::string>& s) {
    return s ? py::object(py::str(*s)) : py::object(py::none());
  }
};

/// Foreground indexes made in Python (_core.ForegroundIndex, e.g. from nnU-Net's
/// class_locations), one per case; None for a case whose index the loader builds.
template <>
struct Value<std::shared_ptr<const loader::ForegroundIndex>> {
  static std::shared_ptr<const loader::ForegroundIndex> FromPython(const char* option,
                                                                   py::handle value) {
    if (value.is_none()) {
      return nullptr;
    }
    try {
      return py::cast<std::shared_ptr<loader::ForegroundIndex>>(value);
    } catch (const py::cast_error&) {
      ThrowWrongType(option, value);
    }
  }
  static py::object ToPython(const std::shared_ptr<const loader::ForegroundIndex>& index) {
    return py::cast(std::const_pointer_cast<loader::ForegroundIndex>(index));
  }
};

/// A list whose keyword default is None: None sets the empty list, which reads back as None.
template <typename V>
struct NoneIsEmpty {
  static V FromPython(const char* option, py::handle value) {
    return value.is_none() ? V{} : Value<V>::FromPython(option, value);
  }
  static py::object ToPython(const V& xs) {
    return xs.empty() ? py::object(py::none()) : Value<V>::ToPython(xs);
  }
};

// ---- The table ---------------------------------------------------------------------------

struct LoaderOption {
  const char* name;
  /// Sets the option's field of `config` from a Python value (`option` is `name`).
  void (*set)(const char* option, LoaderConfig& config, py::handle value);
  /// The field as the Python value that sets it; null for a required option.
  py::object (*get)(const LoaderConfig& config);
};

/// An option whose field `Field{}(config)` returns (a captureless lambda, so Field is
/// default-constructible) converts with Codec<the field's type>.
template <template <typename> class Codec = Value, typename Field>
constexpr LoaderOption Option(const char* name, Field /*field*/) {
  using T = std::remove_cvref_t<decltype(Field{}(std::declval<LoaderConfig&>()))>;
  return {name,
          [](const char* option, LoaderConfig& config, py::handle value) {
            Field{}(config) = Codec<T>::FromPython(option, value);
          },
          [](const LoaderConfig& config) { return Codec<T>::ToPython(Field{}(config)); }};
}

/// An option without a default: patchfeed.Loader requires it.
template <template <typename> class Codec = Value, typename Field>
constexpr LoaderOption Required(const char* name, Field field) {
  LoaderOption option = Option<Codec>(name, field);
  option.get = nullptr;
  return option;
}

// The LoaderConfig field `member` (e.g. `sampler.seed`) as a captureless lambda: works on a
// const or mutable config, and its type is default-constructible, which Option relies on.
#define PATCHFEED_FIELD(member) \
  [](auto& c) -> auto& { return c.member; }

// In patchfeed.Loader's keyword order. What Python resolves before the call (dataset path,
// rank and world size, arrays with pad_values) and what it alone uses (device, as_numpy) are
// listed in tests/python/test_loader_options.py; start_epoch and start_batch are set by
// load_state_dict.
constexpr LoaderOption kOptions[] = {
    Required("dataset", PATCHFEED_FIELD(dataset)),
    Required("patch_size", PATCHFEED_FIELD(sampler.patch_size)),
    Option("batch_size", PATCHFEED_FIELD(sampler.batch_size)),
    Option("arrays", PATCHFEED_FIELD(arrays)),
    Option("epoch_mode", PATCHFEED_FIELD(sampler.epoch_mode)),
    Option("samples_per_epoch", PATCHFEED_FIELD(sampler.samples_per_epoch)),
    Option("oversample_foreground", PATCHFEED_FIELD(sampler.oversample_foreground)),
    Option("probabilistic_oversampling", PATCHFEED_FIELD(sampler.probabilistic_oversampling)),
    Option<NoneIsEmpty>("need_to_pad", PATCHFEED_FIELD(sampler.need_to_pad)),
    Option<NoneIsEmpty>("case_weights", PATCHFEED_FIELD(sampler.case_weights)),
    Option("annotated_key", PATCHFEED_FIELD(sampler.annotated_key)),
    Option("foreground", PATCHFEED_FIELD(foreground.mode)),
    Option<NoneIsEmpty>("foreground_keys", PATCHFEED_FIELD(foreground.keys)),
    Option("foreground_cache_dir", PATCHFEED_FIELD(foreground.cache_dir)),
    Option<NoneIsEmpty>("foreground_locations", PATCHFEED_FIELD(foreground.indexes)),
    Option("seed", PATCHFEED_FIELD(sampler.seed)),
    Option("rank", PATCHFEED_FIELD(sampler.rank)),
    Option("world_size", PATCHFEED_FIELD(sampler.world_size)),
    Option("num_threads", PATCHFEED_FIELD(num_threads)),
    Option("ring_size", PATCHFEED_FIELD(ring_size)),
    Option("memory_budget", PATCHFEED_FIELD(memory_budget)),
    Option("pin_memory", PATCHFEED_FIELD(pin_memory)),
    Option("io_mode", PATCHFEED_FIELD(io_mode)),
    Option("io_depth", PATCHFEED_FIELD(io_depth)),
    Option("io_backend", PATCHFEED_FIELD(io_backend)),
    Option("error_policy", PATCHFEED_FIELD(error_policy)),
    Option("max_redraws", PATCHFEED_FIELD(max_redraws)),
    Option("check_finite", PATCHFEED_FIELD(check_finite)),
    Option("max_open_files", PATCHFEED_FIELD(max_open_files)),
    Option("min_task_bytes", PATCHFEED_FIELD(min_task_bytes)),
    Option("augmentation", PATCHFEED_FIELD(augment)),
    Option("consumer_produces", PATCHFEED_FIELD(consumer_produces)),
    Option("start_epoch", PATCHFEED_FIELD(start_epoch)),
    Option("start_batch", PATCHFEED_FIELD(start_batch)),
};

#undef PATCHFEED_FIELD

}  // namespace

LoaderConfig LoaderConfigFromKwargs(const py::kwargs& kwargs) {
  LoaderConfig config;
  for (const auto& [key, value] : kwargs) {
    const auto name = key.cast<std::string>();
    const LoaderOption* found = nullptr;
    for (const LoaderOption& option : kOptions) {
      if (name == option.name) {
        found = &option;
        break;
      }
    }
    if (found == nullptr) {
      throw py::type_error("unexpected loader option '" + name + "'");
    }
    found->set(found->name, config, value);
  }
  return config;
}

py::list LoaderOptionNames() {
  py::list out;
  for (const LoaderOption& option : kOptions) {
    out.append(option.name);
  }
  return out;
}

py::dict LoaderOptionDefaults() {
  const LoaderConfig defaults;
  py::dict out;
  for (const LoaderOption& option : kOptions) {
    if (option.get != nullptr) {
      out[option.name] = option.get(defaults);
    }
  }
  return out;
}

}  // namespace patchfeed::internal_python
