"""C code from the traced functions (SPEC §15.4): generate, compile, load, time.

::

    f = liedyn.symbolic.inverse_dynamics_function(model, 2)
    src = generate_c(f, "build")                  # build/inverse_dynamics_2.c (+ .h)
    g = compile_function(f, "build")              # compiled with the system compiler, loaded
    out = g(base_pose=C0, base_twist=V, q=q)      # the same call as f
    t = time_c(f, "build", base_pose=C0, base_twist=V, q=q)   # timed from C, no Python in the loop

The generated code is CasADi's: plain C99, no dependency, one entry point
``int NAME(const double** arg, double** res, long long* iw, double* w, int mem)``
(inputs and outputs dense, column-major, in the order of ``f.name_in()`` /
``f.name_out()``) and its helpers ``NAME_work``, ``NAME_n_in``, … . It can be
compiled into any program; :func:`compile_function` builds a shared library
and loads it with ``casadi.external``.

Compile time grows with the C: about linearly in its size, and faster than
linearly in the size of its largest function at ``-O1`` and above (one
flattened graph is one function). Before running the compiler every
function here predicts the compiler's time from the generated file
(:func:`predict_compile`) and, when it exceeds ``warn_after`` seconds, issues
a :class:`LongCompileWarning` with the size and the predicted time, and what
makes it shorter (``structure="shared"``, a lower optimisation level).

The files are code that is compiled and loaded, so every function here
refuses (``ValueError`` naming ``directory``) a directory that is not the
user's or that another user can write to, or with such a folder above it
(the kernel cache's rule, :mod:`liedyn._jit`: a sticky shared folder such as
``/tmp`` only above a folder the user owns). Missing folders are created
with mode 0700; every file appears whole, written under a temporary name in
the same directory and renamed.
"""

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

import casadi as ca

from .. import _jit
from ._checked import CheckedFunction, check_numeric_inputs

# -O2 rather than -O3: the generated functions are long straight-line code,
# where -O3 mostly adds compile time.
FLAGS = ("-O2", "-march=native", "-fno-math-errno")

# Compiler CPU seconds per MB of generated C by optimisation level: a
# function of s MB costs RATE · s · (1 + s / SCALE). Fitted to gcc 12.2
# (x86-64, -march=native) on CasADi's C of the recursions and their
# Jacobians, from 60 kB to 6 MB, flat and shared (SPEC §15.4 has the
# measurements); another compiler or machine differs by a factor, which is
# all a warning needs.
COMPILE_RATE = {"0": 3.5, "1": 18.0, "2": 20.0, "3": 22.0, "s": 18.0}
COMPILE_SCALE = {"0": 30.0, "1": 0.6, "2": 0.23, "3": 0.23, "s": 0.4}
WARN_AFTER = 30.0


class LongCompileWarning(UserWarning):
    """A compile predicted to take longer than ``warn_after`` seconds."""


class CompileEstimate(NamedTuple):
    """:func:`predict_compile`'s result."""
    bytes: int                 # size of the C file
    largest_function: int      # bytes of its largest function
    level: str                 # the optimisation level it was predicted for ("0", "1", "2", ...)
    seconds: float             # predicted compiler CPU time


def _level(flags):
    """The optimisation level of ``flags`` (the last ``-O…``; ``"0"`` without one)."""
    level = "0"
    for f in flags:
        if isinstance(f, str) and f.startswith("-O"):
            level = f[2:] or "1"
    return level if level in COMPILE_RATE else "2"


def _function_sizes(text):
    """Bytes of each top-level definition of CasADi's C (split after each ``\n}\n``)."""
    ends = [m.end() for m in re.finditer(r"\n}\n", text)]
    starts = [0] + ends[:-1]
    return [e - s for s, e in zip(starts, ends)] or [len(text)]


def predict_compile(source, flags=FLAGS):
    """Predicted compiler CPU time of the C file ``source`` with ``flags``:
    ``Σ RATE · s · (1 + s / SCALE)`` over its functions (``s`` in MB; the
    constants ``COMPILE_RATE``, ``COMPILE_SCALE`` of the module, by
    optimisation level). Returns a :class:`CompileEstimate`."""
    text = Path(source).read_text()
    level = _level(flags)
    rate, scale = COMPILE_RATE[level], COMPILE_SCALE[level]
    sizes = _function_sizes(text)
    seconds = sum(rate * (b / 1e6) * (1 + b / 1e6 / scale) for b in sizes)
    return CompileEstimate(len(text.encode()), max(sizes), level, seconds)


