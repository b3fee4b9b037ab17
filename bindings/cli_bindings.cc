// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// _core.run_cli: the C++ `patchfeed` command (cli/run_cli.h) for `python -m patchfeed`.

#include <cstdio>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/gil_release.h"
#include "cli/run_cli.h"

namespace py = pybind11;

namespace patchfeed::internal_python {

void RegisterCli(py::module_& m) {
  m.def(
      "run_cli",
      [](const std::vector<std::string>& args) {
        ScopedGilRelease release;
        const int code = cli::RunCli(args);
        // The commands print through C stdio; flush so output is not held past the return
        // (Python's own sys.stdout is flushed by the caller before the call).
        std::fflush(stdout);
        std::fflush(stderr);
        return code;
      },
      py::arg("args"), "Runs `patchfeed ARGS...` and returns its exit code (prints to stdout).");
}

}  // namespace patchfeed::internal_python
