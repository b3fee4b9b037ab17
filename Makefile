# The README's two commands, and the builds CI runs. Each target configures its own build
# folder with CMake; run `make help` for the list.

PREFIX ?= $(if $(filter 0,$(shell id -u)),/usr/local,$(HOME)/.local)
JOBS ?= $(shell nproc)
CMAKE ?= cmake
GEN := $(if $(shell command -v ninja),-G Ninja,)

.PHONY: help deps test-deps demo install test pip-install pip-test asan-test tsan-test fuzz bench \
  bench-python lint format clean

help:
	@echo "make demo       pip install . (builds the C++ core), run 'python -m patchfeed demo'"
	@echo "make install    build the C++ binary and install 'patchfeed' to $(PREFIX)/bin"
	@echo "make test       build with tests and Python bindings, run ctest and pytest, then pip-test"
	@echo "make pip-install pip-install the package (pyproject.toml) into $(PIP_VENV), reusing build/test"
	@echo "make pip-test   pip-install, then run the CLI and the package tests against the wheel"
	@echo "make asan-test  the C++ tests (codec, loader, examples) under AddressSanitizer + UBSan"
	@echo "make tsan-test  the concurrent-reader and loader tests under ThreadSanitizer"
	@echo "make fuzz       build the libFuzzer targets with clang and run each for FUZZ_SECONDS"
	@echo "make bench      build Google Benchmark binaries and run the codec comparison"
	@echo "make lint       layering check, clang-format check of every C++ file, clang -Werror build"
	@echo "make format     clang-format every C++ file in place"

deps:
	tools/install_deps.sh

test-deps:
	tools/install_deps.sh --with-tests

# The C++ binary and libraries only (no Python), for C++ users.
install: deps
	$(CMAKE) -S . -B build/release $(GEN) -DCMAKE_BUILD_TYPE=Release -DPATCHFEED_BUILD_TESTS=OFF
	$(CMAKE) --build build/release -j $(JOBS)
	$(CMAKE) --install build/release --prefix $(PREFIX)

# The README's first command: the pip path (pyproject.toml, scikit-build-core, the project's
# CMake in build/wheel), then the package's CLI runs the demo.
demo: deps
	python3 -m pip install -q --no-build-isolation .
	cd /tmp && python3 -m patchfeed demo

test: test-deps
	$(CMAKE) -S . -B build/test $(GEN) -DCMAKE_BUILD_TYPE=Release -DPATCHFEED_BUILD_TESTS=ON \
	  -DPATCHFEED_BUILD_PYTHON=ON -DPATCHFEED_WERROR=ON
	$(CMAKE) --build build/test -j $(JOBS)
	$(CMAKE) --install build/test --prefix $(PREFIX)
	tests/check_layering.sh
	cd build/test && ctest --output-on-failure -j $(JOBS)
	PATCHFEED_BUILD_DIR=$(CURDIR)/build/test PATCHFEED_CLI=$(CURDIR)/build/test/cli/patchfeed \
	  python3 -m pytest -q tests/python
	$(MAKE) pip-test

# The pip path (pyproject.toml, scikit-build-core) into a venv that sees the system packages
# (torch, blosc2, scikit-build-core, pybind11). build-dir=build/test with that folder's options
# reuses what `make test` compiled: only _core is checked and the wheel packed. The venv keeps
# the installed package away from the system Python, whose tests import the build tree.
PIP_VENV ?= build/venv
PIP_BUILD_DIR ?= build/test
pip-install:
	test -x $(PIP_VENV)/bin/python || python3 -m venv --system-site-packages $(PIP_VENV)
	$(PIP_VENV)/bin/python -m pip install -q --no-build-isolation --no-deps \
	  -C build-dir=$(PIP_BUILD_DIR) -C cmake.define.PATCHFEED_BUILD_TESTS=ON \
	  -C cmake.define.PATCHFEED_BUILD_EXAMPLES=ON -C cmake.define.PATCHFEED_WERROR=ON .

pip-test: pip-install
	$(PIP_VENV)/bin/patchfeed --help >/dev/null
	cd /tmp && $(abspath $(PIP_VENV))/bin/python -m patchfeed demo --cases 2 --steps 5 --patch 32,32,32
	cd /tmp && $(abspath $(PIP_VENV))/bin/python -c "import patchfeed, os; \
	  assert patchfeed.__file__.startswith(os.path.realpath('$(abspath $(PIP_VENV))')), patchfeed.__file__"
	cd /tmp && $(abspath $(PIP_VENV))/bin/python -c "from numcodecs import get_codec; \
	  c = get_codec({'id': 'patchfeed_blosc'}); assert type(c).__module__ == 'patchfeed.numcodecs', c"
	cd /tmp && $(abspath $(PIP_VENV))/bin/python -c "import zarr; from zarr.registry import get_codec_class; \
	  zarr.config.set({'codecs.blosc': 'patchfeed.zarr_blosc.BloscCodec'}); \
	  assert get_codec_class('blosc').__module__ == 'patchfeed.zarr_blosc'"
	$(PIP_VENV)/bin/python -m pytest -q tests/python/test_package_cli.py \
	  tests/python/test_loader_batches.py