def _warn_if_long(src, flags, warn_after):
    est = predict_compile(src, flags)
    if est.seconds > warn_after:
        lower = [(f"-O{lv}", predict_compile(src, (f"-O{lv}",)).seconds)
                 for lv in ("0", "1") if lv < est.level]
        hint = ("; structure='shared' builds the function from shared steps (C of their "
                "size, not the graph's)" + "".join(f"; {fl} is predicted {t:.0f} s"
                                                   for fl, t in lower))
        warnings.warn(f"compiling {src.name} ({est.bytes / 1e6:.2f} MB of C, largest function "
                      f"{est.largest_function / 1e6:.2f} MB) with -O{est.level}: predicted "
                      f"{est.seconds:.0f} s of compiler CPU time{hint}", LongCompileWarning,
                      stacklevel=3)
    return est


def _warn_after(x):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer,
                                                             np.floating)):
        raise TypeError(f"warn_after: expected a number of seconds, got {type(x).__name__}")
    if not x >= 0:
        raise ValueError(f"warn_after: expected seconds ≥ 0, got {x}")
    return float(x)


def _compiler(compiler):
    """The compiler command as a list: ``compiler``, else ``$CC``, else
    ``cc``, split as a shell would (``CC="gcc -m64"``: ``gcc`` and ``-m64``;
    nothing is run through a shell)."""
    if compiler is not None and not isinstance(compiler, str):
        raise TypeError(f"compiler: expected a str, got {type(compiler).__name__}")
    given = compiler or os.environ.get("CC") or "cc"
    try:
        cc = shlex.split(given)
    except ValueError as err:
        raise ValueError(f"compiler: cannot split {given!r} into words ({err})") from None
    if not cc or shutil.which(cc[0]) is None:
        raise RuntimeError(f"compiler: {cc[0] if cc else given!r} (from {given!r}) not found; "
                           f"install a C compiler (e.g. gcc) or pass compiler=")
    return cc


def _check_function(f):
    if not isinstance(f, ca.Function):
        raise TypeError(f"f: expected a casadi.Function, got {type(f).__name__}")
    return f


def _private_directory(directory):
    """``directory`` as an absolute path, created (mode 0700) and checked (see
    the module docstring); a ``ValueError`` when another user could change it."""
    d = Path(os.path.realpath(os.fspath(directory)))
    if not _jit._POSIX:                     # no ownership to check
        d.mkdir(parents=True, exist_ok=True)
        return d
    try:
        fd, _ = _jit._walk(str(d), create=True)
    except _jit._Refused as exc:
        raise ValueError(f"directory: {exc}; generated code is compiled and loaded from it, "
                         f"so it must be yours and writable by nobody else (choose a folder "
                         f"of your own)") from None
    os.close(fd)
    return d


def _replace_from(tmp, path):
    """Move the finished file ``tmp`` to ``path`` (the same directory) in one step."""
    os.replace(tmp, path)
    return Path(path)


def _temporary_name(path):
    return path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")


def generate_c(f, directory):
    """Write ``NAME.c`` and ``NAME.h`` for ``f`` into ``directory`` (created);
    returns the path of the ``.c`` file. ``NAME`` is ``f.name()``."""
    _check_function(f)
    d = _private_directory(directory)
    name = f.name()
    cg = ca.CodeGenerator(f"{name}.c", {"with_header": True, "casadi_int": "long long int"})
    cg.add(f)
    with tempfile.TemporaryDirectory(dir=d, prefix=".generate-") as tmp:
        cg.generate(tmp + os.sep)
        for ext in (".h", ".c"):
            _replace_from(os.path.join(tmp, name + ext), d / (name + ext))
    return d / f"{name}.c"


def _compile(cmd, src, out):
    """Run the compiler command ``cmd`` writing to a temporary name, then move it to ``out``."""
    tmp = _temporary_name(out)
    res = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True, text=True)
    if res.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"compiling {src} failed ({' '.join([*cmd, '-o', str(out)])}):\n"
                           f"{res.stderr[-2000:]}")
    return _replace_from(tmp, out)


