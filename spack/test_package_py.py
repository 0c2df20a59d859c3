#!/usr/bin/env python3
"""Checks spack/packages/ibla/package.py without Spack.

Spack cannot be installed here, so the recipe is imported under a small stub
of Spack's package API (the `spack.package` names it uses, the CMakePackage
and CudaPackage build systems, a spec object) in both of Spack's import
layouts: 0.x, where spack.package exports the build systems, and 1.x, where
they come from spack_repo.builtin.build_systems. The test then checks what the
recipe declares (versions, variants, dependencies, conflicts, requirements) by
evaluating its directives against hand-made concrete specs, and the CMake
arguments it produces for them. It also checks the recipe against the
project: the version and minimum CMake of CMakeLists.txt, and that every
IBLA_* cache variable it sets exists in the CMake files.

What this does not check: Spack's concretizer, real Spack semantics beyond
the subset the stub implements (the stub raises on spec syntax it does not
know, so a recipe using more fails here instead of passing unjudged), and a
real build. Standard library only:
    python3 spack/test_package_py.py [-v]
IBLA_SPACK_RECIPE=<file> checks another recipe file (used to see the test
fail on broken copies).
"""
import contextlib
import importlib.util
import os
import re
import sys
import types
import unittest

# No __pycache__ next to the recipe in the source tree.
sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RECIPE = os.environ.get("IBLA_SPACK_RECIPE", os.path.join(HERE, "packages", "ibla", "package.py"))

# --------------------------------------------------------------------------
# Versions and a subset of Spack's spec syntax
# --------------------------------------------------------------------------


def parse_version(text):
    return tuple(int(p) if p.isdigit() else p for p in text.split("."))


def version_satisfies(version, constraint):
    """Spack's @constraint for numeric versions: `a:b`, `a:`, `:b`, `a`;
    an upper bound or an exact `a` also admits every a.x (`@:4` holds 4.6)."""
    v = parse_version(version)

    def at_most(hi):
        return v <= hi or v[: len(hi)] == hi

    if ":" in constraint:
        lo, hi = constraint.split(":", 1)
        if lo and v < parse_version(lo):
            return False
        return not hi or at_most(parse_version(hi))
    c = parse_version(constraint)
    return v[: len(c)] == c


_TOKEN = re.compile(
    r"\s*(?:(?P<dep>\^)|(?P<flag>[+~][A-Za-z0-9_-]+)|(?P<kv>[A-Za-z0-9_-]+=[A-Za-z0-9_.,-]+)"
    r"|(?P<ver>@[A-Za-z0-9_.:]+)|(?P<name>[A-Za-z0-9_-]+)|(?P<other>\S+))"
)


class Constraint:
    """One node's part of a spec string: name, variants, version."""

    def __init__(self):
        self.name = None
        self.variants = {}
        self.version = None

    def holds_for(self, node):
        if self.name is not None and self.name != node.name and self.name not in node.provides:
            return False
        if self.version is not None and not version_satisfies(node.version, self.version):
            return False
        for key, want in self.variants.items():
            if key not in node.variants:
                return False
            have = node.variants[key].value
            if isinstance(want, bool) or isinstance(have, bool):
                if have != want:
                    return False
            elif isinstance(have, tuple):
                if not set(want.split(",")) <= set(have):
                    return False
            elif have != want:
                return False
        return True


def parse_spec(text):
    """'+a ~b c=d @1:2 ^dep+e' -> (root Constraint, [dependency Constraints])."""
    root, deps, current, pos = Constraint(), [], None, 0
    current = root
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        pos = m.end()
        if m.group("other"):
            raise NotImplementedError(f"the stub does not understand {m.group('other')!r} in {text!r}")
        if m.group("dep"):
            current = Constraint()
            deps.append(current)
        elif m.group("flag"):
            flag = m.group("flag")
            current.variants[flag[1:]] = flag[0] == "+"
        elif m.group("kv"):
            key, value = m.group("kv").split("=", 1)
            current.variants[key] = value
        elif m.group("ver"):
            current.version = m.group("ver")[1:]
        else:
            if current.name is not None or current.variants or current.version:
                raise NotImplementedError(f"unexpected name {m.group('name')!r} in {text!r}")
            current.name = m.group("name")
    for d in deps:
        if d.name is None:
            raise NotImplementedError(f"anonymous ^ in {text!r}")
    return root, deps


class FakeVariant:
    def __init__(self, value):
        self.value = value


