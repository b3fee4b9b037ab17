// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_BINDINGS_AUGMENT_ARRAYS_H_
#define PATCHFEED_BINDINGS_AUGMENT_ARRAYS_H_

// NumPy arrays as augment::SampleViews for the augmentation bindings (intensity, cascade).

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "augment/sample_view.h"

namespace patchfeed::internal_python {

// A (C, *spatial) C-contiguous array of exactly T as a view. In-place functions must not get
// a converted copy, so a wrong dtype or layout is a TypeError instead of a silent copy.
template <typename T>
augment::SampleView<T> ViewOf(const pybind11::array& array, const char* name) {
  namespace py = pybind11;
  using U = std::remove_const_t<T>;
  // bool arrays are byte arrays to C++ (regions are 0/1 bytes).
  const bool dtype_ok = py::isinstance<py::array_t<U>>(array) ||
                        (std::is_same_v<U, uint8_t> && array.dtype().kind() == 'b');
  if (!dtype_ok || !(array.flags() & py::array::c_style) ||
      (!std::is_const_v<T> && !array.writeable())) {
    throw py::type_error(std::string(name) + " must be a writeable C-contiguous " +
                         py::str(py::dtype::of<U>()).cast<std::string>() + " array");
  }
  if (array.ndim() != 3 && array.ndim() != 4)
    throw py::value_error(std::string(name) + " must be (C, *spatial) with 2 or 3 spatial dims");
  std::vector<int64_t> spatial;
  for (py::ssize_t d = 1; d < array.ndim(); ++d)
    spatial.push_back(array.shape(d));
  return augment::SampleView<T>::Contiguous(static_cast<T*>(const_cast<void*>(array.data())),
                                            array.shape(0), spatial);
}

// A new C-contiguous array, made by numpy.empty: in this build pybind11's own array
// constructors gave arrays with zero strides (dtype itemsize read as 0).
inline pybind11::array NewArray(const char* dtype, const std::vector<pybind11::ssize_t>& shape) {
  pybind11::tuple t(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    t[d] = shape[d];
  return pybind11::module_::import("numpy").attr("empty")(t, dtype).cast<pybind11::array>();
}

}  // namespace patchfeed::internal_python

#endif  // PATCHFEED_BINDINGS_AUGMENT_ARRAYS_H_
