# Spack recipe for ibla, following the conventions of the kokkos-kernels
# recipe: ibla is built against the Kokkos of the spec (Kokkos_ROOT) with the
# compiler that Kokkos wants (kokkos_cxx: nvcc_wrapper for CUDA builds with
# ^kokkos+wrapper), and its backend variants only forward to ^kokkos: ibla is
# header-only and has no backends of its own.
#
# Written for Spack 0.23 (build systems exported by spack.package; 0.23 is
# the first with language dependencies such as depends_on("cxx")) and Spack
# 1.x (build systems in the builtin repository, spack_repo.builtin); the
# package repository uses the Package API v1.0 layout, which both read.
# Checked here only by spack/test_package_py.py, which imports this file under
# a stub of Spack's package API (Spack itself cannot be installed here).
from spack.package import *

try:  # Spack >= 1.0
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
except ImportError:  # Spack 0.x: already imported from spack.package
    pass


class Ibla(CMakePackage, CudaPackage):
    """Interleaved Batched Linear Algebra: header-only C++17 kernels on Kokkos
    for hundreds of thousands of tiny dense problems (1x1 to 32x32) at once,
    stored in block-interleaved layouts."""

    # PLACEHOLDER: the project has no public repository yet. Point both at it
    # once published; until then use a local checkout (`spack develop`, see
    # spack/README.md). The tag v0.1.0 does not exist yet either.
    homepage = "https://github.com/ibla-project/ibla"
    git = "https://github.com/ibla-project/ibla.git"

    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")  # project(ibla VERSION 0.1.0)

    variant("openmp", default=False, description="Require a Kokkos with the OpenMP backend")
    variant("hwloc", default=False, description="Require a Kokkos with hwloc (thread placement)")
    variant(
        "tests",
        default=False,
        description="Build the unit tests (GoogleTest; netlib BLAS/LAPACK/LAPACKE as the oracle)",
    )
    # One Kokkos builds for exactly one GPU architecture, so ibla's cuda_arch
    # is single-valued like Kokkos' own (CudaPackage's is multi-valued).
    variant(
        "cuda_arch",
        description="CUDA architecture (forwarded to Kokkos)",
        values=("none",) + CudaPackage.cuda_arch_values,
        default="none",
        multi=False,
        sticky=True,
        when="+cuda",
    )
    conflicts("+cuda", when="cuda_arch=none", msg="ibla+cuda needs a cuda_arch, e.g. cuda_arch=90")

    depends_on("cxx", type="build")
    # 3.21: PROJECT_IS_TOP_LEVEL (cmake_minimum_required of CMakeLists.txt).
    depends_on("cmake@3.21:", type="build")

    # Header-only, but the exported target links Kokkos::kokkos, so Kokkos is
    # a link dependency of every consumer. 3.4 is the oldest Kokkos tested.
    # Upper bound: layouts/ibla/layouts/kokkos_view_offset.hpp stops with
    # #error on a Kokkos whose View is built on mdspan (4.7 onwards, unless
    # Kokkos_ENABLE_IMPL_VIEW_LEGACY; Spack's kokkos recipe sets that for
    # 4.7.00 only). Lift the bound when ibla's mdspan mapping lands.
    depends_on("kokkos@3.4:4.7.00")
    # ibla's headers are C++17.
    conflicts("^kokkos cxxstd=14", msg="ibla needs a Kokkos built for C++17 or newer")

    # Backends are those of Kokkos: the variants only constrain ^kokkos.
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos+hwloc", when="+hwloc")
    depends_on("kokkos+cuda", when="+cuda")
    # The kernels and tests launch KOKKOS_LAMBDAs, which need extended lambdas
    # on CUDA; Kokkos 5 always has them and dropped the variant.
    depends_on("kokkos+cuda_lambda", when="+cuda ^kokkos@:4")
    # ibla's cuda_arch becomes Kokkos' (Kokkos_ARCH_AMPERE80 and so on).
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")

    with when("+tests"):
        depends_on("googletest", type=("build", "link"))
        depends_on("blas", type=("build", "link"))
        depends_on("lapack", type=("build", "link"))
        # The tests compare with the reference implementation (see
        # unit_tests/CMakeLists.txt): netlib's BLAS with CBLAS and LAPACK with
        # LAPACKE, all from netlib-lapack.
        requires(
            "^netlib-lapack+lapacke~external-blas",
            msg="ibla's tests use netlib BLAS/CBLAS/LAPACK/LAPACKE as their oracle",
        )

    def _kokkos_cxx(self):
        """The C++ compiler Kokkos was built with (nvcc_wrapper for +cuda)."""
        kokkos = self.spec["kokkos"]
        try:
            # What kokkos-kernels reads: set on the spec by the
            # setup_dependent_package of Spack 0.x's kokkos recipe.
            return kokkos.kokkos_cxx
        except AttributeError:
            # Newer kokkos recipes (spack-packages, Spack 1.x) make it a
            # property of the package instead.
            return kokkos.package.kokkos_cxx

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            # As kokkos-kernels does: ibla's kernels are Kokkos code and must
            # be compiled like Kokkos (through nvcc_wrapper on CUDA).
            self.define("CMAKE_CXX_COMPILER", self._kokkos_cxx()),
            # Only the variant: the tests need googletest and netlib, which
            # only +tests brings (`spack install --test=root ibla+tests` then
            # runs them through CMakePackage's check phase).
            self.define_from_variant("IBLA_ENABLE_TESTS", "tests"),
            # The benchmarks compare with OpenBLAS and others and write CSV
            # files: nothing an installation needs.
            self.define("IBLA_ENABLE_BENCHMARKS", False),
            self.define("IBLA_ENABLE_INSTALL", True),
        ]
        if spec.satisfies("+tests"):
            # unit_tests/CMakeLists.txt looks for libblas, liblapack and
            # liblapacke; netlib-lapack keeps the CBLAS functions in a
            # separate libcblas, so hand CMake the exact libraries.
            args += [
                self.define("IBLA_REF_BLAS", spec["blas:c,fortran"].libs.joined(";")),
                self.define("IBLA_REF_LAPACK", spec["lapack:fortran"].libs.joined(";")),
                self.define("IBLA_REF_LAPACKE", spec["lapack:c"].libs.joined(";")),
            ]
        return args