class FakeLibs(list):
    def joined(self, sep=" "):
        return sep.join(self)


class FakeSpec:
    """A concrete spec: name, version, variants (bool, str, or tuple for
    multi-valued), dependencies (transitive lookup), the virtuals a node
    provides, libraries per query parameters, extra attributes."""

    def __init__(self, name, version="1.0", variants=None, deps=(), provides=(), libs=None,
                 attrs=None, package=None):
        self.name = name
        self.version = version
        self.variants = {k: FakeVariant(v) for k, v in (variants or {}).items()}
        self.deps = list(deps)
        self.provides = set(provides)
        self.prefix = f"/spack/opt/{name}-{version}"
        self._libs = libs or {}
        self.package = package or types.SimpleNamespace()
        for key, value in (attrs or {}).items():
            setattr(self, key, value)

    def nodes(self):
        yield self
        for d in self.deps:
            yield from d.nodes()

    def find(self, name):
        for node in list(self.nodes())[1:]:
            if node.name == name or name in node.provides:
                return node
        return None

    def __getitem__(self, query):
        name, _, params = query.partition(":")
        node = self.find(name)
        if node is None:
            raise KeyError(f"{self.name} has no dependency {name}")
        return QueriedSpec(node, tuple(sorted(p for p in params.split(",") if p)))

    def satisfies(self, text):
        root, deps = parse_spec(text)
        if not root.holds_for(self):
            return False
        for d in deps:
            node = self.find(d.name)
            if node is None or not d.holds_for(node):
                return False
        return True


class QueriedSpec:
    """spec['name:params']: the node, with `libs` answering the query (as
    Spack's SpecBuildInterface forwards `libs` to the package)."""

    def __init__(self, node, params):
        self._node, self._params = node, params

    @property
    def libs(self):
        return FakeLibs(self._node._libs[self._params])

    def __getattr__(self, key):
        return getattr(self._node, key)


# --------------------------------------------------------------------------
# Stub of Spack's package API
# --------------------------------------------------------------------------


class Directive:
    def __init__(self, kind, args, kwargs, when):
        self.kind, self.args, self.kwargs, self.when = kind, args, kwargs, when

    def active(self, spec):
        return all(spec.satisfies(w) for w in self.when)

    def __repr__(self):
        return f"{self.kind}{self.args} when={self.when}"


class Api:
    """A fresh stub per import: directives are queued while a class body runs
    and collected by the metaclass, `when` contexts stack their conditions."""

    def __init__(self):
        self.pending = []
        self.when_stack = []
        api = self

        def directive(kind):
            def record(*args, **kwargs):
                when = list(api.when_stack)
                if kwargs.get("when") is not None:
                    when.append(kwargs.pop("when"))
                kwargs.pop("when", None)
                api.pending.append(Directive(kind, args, kwargs, when))

            record.__name__ = kind
            return record

        @contextlib.contextmanager
        def when(condition):
            api.when_stack.append(condition)
            try:
                yield
            finally:
                api.when_stack.pop()

        class DirectiveMeta(type):
            def __new__(mcs, name, bases, namespace):
                cls = super().__new__(mcs, name, bases, namespace)
                cls._own_directives = list(api.pending)
                api.pending.clear()
                return cls

            @property
            def directives(cls):
                out = []
                for klass in reversed(cls.__mro__):
                    out += klass.__dict__.get("_own_directives", [])
                return out

        class PackageBase(metaclass=DirectiveMeta):
            run_tests = False

            def __init__(self, spec):
                self.spec = spec

            @classmethod
            def has_variant(cls, name):
                return any(d.kind == "variant" and d.args[0] == name for d in cls.directives)

        class CMakePackage(PackageBase):
            # spack's CMakeBuilder.define / define_from_variant, same output.
            @staticmethod
            def define(cmake_var, value):
                if isinstance(value, bool):
                    kind, value = "BOOL", "ON" if value else "OFF"
                else:
                    kind = "STRING"
                    if isinstance(value, (list, tuple)):
                        value = ";".join(str(v) for v in value)
                    else:
                        value = str(value)
                return f"-D{cmake_var}:{kind}={value}"

            def define_from_variant(self, cmake_var, variant=None):
                if variant is None:
                    variant = cmake_var.lower()
                if not self.has_variant(variant):
                    raise KeyError(f'"{variant}" is not a variant of "{type(self).__name__}"')
                if variant not in self.spec.variants:
                    return ""
                value = self.spec.variants[variant].value
                if isinstance(value, (tuple, list)):
                    value = sorted(value)
                return self.define(cmake_var, value)

        def any_combination_of(*values):
            return ("none",) + values

        variant = directive("variant")
        depends_on = directive("depends_on")

        class CudaPackage(PackageBase):
            # The part of Spack's CudaPackage a dependent sees: +cuda, the
            # multi-valued cuda_arch, and the dependency on cuda.
            cuda_arch_values = ("60", "70", "75", "80", "86", "89", "90", "90a", "100", "120")
            variant("cuda", default=False, description="Build with CUDA")
            variant("cuda_arch", description="CUDA architecture",
                    values=any_combination_of(*cuda_arch_values), sticky=True, when="+cuda")
            depends_on("cuda", when="+cuda")

        self.names = {
            "PackageBase": PackageBase,
            "version": directive("version"),
            "variant": variant,
            "depends_on": depends_on,
            "conflicts": directive("conflicts"),
            "requires": directive("requires"),
            "maintainers": directive("maintainers"),
            "license": directive("license"),
            "when": when,
            "any_combination_of": any_combination_of,
        }
        self.CMakePackage, self.CudaPackage = CMakePackage, CudaPackage