def compile_c(f, directory, *, compiler=None, flags=FLAGS, warn_after=WARN_AFTER):
    """Generate ``f``'s C code and compile it into ``directory/NAME.so``;
    returns ``(path, seconds of code generation, seconds of compilation)``.
    A :class:`LongCompileWarning` first when the compile is predicted to
    take more than ``warn_after`` seconds."""
    cc = _compiler(compiler)
    warn_after = _warn_after(warn_after)
    t0 = time.perf_counter()
    src = generate_c(f, directory)
    _warn_if_long(src, flags, warn_after)
    t1 = time.perf_counter()
    so = _compile([*cc, *flags, "-fPIC", "-shared", str(src)], src, src.with_suffix(".so"))
    return so, t1 - t0, time.perf_counter() - t1


def compile_function(f, directory, *, compiler=None, flags=FLAGS, warn_after=WARN_AFTER):
    """``f`` as generated C, compiled and loaded (``casadi.external``): a
    ``casadi.Function`` with the same inputs and outputs, whose numeric calls
    check their inputs' shapes (:class:`CheckedFunction`). Warns as
    :func:`compile_c`."""
    so, _, _ = compile_c(f, directory, compiler=compiler, flags=flags, warn_after=warn_after)
    return CheckedFunction(ca.external(f.name(), str(so)))


_HARNESS = r"""
/* Times one CasADi-generated function from C: reads the inputs (doubles,
   column-major, in input order) from argv[1], writes the outputs to argv[2],
   then runs SAMPLES samples of CALLS back-to-back calls each and prints the
   mean time per call of every sample in microseconds, one per line. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include FN_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static long long nnz(const casadi_int* sp) {  /* {nrow, ncol, 1}: dense (compact form) */
  casadi_int ncol = sp[1];
  if (sp[2] == 1) return sp[0] * ncol;
  return sp[2 + ncol];
}

int main(int argc, char** argv) {
  if (argc < 5) { fprintf(stderr, "usage: %s IN OUT SAMPLES CALLS\n", argv[0]); return 2; }
  long samples = atol(argv[3]), calls = atol(argv[4]);
  casadi_int sz_arg, sz_res, sz_iw, sz_w;
  CAT(FN, _work)(&sz_arg, &sz_res, &sz_iw, &sz_w);
  const double** arg = calloc(sz_arg, sizeof(double*));
  double** res = calloc(sz_res, sizeof(double*));
  casadi_int* iw = calloc(sz_iw + 1, sizeof(casadi_int));
  double* w = calloc(sz_w + 1, sizeof(double));
  FILE* in = fopen(argv[1], "rb");
  if (!in) { perror(argv[1]); return 1; }
  for (casadi_int i = 0; i < CAT(FN, _n_in)(); ++i) {
    long long k = nnz(CAT(FN, _sparsity_in)(i));
    double* x = malloc((k + 1) * sizeof(double));
    if (fread(x, sizeof(double), k, in) != (size_t)k) {
      fprintf(stderr, "short input\n");
      return 1;
    }
    arg[i] = x;
  }
  fclose(in);
  for (casadi_int i = 0; i < CAT(FN, _n_out)(); ++i)
    res[i] = malloc((nnz(CAT(FN, _sparsity_out)(i)) + 1) * sizeof(double));
  CAT(FN, _incref)();
  int mem = CAT(FN, _checkout)();
  if (FN(arg, res, iw, w, mem)) { fprintf(stderr, "evaluation failed\n"); return 1; }
  FILE* out = fopen(argv[2], "wb");
  for (casadi_int i = 0; i < CAT(FN, _n_out)(); ++i)
    fwrite(res[i], sizeof(double), nnz(CAT(FN, _sparsity_out)(i)), out);
  fclose(out);
  if (calls <= 0) {                       /* about 2 ms per sample */
    double t0 = now();
    long c = 0;
    while (now() - t0 < 2e-3) { FN(arg, res, iw, w, mem); ++c; }
    calls = c > 0 ? c : 1;
  }
  volatile double sink = 0.0;
  for (long s = 0; s < samples; ++s) {
    double t0 = now();
    for (long c = 0; c < calls; ++c) FN(arg, res, iw, w, mem);
    double t1 = now();
    sink += res[0][0];
    printf("%.6f\n", 1e6 * (t1 - t0) / calls);
  }
  CAT(FN, _release)(mem);
  CAT(FN, _decref)();
  if (sink != sink) fprintf(stderr, "the first output is NaN\n");
  return sink != sink;                    /* NaN output: non-zero status */
}
"""