# -O1 with line tables: AddressSanitizer's recommended level, and half the compile time of -O2 -g
# (the build is most of this target's time in CI); reports keep file and line.
asan-test: test-deps
	$(CMAKE) -S . -B build/asan $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPATCHFEED_BUILD_TESTS=ON \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
	  -DPATCHFEED_SANITIZE="address;undefined"
	$(CMAKE) --build build/asan -j $(JOBS)
	cd build/asan && ctest --output-on-failure -j $(JOBS)

tsan-test: test-deps
	$(CMAKE) -S . -B build/tsan $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPATCHFEED_BUILD_TESTS=ON \
	  -DPATCHFEED_SANITIZE=thread
	$(CMAKE) --build build/tsan -j $(JOBS) --target patchfeed_codec_test patchfeed_storage_test \
	  patchfeed_storage_remote_test patchfeed_loader_test patchfeed_loader_remote_test
	TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/codec/patchfeed_codec_test --gtest_filter='*Concurrent*'
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/loader/tsan.supp" \
	  build/tsan/tests/storage/patchfeed_storage_test
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/loader/tsan.supp" \
	  build/tsan/tests/storage/patchfeed_storage_remote_test
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/loader/tsan.supp" \
	  build/tsan/tests/loader/patchfeed_loader_test
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/loader/tsan.supp" \
	  build/tsan/tests/loader/patchfeed_loader_remote_test