def load_recipe(layout):
    """Imports the recipe under the stub; layout '0.x' or '1.x'."""
    api = Api()
    saved = {k: v for k, v in sys.modules.items() if k == "spack" or k.startswith(("spack.", "spack_repo"))}
    spack = types.ModuleType("spack")
    package = types.ModuleType("spack.package")
    exported = dict(api.names)
    if layout == "0.x":
        exported.update(CMakePackage=api.CMakePackage, CudaPackage=api.CudaPackage)
        modules = {"spack": spack, "spack.package": package, "spack_repo": None}
    else:
        cmake = types.ModuleType("spack_repo.builtin.build_systems.cmake")
        cmake.CMakePackage = api.CMakePackage
        cuda = types.ModuleType("spack_repo.builtin.build_systems.cuda")
        cuda.CudaPackage = api.CudaPackage
        modules = {"spack": spack, "spack.package": package}
        for name in ("spack_repo", "spack_repo.builtin", "spack_repo.builtin.build_systems"):
            modules[name] = types.ModuleType(name)
            modules[name].__path__ = []
        modules[cmake.__name__], modules[cuda.__name__] = cmake, cuda
    for key, value in exported.items():
        setattr(package, key, value)
    package.__all__ = sorted(exported)
    spack.package = package
    try:
        for key in saved:
            del sys.modules[key]
        sys.modules.update(modules)
        spec = importlib.util.spec_from_file_location(f"ibla_recipe_{layout.replace('.', '')}", RECIPE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for key in modules:
            sys.modules.pop(key, None)
        sys.modules.update(saved)
    return api, module


# --------------------------------------------------------------------------
# Evaluating the declarations against concrete specs
# --------------------------------------------------------------------------


def effective_variants(cls):
    """name -> kwargs of the variant; a later definition under the same
    condition replaces an earlier one (how Kokkos and ibla narrow cuda_arch)."""
    by_key = {}
    for d in cls.directives:
        if d.kind == "variant":
            by_key[(d.args[0], tuple(d.when))] = d.kwargs
    return {name: kw for (name, _), kw in by_key.items()}


def problems(cls, spec):
    """Why `spec` could not be a concretization of the recipe: unmet active
    dependencies, active conflicts, unmet active requirements."""
    out = []
    for d in cls.directives:
        if not d.active(spec):
            continue
        if d.kind == "depends_on":
            root, deps = parse_spec(d.args[0])
            node = spec.find(root.name)
            if node is None:
                out.append(f"missing dependency {d.args[0]!r}")
            elif deps or not root.holds_for(node):
                out.append(f"{node.name} does not satisfy {d.args[0]!r}")
        elif d.kind == "conflicts" and spec.satisfies(d.args[0]):
            out.append(f"conflict {d.args[0]!r}")
        elif d.kind == "requires" and not any(spec.satisfies(r) for r in d.args):
            out.append(f"requirement {d.args!r} unmet")
    return out


def kokkos(version="4.6.00", cxx="/spack/gcc/bin/g++", on_spec=True, **variants):
    """A concrete Kokkos. on_spec: kokkos_cxx set on the spec (Spack 0.x's
    setup_dependent_package), else only on the package (newer recipes)."""
    base = {"openmp": False, "hwloc": False, "cuda": False, "cxxstd": "17", "serial": True}
    base.update(variants)
    if version_satisfies(version, ":4") and base["cuda"]:
        base.setdefault("cuda_lambda", False)
    if not base["cuda"]:
        base.pop("cuda_arch", None)
    if on_spec:
        return FakeSpec("kokkos", version, base, attrs={"kokkos_cxx": cxx})
    return FakeSpec("kokkos", version, base, package=types.SimpleNamespace(kokkos_cxx=cxx))


NETLIB_LIBS = {
    ("c", "fortran"): ["/nl/lib/libcblas.so", "/nl/lib/libblas.so"],
    ("fortran",): ["/nl/lib/liblapack.so"],
    ("c",): ["/nl/lib/liblapacke.so"],
}


def ibla(kokkos_spec, version="main", cuda=False, cuda_arch=None, tests=False, extra=(), **variants):
    values = {"openmp": False, "hwloc": False, "tests": tests, "cuda": cuda}
    values.update(variants)
    deps = [kokkos_spec, FakeSpec("cmake", "3.27.9"), FakeSpec("gcc", "12.2.0", provides=("c", "cxx"))]
    if cuda:
        values["cuda_arch"] = cuda_arch or "none"
        deps.append(FakeSpec("cuda", "12.4.0"))
    deps += list(extra)
    return FakeSpec("ibla", version, values, deps)


def test_deps(blas="netlib"):
    gtest = FakeSpec("googletest", "1.14.0")
    if blas == "netlib":
        nl = FakeSpec("netlib-lapack", "3.12.0", {"lapacke": True, "external-blas": False},
                      provides=("blas", "lapack"), libs=NETLIB_LIBS)
        nl.prefix = "/nl"
        return [gtest, nl]
    ob = FakeSpec("openblas", "0.3.26", provides=("blas", "lapack"),
                  libs={k: ["/ob/lib/libopenblas.so"] for k in NETLIB_LIBS})
    return [gtest, ob]


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


# --------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------


class RecipeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.api, module = load_recipe("0.x")
        cls.Ibla = module.Ibla
        cls.api1, module1 = load_recipe("1.x")
        cls.Ibla1 = module1.Ibla

    def args(self, spec, cls=None):
        pkg = (cls or self.Ibla)(spec)
        return [a for a in pkg.cmake_args() if a != ""]

    def test_imports_under_both_spack_layouts(self):
        self.assertTrue(issubclass(self.Ibla, self.api.CMakePackage))
        self.assertTrue(issubclass(self.Ibla, self.api.CudaPackage))
        # Under 1.x the build systems must come from spack_repo.builtin.
        self.assertTrue(issubclass(self.Ibla1, self.api1.CMakePackage))
        self.assertTrue(issubclass(self.Ibla1, self.api1.CudaPackage))

    def test_versions(self):
        versions = {d.args[0]: d.kwargs for d in self.Ibla.directives if d.kind == "version"}
        self.assertEqual(versions, {"main": {"branch": "main"}, "0.1.0": {"tag": "v0.1.0"}})
        project = re.search(r"project\(ibla VERSION ([0-9.]+)", read("CMakeLists.txt")).group(1)
        self.assertIn(project, versions, "the recipe lacks the version of CMakeLists.txt")
        self.assertTrue(self.Ibla.git.endswith(".git"))

    def test_variants(self):
        variants = effective_variants(self.Ibla)
        self.assertLessEqual({"openmp", "hwloc", "tests", "cuda", "cuda_arch"}, set(variants))
        for name in ("openmp", "hwloc", "tests", "cuda"):
            self.assertIs(variants[name]["default"], False, name)
        arch = variants["cuda_arch"]
        # Single-valued, as one Kokkos builds for one architecture.
        self.assertIs(arch["multi"], False)
        self.assertEqual(arch["default"], "none")
        self.assertLessEqual({"80", "90"}, set(arch["values"]))

    def test_cmake_minimum_matches_cmakelists(self):
        minimum = re.search(r"cmake_minimum_required\(VERSION ([0-9.]+)\)", read("CMakeLists.txt")).group(1)
        cmake = [d for d in self.Ibla.directives if d.kind == "depends_on" and d.args[0].startswith("cmake")]
        self.assertEqual([d.args[0] for d in cmake], [f"cmake@{minimum}:"])
        self.assertEqual(cmake[0].kwargs.get("type"), "build")
        self.assertEqual(cmake[0].when, [])

    def test_kokkos_versions(self):
        good = ibla(kokkos("3.4.01"))
        self.assertEqual(problems(self.Ibla, good), [])
        self.assertEqual(problems(self.Ibla, ibla(kokkos("4.6.02"))), [])
        self.assertEqual(problems(self.Ibla, ibla(kokkos("4.7.00"))), [])
        # Until the mdspan mapping exists ibla's headers #error on these.
        self.assertTrue(problems(self.Ibla, ibla(kokkos("4.7.01"))))
        self.assertTrue(problems(self.Ibla, ibla(kokkos("5.0.0", cxxstd="20"))))
        self.assertTrue(problems(self.Ibla, ibla(kokkos("3.3.01"))))
        self.assertIn("missing dependency", " ".join(problems(self.Ibla, FakeSpec("ibla", "main", {
            "openmp": False, "hwloc": False, "tests": False, "cuda": False}, [FakeSpec("cmake", "3.27.9")]))))

    def test_cxx17_required(self):
        self.assertEqual(problems(self.Ibla, ibla(kokkos("3.4.01", cxxstd="14"))),
                         ["conflict '^kokkos cxxstd=14'"])

    def test_openmp_and_hwloc_forwarded(self):
        self.assertEqual(problems(self.Ibla, ibla(kokkos(openmp=True), openmp=True)), [])
        self.assertTrue(problems(self.Ibla, ibla(kokkos(openmp=False), openmp=True)))
        self.assertEqual(problems(self.Ibla, ibla(kokkos(hwloc=True), hwloc=True)), [])
        self.assertTrue(problems(self.Ibla, ibla(kokkos(hwloc=False), hwloc=True)))
        # ~openmp does not forbid an OpenMP Kokkos: backends are Kokkos' choice.
        self.assertEqual(problems(self.Ibla, ibla(kokkos(openmp=True), openmp=False)), [])

    def test_cuda_forwarded(self):
        ok = kokkos(cuda=True, cuda_arch="80", cuda_lambda=True)
        self.assertEqual(problems(self.Ibla, ibla(ok, cuda=True, cuda_arch="80")), [])
        # +cuda, cuda_arch and extended lambdas all reach ^kokkos.
        for bad in (kokkos(cuda=False),
                    kokkos(cuda=True, cuda_arch="90", cuda_lambda=True),
                    kokkos(cuda=True, cuda_arch="80", cuda_lambda=False)):
            with self.subTest(kokkos={k: v.value for k, v in bad.variants.items()}):
                self.assertTrue(problems(self.Ibla, ibla(bad, cuda=True, cuda_arch="80")))
        self.assertEqual(problems(self.Ibla, ibla(kokkos(cuda=True, cuda_arch="90", cuda_lambda=True),
                                                  cuda=True, cuda_arch="90")), [])
        # Every architecture CudaPackage knows is forwarded.
        for arch in self.api.CudaPackage.cuda_arch_values:
            spec = ibla(kokkos(cuda=True, cuda_arch=arch, cuda_lambda=True), cuda=True, cuda_arch=arch)
            self.assertEqual(problems(self.Ibla, spec), [], arch)
        # Kokkos 5 has no cuda_lambda variant (always on): not asked for.
        # (Only the version bound objects to Kokkos 5 today.)
        k5 = kokkos("5.0.0", cxxstd="20", cuda=True, cuda_arch="80")
        self.assertEqual(problems(self.Ibla, ibla(k5, cuda=True, cuda_arch="80")),
                         ["kokkos does not satisfy 'kokkos@3.4:4.7.00'"])
        # No architecture: refused rather than built for none.
        none = ibla(kokkos(cuda=True, cuda_arch="none", cuda_lambda=True), cuda=True)
        self.assertIn("conflict '+cuda'", problems(self.Ibla, none))
        # ~cuda puts no CUDA constraint on Kokkos.
        self.assertEqual(problems(self.Ibla, ibla(kokkos(cuda=True, cuda_arch="80", cuda_lambda=True))), [])

    def test_tests_dependencies(self):
        self.assertEqual(problems(self.Ibla, ibla(kokkos(), tests=True, extra=test_deps())), [])
        missing = problems(self.Ibla, ibla(kokkos(), tests=True))
        for dep in ("googletest", "blas", "lapack"):
            self.assertIn(f"missing dependency '{dep}'", missing)
        # The oracle is netlib: another BLAS/LAPACK provider is refused.
        self.assertTrue(problems(self.Ibla, ibla(kokkos(), tests=True, extra=test_deps("openblas"))))
        # ~tests needs none of them.
        self.assertEqual(problems(self.Ibla, ibla(kokkos(), tests=False)), [])

    def test_cmake_args_openmp(self):
        spec = ibla(kokkos(openmp=True), openmp=True)
        self.assertEqual(self.args(spec), [
            "-DKokkos_ROOT:STRING=/spack/opt/kokkos-4.6.00",
            "-DCMAKE_CXX_COMPILER:STRING=/spack/gcc/bin/g++",
            "-DIBLA_ENABLE_TESTS:BOOL=OFF",
            "-DIBLA_ENABLE_BENCHMARKS:BOOL=OFF",
            "-DIBLA_ENABLE_INSTALL:BOOL=ON",
        ])

    def test_cmake_args_cuda(self):
        wrapper = "/spack/kokkos-nvcc-wrapper/bin/nvcc_wrapper"
        for on_spec in (True, False):  # Spack 0.x and newer kokkos recipes
            with self.subTest(kokkos_cxx_on_spec=on_spec):
                k = kokkos(cuda=True, cuda_arch="80", cuda_lambda=True, cxx=wrapper, on_spec=on_spec)
                args = self.args(ibla(k, cuda=True, cuda_arch="80"))
                self.assertEqual(args, [
                    "-DKokkos_ROOT:STRING=/spack/opt/kokkos-4.6.00",
                    f"-DCMAKE_CXX_COMPILER:STRING={wrapper}",
                    "-DIBLA_ENABLE_TESTS:BOOL=OFF",
                    "-DIBLA_ENABLE_BENCHMARKS:BOOL=OFF",
                    "-DIBLA_ENABLE_INSTALL:BOOL=ON",
                ])
                self.assertEqual(self.args(ibla(k, cuda=True, cuda_arch="80"), self.Ibla1), args)

    def test_cmake_args_tests(self):
        args = self.args(ibla(kokkos(), tests=True, extra=test_deps()))
        self.assertIn("-DIBLA_ENABLE_TESTS:BOOL=ON", args)
        self.assertIn("-DIBLA_ENABLE_BENCHMARKS:BOOL=OFF", args)
        self.assertIn("-DIBLA_REF_BLAS:STRING=/nl/lib/libcblas.so;/nl/lib/libblas.so", args)
        self.assertIn("-DIBLA_REF_LAPACK:STRING=/nl/lib/liblapack.so", args)
        self.assertIn("-DIBLA_REF_LAPACKE:STRING=/nl/lib/liblapacke.so", args)
        # ~tests: tests off and no oracle libraries asked for.
        args = self.args(ibla(kokkos(), tests=False))
        self.assertIn("-DIBLA_ENABLE_TESTS:BOOL=OFF", args)
        self.assertFalse([a for a in args if a.startswith("-DIBLA_REF_")])

    def test_cmake_variables_exist_in_project(self):
        cmake_text = read("CMakeLists.txt") + read("unit_tests/CMakeLists.txt")
        args = self.args(ibla(kokkos(), tests=True, extra=test_deps()))
        names = {re.match(r"-D([A-Za-z0-9_]+):", a).group(1) for a in args}
        self.assertLessEqual({"Kokkos_ROOT", "CMAKE_CXX_COMPILER", "IBLA_ENABLE_TESTS"}, names)
        for name in sorted(n for n in names if n.startswith("IBLA_")):
            with self.subTest(variable=name):
                self.assertRegex(cmake_text, rf"(option|find_library)\(\s*{name}\b",
                                 f"{name} is set by the recipe but not defined by the CMake files")

    def test_repository_layout(self):
        repo = read("spack/repo.yaml")
        self.assertRegex(repo, r"(?m)^repo:\s*$")
        self.assertRegex(repo, r"(?m)^\s+namespace:\s*['\"]?ibla['\"]?\s*$")
        # Package API v1.0 layout: packages/<name>/package.py, class = name.
        self.assertTrue(os.path.isfile(os.path.join(HERE, "packages", "ibla", "package.py")))
        self.assertEqual(self.Ibla.__name__, "Ibla")


if __name__ == "__main__":
    unittest.main()