def build_timer(f, directory, *, compiler=None, flags=FLAGS, warn_after=WARN_AFTER):
    """Compile ``f``'s generated C together with a small C timing program
    into ``directory/NAME_timer``; returns ``(path, seconds of code generation,
    seconds of compilation)``. Run it as ``NAME_timer IN OUT SAMPLES CALLS``
    (see :func:`time_c`). Warns as :func:`compile_c`."""
    cc = _compiler(compiler)
    warn_after = _warn_after(warn_after)
    t0 = time.perf_counter()
    src = generate_c(f, directory)
    _warn_if_long(src, flags, warn_after)
    t1 = time.perf_counter()
    main = src.with_name(f"{f.name()}_timer.c")
    tmp = _temporary_name(main)
    tmp.write_text(_HARNESS)
    _replace_from(tmp, main)
    exe = _compile([*cc, *flags, f"-DFN={f.name()}", f'-DFN_HEADER="{src.with_suffix(".h").name}"',
                    f"-I{src.parent}", str(main), str(src), "-lm"], main,
                   src.with_name(f"{f.name()}_timer"))
    return exe, t1 - t0, time.perf_counter() - t1


def _pack_inputs(f, inputs):
    check_numeric_inputs(f, inputs)
    parts = []
    for name in f.name_in():
        a = np.asarray(inputs[name], float)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: contains NaN or infinite values (input of {f.name()})")
        parts.append(a.reshape(f.size_in(name)).ravel(order="F"))
    return np.concatenate(parts) if parts else np.zeros(0)


def _count(x, name, minimum):
    """An int ``≥ minimum``."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name}: expected an int, got {type(x).__name__}")
    if x < minimum:
        raise ValueError(f"{name}: expected an int ≥ {minimum}, got {x}")
    return int(x)


def run_timer(f, exe, inputs, samples=1, calls=0, directory=None):
    """Run a program of :func:`build_timer` on ``inputs`` (arrays by input
    name). Returns ``(outputs by name as dense arrays, per-call µs of each
    sample)``; a sparse output (a Jacobian's) is written by the program as
    its nonzeros and returned with its zeros filled in."""
    samples, calls = _count(samples, "samples", 1), _count(calls, "calls", 0)
    d = _private_directory(directory or Path(exe).parent)
    packed = _pack_inputs(f, inputs)
    with tempfile.TemporaryDirectory(dir=d, prefix=".run-") as tmp:
        fin, fout = Path(tmp) / f"{f.name()}_in.bin", Path(tmp) / f"{f.name()}_out.bin"
        packed.tofile(fin)
        res = subprocess.run([str(exe), str(fin), str(fout), str(samples), str(calls)],
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{exe} failed with status {res.returncode}: "
                               f"{res.stderr[-1000:]}")
        flat = np.fromfile(fout, dtype=float)
    outs, at = {}, 0
    for name in f.name_out():                  # the nonzeros of each output, in order
        sp = f.sparsity_out(name)
        k = sp.nnz()
        outs[name] = np.asarray(ca.DM(sp, flat[at:at + k]).full())
        at += k
    times = np.array([float(x) for x in res.stdout.split()])
    return outs, times


def time_c(f, directory, samples=21, calls=0, *, compiler=None, flags=FLAGS, **inputs):
    """Median time per call in µs of ``f`` as generated C, called from C
    (``samples`` samples of ``calls`` back-to-back calls, about 2 ms each
    when ``calls=0``). ``samples ≥ 1``, ``calls ≥ 0`` and finite inputs,
    or a ``ValueError``/``TypeError`` naming the argument."""
    _check_function(f)
    _count(samples, "samples", 1), _count(calls, "calls", 0)
    _pack_inputs(f, inputs)
    exe, _, _ = build_timer(f, directory, compiler=compiler, flags=flags)
    _, times = run_timer(f, exe, inputs, samples, calls)
    return float(np.median(times))
