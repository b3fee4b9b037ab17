// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/args.h"

#include <charconv>

namespace patchfeed::cli {

std::optional<std::string> ParsedArgs::Get(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end() || it->second.empty())
    return std::nullopt;
  return it->second.back();
}

Result<long long> ParsedArgs::GetInt(const std::string& name, long long fallback) const {
  const auto v = Get(name);
  if (!v)
    return fallback;
  long long out = 0;
  const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) {
    return InvalidArgumentError("--" + name + " expects an integer, got '" + *v + "'");
  }
  return out;
}

Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                             const std::set<std::string>& value_options,
                             const std::set<std::string>& flag_options) {
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      parsed.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flag_options.count(name)) {
      if (value)
        return InvalidArgumentError("--" + name + " takes no value");
      parsed.flags.insert(name);
    } else if (value_options.count(name)) {
      if (!value) {
        if (i + 1 >= args.size())
          return InvalidArgumentError("--" + name + " needs a value");
        value = args[++i];
      }
      parsed.options[name].push_back(*value);
    } else {
      std::string known;
      for (const auto* names : {&value_options, &flag_options}) {
        for (const std::string& n : *names)
          known += (known.empty() ? "--" : ", --") + n;
      }
      return InvalidArgumentError("unknown option --" + name + " (the options are " + known + ")");
    }
  }
  return parsed;
}

}  // namespace patchfeed::cli