# Fixed seeds and run counts make CI's fuzzing reproducible (a finding fails the same way every
# time); FUZZ_SECONDS caps the time. Raise the run counts or drop -seed to explore locally.
# The frame fuzzer reads each input twice (mapped and positional), so it runs fewer inputs.
FUZZ_SECONDS ?= 60
CHUNK_FUZZ_RUNS ?= 200000
FRAME_FUZZ_RUNS ?= 700000
ZARR_META_FUZZ_RUNS ?= 200000
ZARR_V3_META_FUZZ_RUNS ?= 200000
ZARR_READ_FUZZ_RUNS ?= 40000
S3_ANSWER_FUZZ_RUNS ?= 200000
PRECOMPUTED_INFO_FUZZ_RUNS ?= 200000
CSEG_FUZZ_RUNS ?= 200000
MINISHARD_FUZZ_RUNS ?= 200000
FUZZ_SEED ?= 1
fuzz: test-deps
	CC=clang CXX=clang++ $(CMAKE) -S . -B build/fuzz $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DPATCHFEED_BUILD_TESTS=OFF -DPATCHFEED_BUILD_FUZZERS=ON -DPATCHFEED_SANITIZE="address;undefined"
	$(CMAKE) --build build/fuzz -j $(JOBS) --target patchfeed_chunk_fuzzer patchfeed_frame_fuzzer \
	  patchfeed_zarr_meta_fuzzer patchfeed_zarr_v3_meta_fuzzer patchfeed_zarr_read_fuzzer \
	  patchfeed_s3_answer_fuzzer patchfeed_precomputed_info_fuzzer \
	  patchfeed_compressed_segmentation_fuzzer patchfeed_minishard_index_fuzzer
	rm -rf build/fuzz/corpus && mkdir -p build/fuzz/corpus && \
	  cp tests/codec/testdata/golden/*.chunk tests/fuzz/chunk_regressions/* build/fuzz/corpus/
	build/fuzz/tests/fuzz/patchfeed_chunk_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -runs=$(CHUNK_FUZZ_RUNS) -seed=$(FUZZ_SEED) -max_len=65536 -print_final_stats=1 \
	  build/fuzz/corpus
	rm -rf build/fuzz/frame_corpus && PYTHONPATH=build/test/python \
	  python3 tests/fuzz/make_frame_corpus.py build/fuzz/frame_corpus && \
	  cp tests/fuzz/frame_regressions/* build/fuzz/frame_corpus/
	build/fuzz/tests/fuzz/patchfeed_frame_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -runs=$(FRAME_FUZZ_RUNS) -seed=$(FUZZ_SEED) -max_len=65536 -rss_limit_mb=1024 \
	  -print_final_stats=1 build/fuzz/frame_corpus
	rm -rf build/fuzz/zarr_meta_corpus && cp -r tests/fuzz/zarr_meta_corpus build/fuzz/
	build/fuzz/tests/fuzz/patchfeed_zarr_meta_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -runs=$(ZARR_META_FUZZ_RUNS) -seed=$(FUZZ_SEED) -max_len=4096 -print_final_stats=1 \
	  build/fuzz/zarr_meta_corpus
	rm -rf build/fuzz/zarr_v3_meta_corpus && cp -r tests/fuzz/zarr_v3_meta_corpus build/fuzz/
	build/fuzz/tests/fuzz/patchfeed_zarr_v3_meta_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -runs=$(ZARR_V3_META_FUZZ_RUNS) -seed=$(FUZZ_SEED) -max_len=4096 -print_final_stats=1 \
	  build/fuzz/zarr_v3_meta_corpus
	rm -rf build/fuzz/zarr_read_corpus && \
	  python3 tests/fuzz/make_zarr_read_corpus.py build/fuzz/zarr_read_corpus && \
	  cp tests/fuzz/zarr_read_regressions/* build/fuzz/zarr_read_corpus/
	build/fuzz/tests/fuzz/patchfeed_zarr_read_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -runs=$(ZARR_READ_FUZZ_RUNS) -seed=$(FUZZ_SEED) -max_len=8192 -print_final_stats=1 \
	  build/fuzz/zarr_read_corpus
	rm -rf /dev/shm/patchfeed_zarr_fuzz_* $${TMPDIR:-/tmp}/patchfeed_zarr_fuzz_*
	rm -rf build/fuzz/s3_answer_corpus && cp -r tests/fuzz/s3_answer_corpus build/fuzz/
	build/fuzz/tests/fuzz/patchfeed_s3_answer_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -runs=$(S3_ANSWER_FUZZ_RUNS) -seed=$(FUZZ_SEED) -max_len=4096 -print_final_stats=1 \
	  build/fuzz/s3_answer_corpus
	rm -rf build/fuzz/precomputed_info_corpus && cp -r tests/fuzz/precomputed_info_corpus build/fuzz/
	build/fuzz/tests/fuzz/patchfeed_precomputed_info_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -runs=$(PRECOMPUTED_INFO_FUZZ_RUNS) -seed=$(FUZZ_SEED) -max_len=4096 -print_final_stats=1 \
	  build/fuzz/precomputed_info_corpus
	rm -rf build/fuzz/compressed_segmentation_corpus && \
	  cp -r tests/fuzz/compressed_segmentation_corpus build/fuzz/
	build/fuzz/tests/fuzz/patchfeed_compressed_segmentation_fuzzer \
	  -max_total_time=$(FUZZ_SECONDS) -runs=$(CSEG_FUZZ_RUNS) -seed=$(FUZZ_SEED) -max_len=8192 \
	  -print_final_stats=1 build/fuzz/compressed_segmentation_corpus
	rm -rf build/fuzz/minishard_index_corpus && cp -r tests/fuzz/minishard_index_corpus build/fuzz/
	build/fuzz/tests/fuzz/patchfeed_minishard_index_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	  -runs=$(MINISHARD_FUZZ_RUNS) -seed=$(FUZZ_SEED) -max_len=4096 -print_final_stats=1 \
	  build/fuzz/minishard_index_corpus

bench: test-deps
	$(CMAKE) -S . -B build/bench $(GEN) -DCMAKE_BUILD_TYPE=Release -DPATCHFEED_BUILD_TESTS=OFF \
	  -DPATCHFEED_BUILD_BENCHMARKS=ON -DPATCHFEED_BUILD_PYTHON=ON
	$(CMAKE) --build build/bench -j $(JOBS)
	build/bench/bench/patchfeed_codec_bench --benchmark_min_time=0.2
	PYTHONPATH=build/bench/python python3 bench/e2e/codec_vs_blosc2.py

# Section 4 of bench/README.md: patchfeed.Loader vs torch DataLoader vs python-blosc2 threads.
bench-python: pip-install
	$(PIP_VENV)/bin/python bench/e2e/loader_vs_dataloader.py

# Every tracked C++ file; third-party code lives outside the repository.
CXX_SOURCES = $(shell git ls-files '*.cc' '*.h')

# CI's static checks: the layering rule, formatting (clang-format 14, Debian 12's), and a
# clang build of everything with warnings as errors (GCC's is `make test`). Clang's warnings
# come from its front end, not the optimiser, so the build runs at -O0 without debug info:
# the same warnings in a fraction of a Release build's time.
lint: test-deps
	tests/check_layering.sh
	clang-format --dry-run --Werror $(CXX_SOURCES)
	CC=clang CXX=clang++ $(CMAKE) -S . -B build/clang $(GEN) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_C_FLAGS_DEBUG=-O0 \
	  -DPATCHFEED_BUILD_TESTS=ON -DPATCHFEED_BUILD_PYTHON=ON -DPATCHFEED_BUILD_EXAMPLES=ON \
	  -DPATCHFEED_WERROR=ON
	$(CMAKE) --build build/clang -j $(JOBS)

format:
	clang-format -i $(CXX_SOURCES)

clean:
	rm -rf build
