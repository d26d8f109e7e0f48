"""coalprof's Triton counter: what ncu's source counters would say of a Triton kernel, without a GPU.

``coalprof triton FILE.py::KERNEL`` runs this file (embedded in the binary, written to its cache)
with a JSON request as its one argument; it prints one JSON document on stdout. Python because
Triton is Python: its compiler gives each memory op's layout (which lane holds which element) and
the emitted vector width, its interpreter gives every program's absolute addresses and masks. The
counting is ncu's rule per (program, warp, PTX memory instruction): a request where a lane is
active, the distinct 32-byte sectors of the active lanes' bytes, and the ideal ``ceil(active
lanes × bytes / 32)``. Nothing else lives here: the rows, ratios, diagnoses and formats are
coalprof's own.

Two processes, because Triton decides at import whether ``@jit`` is interpreted: a child compiles
(``compile`` mode, without ``TRITON_INTERPRET``) while the parent interprets. The user's file is
never imported (it may ``import torch``): its ``@triton.jit`` functions are taken from its syntax
tree and compiled with its own path, so line numbers are the file's.

A known failure is one line on stderr, ``error: …``, and exit 2 (usage: a flag's value) or 3
(input: the file, the kernel, an access); never a traceback.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import subprocess
import sys
import types

SECTOR = 32
ALIGN = 512  # cudaMalloc's alignment (and more): sector boundaries fall where a GPU's would
USAGE, INPUT = 2, 3

DTYPES = {
    "i1": ("bool", 1), "i8": ("int8", 1), "u8": ("uint8", 1), "i16": ("int16", 2), "u16": ("uint16", 2),
    "i32": ("int32", 4), "u32": ("uint32", 4), "i64": ("int64", 8), "u64": ("uint64", 8),
    "f16": ("float16", 2), "bf16": ("bfloat16", 2), "f32": ("float32", 4), "f64": ("float64", 8),
    "fp16": ("float16", 2), "fp32": ("float32", 4), "fp64": ("float64", 8),
}


class Failure(Exception):
    """A failure the user can act on: one ``error:`` line and its exit code."""

    def __init__(self, message: str, code: int = INPUT):
        super().__init__(message)
        self.code = code


# ---------------------------------------------------------------------------------------------
# The user's kernels, from the syntax tree


def _is_jit(dec: ast.expr) -> bool:
    d = dec.func if isinstance(dec, ast.Call) else dec
    name = d.attr if isinstance(d, ast.Attribute) else d.id if isinstance(d, ast.Name) else ""
    return name == "jit"


def _keep(node: ast.stmt) -> bool:
    """Module-level statements the kernels may need: triton/math imports, constants, `@jit`s."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        mod = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
        return bool(mod) and mod.split(".")[0] in ("triton", "math")
    if isinstance(node, ast.FunctionDef):
        return any(_is_jit(d) for d in node.decorator_list)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        value = node.value
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, ast.Call):
            f = value.func
            return (isinstance(f, ast.Attribute) and f.attr == "constexpr") or (isinstance(f, ast.Name) and f.id == "constexpr")
    return False


def load_kernels(path: str) -> types.ModuleType:
    """The file's `@triton.jit` functions (decorators other than `jit` dropped), compiled with
    the file's own path so that Triton's `loc`s and the interpreter's frames name its lines."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise Failure(f"cannot read it: {e.strerror}")
    try:
        tree = ast.parse(text, path)
    except SyntaxError as e:
        raise Failure(f"line {e.lineno}: syntax error: {e.msg}")
    body = []
    for node in tree.body:
        if _keep(node):
            if isinstance(node, ast.FunctionDef):
                node.decorator_list = [d for d in node.decorator_list if _is_jit(d)]
            body.append(node)
    tree.body = body
    name = "coalprof_triton_user"
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    try:
        exec(compile(tree, path, "exec"), module.__dict__)
    except Exception as e:  # an import or a constant of the file failed
        raise Failure(f"its kernels cannot be loaded: {type(e).__name__}: {e}")
    return module


def kernel_of(module: types.ModuleType, name: str, path: str):
    fn = module.__dict__.get(name)
    if fn is None or not hasattr(fn, "arg_names") and not hasattr(fn, "fn"):
        kernels = sorted(k for k, v in module.__dict__.items() if hasattr(v, "arg_names"))
        raise Failure(f"no `@triton.jit` kernel `{name}` here (it has: {', '.join(kernels) or 'none'})")
    return fn


def arg_names(fn) -> list:
    inner = getattr(fn, "fn", fn)
    import inspect

    return list(inspect.signature(inner).parameters)


# ---------------------------------------------------------------------------------------------
# Arguments: buffers and scalars


class Buffer:
    """A tensor argument: numpy-backed, 512-byte aligned; enough of a tensor for Triton's launch
    (`data_ptr`, `dtype`) and the interpreter's copies (`untyped_storage`, `new_empty`, …)."""

    def __init__(self, name, array, dtype_name):
        self.name = name
        self.array = array
        self.dtype_name = dtype_name

    # what Triton's specialisation and the interpreter's `_implicit_cvt` read
    @property
    def dtype(self):
        return _Dtype.of(self.dtype_name)

    def data_ptr(self):
        return self.array.ctypes.data

    @property
    def nbytes(self):
        return self.array.nbytes


class _Dtype:
    """A dtype as Triton reads it (`str()` is `torch.<name>`), one object per name for the
    process's life: Triton's native specialisation caches a dtype's type string by the object's
    address, so a short-lived dtype whose address is reused by another one's would be typed as
    the first (an int32 index buffer read as fp32)."""

    _interned = {}

    @classmethod
    def of(cls, name):
        return cls._interned.setdefault(name, cls(name))

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


def aligned(np, dtype, shape):
    n = int(math.prod(shape)) if shape else 1
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(n * itemsize + ALIGN, dtype=np.uint8)
    start = (-raw.ctypes.data) % ALIGN
    return raw[start:start + n * itemsize].view(dtype).reshape(shape)


def make_args(np, request, names):
    """`--arg` values → Buffers and scalars, in the kernel's parameter order (constexprs from
    `--meta`), with the seed's random data."""
    rng = np.random.default_rng(0)
    given = {a["name"]: a for a in request["args"]}
    meta = request.get("meta", {})
    for n in list(given) + list(meta):
        if n not in names:
            raise Failure(f"`{n}` is not a parameter of `{request['kernel']}` (it takes: {', '.join(names)})", USAGE)
    values = {}
    for n in names:
        if n in meta:
            values[n] = meta[n]
            continue
        a = given.get(n)
        if a is None:
            raise Failure(f"`{request['kernel']}` needs `--arg {n}=…` (a tensor `{n}=f32[1024]`, an integer, or `@file.npy`)", USAGE)
        if a["kind"] == "int":
            values[n] = int(a["value"])
        elif a["kind"] == "float":
            values[n] = float(a["value"])
        elif a["kind"] == "tensor":
            short = a["dtype"]
            if short not in DTYPES:
                raise Failure(f"`--arg {n}`: unknown dtype `{short}` (one of {', '.join(sorted(DTYPES))})", USAGE)
            name, _ = DTYPES[short]
            np_dtype = "uint16" if name == "bfloat16" else name
            arr = aligned(np, np_dtype, tuple(a["shape"]))
            # Random values, a 64K block repeated: addresses only depend on integer data, and
            # drawing a 256 MB tensor costs seconds.
            flat = arr.reshape(-1)
            block = (rng.random(min(flat.size, 1 << 16), dtype="float32") if name.startswith(("float", "bfloat"))
                     else rng.integers(0, 16, min(flat.size, 1 << 16))).astype(np_dtype)
            for i in range(0, flat.size, block.size):
                flat[i:i + block.size] = block[:flat.size - i]
            values[n] = Buffer(n, arr, name)
        elif a["kind"] == "npy":
            try:
                data = np.load(a["path"], allow_pickle=False)
            except Exception as e:
                raise Failure(f"`--arg {n}=@{a['path']}`: not a readable .npy file: {e}")
            arr = aligned(np, data.dtype, data.shape)
            arr[...] = data
            name = {"float16": "float16", "float32": "float32", "float64": "float64"}.get(str(data.dtype), str(data.dtype))
            values[n] = Buffer(n, arr, name)
        else:
            raise Failure(f"`--arg {n}`: cannot read the value", USAGE)
    return values


# ---------------------------------------------------------------------------------------------
# Compiling (child process, no TRITON_INTERPRET): specialisation, TTGIR layouts, PTX widths

MEMORY_OPS = {
    "tt.load": "load", "tt.store": "store",
    "tt.atomic_rmw": "atomic", "tt.atomic_cas": "atomic",
    "ttg.async_copy_global_to_local": "cp.async", "tt.descriptor_load": "tma", "tt.descriptor_store": "tma",
    "ttng.async_tma_copy_global_to_local": "tma", "ttng.async_tma_copy_local_to_global": "tma",
}


class _Arg:
    """What the JIT's binder sees of a tensor at compile time: its dtype and an aligned address."""

    def __init__(self, dtype_name, ptr):
        self.dtype = _Dtype.of(dtype_name)
        self._ptr = ptr

    def data_ptr(self):
        return self._ptr


def compile_kernel(request):
    """The JIT's own specialisation for these arguments, then `triton.compile` for the target."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend
    from triton.runtime.jit import create_function_from_signature

    module = load_kernels(request["file"])
    jf = kernel_of(module, request["kernel"], request["file"])
    names = arg_names(jf)
    meta = request.get("meta", {})
    args = []
    for n in names:
        a = next((a for a in request["args"] if a["name"] == n), None)
        if n in meta:
            args.append(meta[n])
        elif a is None:
            raise Failure(f"`{request['kernel']}` needs `--arg {n}=…`", USAGE)
        elif a["kind"] == "tensor":
            args.append(_Arg(DTYPES[a["dtype"]][0] if a["dtype"] in DTYPES else "float32", ALIGN * 1024))
        elif a["kind"] == "npy":
            import numpy

            try:
                dtype = numpy.load(a["path"], mmap_mode="r", allow_pickle=False).dtype.name
            except Exception as e:
                raise Failure(f"`--arg {n}=@{a['path']}`: not a readable .npy file: {e}")
            args.append(_Arg(dtype, ALIGN * 1024))
        elif a["kind"] == "int":
            args.append(int(a["value"]))
        else:
            args.append(float(a["value"]))
    target = GPUTarget("cuda", request["cc"], 32)
    backend = make_backend(target)
    binder = create_function_from_signature(jf.signature, jf.params, backend)
    kwargs = {"num_warps": request["num_warps"], "num_stages": request["num_stages"]}
    bound, specialization, options = binder(*args, **kwargs)
    options, signature, constexprs, attrs = jf._pack_args(backend, kwargs, bound, specialization, options)
    spec = {}
    for i, n in enumerate(names):
        kind = specialization[i]
        if kind[0] == "constexpr":
            spec[n] = "constexpr" if n in meta else f"constexpr ({kind[1]})"
        else:
            hint = {"D": "divisible by 16", "": ""}.get(kind[1] or "", str(kind[1]))
            spec[n] = f"{kind[0]}{', ' + hint if hint else ''}"
    try:
        compiled = triton.compile(ASTSource(jf, signature, constexprs, attrs), target=target, options=options.__dict__)
    except Exception as e:
        msg = str(e).strip().splitlines()
        raise Failure(f"Triton could not compile `{request['kernel']}`: {msg[-1] if msg else type(e).__name__}")
    return {
        "triton": triton.__version__,
        "specialisation": spec,
        "ttgir": compiled.asm["ttgir"],
        "ptx": compiled.asm["ptx"],
    }


def _loc_table(ttgir):
    """`#locN` → (file, line, col), callsites resolved to the callee, names to what they name."""
    raw = {}
    for m in re.finditer(r"^(#loc\d*) = loc\((.*)\)\s*$", ttgir, re.M):
        raw[m.group(1)] = m.group(2)

    def resolve(text, depth=0):
        if depth > 50:
            return None
        m = re.match(r'^"([^"]*)":(\d+):(\d+)', text)
        if m:
            return (m.group(1), int(m.group(2)), int(m.group(3)))
        m = re.match(r"^callsite\((#loc\d*) at", text)
        if m:
            return resolve(raw.get(m.group(1), ""), depth + 1)
        m = re.match(r'^"[^"]*"\((#loc\d*)\)', text)
        if m:
            return resolve(raw.get(m.group(1), ""), depth + 1)
        m = re.match(r"^(#loc\d*)$", text)
        if m:
            return resolve(raw.get(m.group(1), ""), depth + 1)
        return None

    return {k: resolve(v) for k, v in raw.items()}


def _layouts(ttgir):
    out = {}
    for m in re.finditer(r"^(#[A-Za-z_]\w*) = (#ttg\.\w+<.*>)\s*$", ttgir, re.M):
        out[m.group(1)] = m.group(2)
    return out


def _ints(s):
    return [int(x) for x in re.findall(r"-?\d+", s)]


def parse_layout(text, layouts):
    """A `#ttg.blocked`/`#ttg.linear` layout as a dict, or None (not modelled)."""
    text = layouts.get(text, text)
    m = re.match(r"#ttg\.blocked<\{(.*)\}>", text)
    if m:
        body = m.group(1)
        get = lambda k: _ints(re.search(k + r" = \[([^\]]*)\]", body).group(1))
        return {"kind": "blocked", "spt": get("sizePerThread"), "tpw": get("threadsPerWarp"),
                "wpc": get("warpsPerCTA"), "order": get("order"), "text": text}
    m = re.match(r"#ttg\.linear<\{(.*)\}>", text)
    if m:
        body = m.group(1)

        def bases(k):
            g = re.search(k + r" = \[(.*?)\]\](?=,|\s*$)|" + k + r" = \[\]", body)
            if not g or g.group(1) is None:
                return []
            return [_ints(b) for b in re.findall(r"\[([^\[\]]*)\]", g.group(1) + "]")]

        return {"kind": "linear", "register": bases("register"), "lane": bases("lane"),
                "warp": bases("warp"), "text": text}
    return None


def memory_ops(ttgir):
    """Each memory op of the TTGIR: kind, (file, line, col), pointer type's shape, element, layout."""
    locs = _loc_table(ttgir)
    layouts = _layouts(ttgir)
    ops = []
    for line in ttgir.splitlines():
        s = line.strip()
        m = re.match(r"^(?:%\S+ = )?([a-z_]+\.[a-z_]+)\b", s)
        if not m or m.group(1) not in MEMORY_OPS:
            continue
        kind = MEMORY_OPS[m.group(1)]
        lm = re.search(r"loc\((#loc\d*)\)\s*$", s)
        where = locs.get(lm.group(1)) if lm else None
        tm = re.search(r": tensor<([0-9x]*)x?!tt\.ptr<(\w+)>(?:, (#[\w.]+(?:<.*?>)?))?>", s)
        op = {"kind": kind, "op": m.group(1), "where": where, "shape": [], "elem": None, "layout": None,
              "layout_text": None, "in_loop": False}
        if tm:
            op["shape"] = [int(x) for x in tm.group(1).split("x") if x]
            op["elem"] = tm.group(2)
            if tm.group(3):
                op["layout_text"] = layouts.get(tm.group(3), tm.group(3))
                op["layout"] = parse_layout(tm.group(3), layouts)
        else:
            sm = re.search(r": !tt\.ptr<(\w+)>", s)
            if sm:
                op["elem"] = sm.group(1)
                op["layout"] = {"kind": "scalar"}
        ops.append(op)
    return ops


def ptx_instructions(ptx):
    """Each `ld.global`/`st.global` of the PTX: kind, bytes per lane, the true line (the first
    `.loc` of its inline-asm block) and the line its own `.loc` gives it (the line-table line ncu
    shows, which LLVM moves 1-3 lines on for inline asm: llvm-project#177718)."""
    files = {m.group(1): m.group(2) for m in re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', ptx, re.M)}
    out = []
    current = None
    block_first = None
    for n, line in enumerate(ptx.splitlines(), 1):
        s = line.strip()
        if s.startswith("// begin inline asm"):
            block_first = None
            continue
        if s.startswith("// end inline asm"):
            block_first = None
            continue
        m = re.match(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)", s)
        if m:
            current = (files.get(m.group(1), m.group(1)), int(m.group(2)))
            if block_first is None:
                block_first = current
            continue
        m = re.match(r"(?:@!?%\w+\s+)?(ld|st)\.global((?:\.\w+)*)\s", s)
        if m and current:
            quals = m.group(2).split(".")
            vec = next((int(q[1:]) for q in quals if re.fullmatch(r"v\d", q)), 1)
            bits = next((int(q[1:]) for q in reversed(quals) if re.fullmatch(r"[bfus]\d+", q)), 32)
            true = block_first or current
            out.append({"kind": "load" if m.group(1) == "ld" else "store", "bytes": vec * bits // 8,
                        "text": re.sub(r"^@!?%\w+\s+", "", s).split(" ")[0],
                        "ptx_line": n, "file": true[0], "line": true[1], "ncu_line": current[1]})
    return out


# ---------------------------------------------------------------------------------------------
# Layouts: which (warp, lane, register) holds which element


def element_map(np, layout, shape, num_warps):
    """flat element index for each (warp, lane, register): an int array [warps, 32, registers]."""
    if layout["kind"] == "scalar" or not shape:
        return np.zeros((num_warps, 32, 1), dtype=np.int64)
    rank = len(shape)
    if layout["kind"] == "blocked":
        spt, tpw, wpc, order = layout["spt"], layout["tpw"], layout["wpc"], layout["order"]
        cover = [spt[d] * tpw[d] * wpc[d] for d in range(rank)]
        reps = [max(1, -(-shape[d] // cover[d])) for d in range(rank)]
        nregs = int(np.prod([spt[d] * reps[d] for d in range(rank)]))
        w = np.arange(num_warps)[:, None, None]
        l = np.arange(32)[None, :, None]
        r = np.arange(nregs)[None, None, :]
        coord = [None] * rank
        lane, warp, reg = l.copy(), w.copy(), r.copy()
        lanes, warps, sizes = {}, {}, {}
        for d in order:
            lanes[d] = lane % tpw[d]
            lane = lane // tpw[d]
            warps[d] = warp % wpc[d]
            warp = warp // wpc[d]
            sizes[d] = reg % spt[d]
            reg = reg // spt[d]
        for d in order:
            rep = reg % reps[d]
            reg = reg // reps[d]
            coord[d] = (rep * cover[d] + warps[d] * tpw[d] * spt[d] + lanes[d] * spt[d] + sizes[d]) % shape[d]
    else:
        regs, lanes_b, warps_b = layout["register"], layout["lane"], layout["warp"]
        nregs = 1 << len(regs)
        coord = [np.zeros((num_warps, 32, nregs), dtype=np.int64) for _ in range(rank)]
        for bases, axis, count in ((regs, 2, nregs), (lanes_b, 1, 32), (warps_b, 0, num_warps)):
            idx = np.arange(count)
            for bit, base in enumerate(bases):
                on = ((idx >> bit) & 1).astype(np.int64)
                shp = [1, 1, 1]
                shp[axis] = count
                on = on.reshape(shp)
                for d in range(rank):
                    coord[d] = coord[d] ^ (on * base[d])
        coord = [c % shape[d] for d, c in enumerate(coord)]
    flat = np.zeros((num_warps, 32, nregs), dtype=np.int64)
    for d in range(rank):
        flat = flat * shape[d] + np.broadcast_to(coord[d], (num_warps, 32, nregs))
    return flat


# ---------------------------------------------------------------------------------------------
# Interpreting: every program's addresses, counted per warp and instruction


class Counter:
    """The counts of one TTGIR memory op, over the programs run."""

    def __init__(self, np, op, flat, elem_bytes, width_bytes, ptx):
        self.op = op
        self.flat = flat  # [warps, 32, regs]
        self.eb = elem_bytes
        per = max(1, width_bytes // elem_bytes)
        regs = flat.shape[2]
        if regs % per:
            per = 1
        self.per = per  # elements per instruction and lane
        self.instr = regs // per
        self.ptx = ptx
        zeros = lambda: np.zeros(self.instr, dtype=np.float64)
        self.executions, self.requests, self.sectors, self.ideal, self.threads = (zeros() for _ in range(5))

    def add(self, np, addrs, mask):
        a = addrs.reshape(-1)[self.flat]  # [W, 32, R]
        m = mask.reshape(-1)[self.flat] if mask is not None else np.ones(a.shape, dtype=bool)
        W = a.shape[0]
        a = a.reshape(W, 32, self.instr, self.per)
        m = m.reshape(W, 32, self.instr, self.per)
        lane_on = m.any(axis=3)  # [W, 32, I]
        active = lane_on.sum(axis=1)  # [W, I]
        self.executions += W
        self.requests += (active > 0).sum(axis=0)
        self.threads += active.sum(axis=0)
        self.ideal += np.ceil(active * (self.per * self.eb) / SECTOR).sum(axis=0)
        secs = a // SECTOR
        on = m
        if self.eb > 1 and np.any(((a + self.eb - 1) // SECTOR != secs) & m):  # an element across a sector
            secs = np.concatenate([secs, (a + self.eb - 1) // SECTOR], axis=3)
            on = np.concatenate([m, m], axis=3)
        secs = np.where(on, secs, np.uint64(np.iinfo(np.uint64).max)).astype(np.uint64)
        secs = secs.transpose(0, 2, 1, 3).reshape(W, self.instr, -1)
        secs.sort(axis=2)
        distinct = (np.diff(secs, axis=2) != 0) & (secs[:, :, 1:] != np.iinfo(np.uint64).max)
        count = distinct.sum(axis=2) + (secs[:, :, 0] != np.iinfo(np.uint64).max)
        self.sectors += count.sum(axis=0)


def programs_of(grid, n):
    """Every program, or n of them spread evenly, always with each axis's last (where masks bite)."""
    total = grid[0] * grid[1] * grid[2]
    all_ids = [(x, y, z) for x in range(grid[0]) for y in range(grid[1]) for z in range(grid[2])]
    if not n or n >= total:
        return all_ids
    step = total / n
    chosen = {all_ids[min(total - 1, int(i * step))] for i in range(n)}
    chosen.add((grid[0] - 1, grid[1] - 1, grid[2] - 1))
    for ax in range(3):
        last = [0, 0, 0]
        last[ax] = grid[ax] - 1
        chosen.add(tuple(last))
    return sorted(chosen)


def interpret(np, request, wait_compiled):
    os.environ["TRITON_INTERPRET"] = "1"
    import triton  # noqa: F401  (after the variable: @jit becomes interpreted)
    from triton.runtime import interpreter as it

    module = load_kernels(request["file"])
    fn = kernel_of(module, request["kernel"], request["file"])
    names = arg_names(fn)
    values = make_args(np, request, names)
    buffers = [v for v in values.values() if isinstance(v, Buffer)]
    ranges = sorted((b.data_ptr(), b.data_ptr() + b.nbytes, b.name) for b in buffers)
    path = os.path.realpath(request["file"])
    num_warps = request["num_warps"]
    compiled = wait_compiled()  # the child compiled while the buffers were filled
    ops = memory_ops(compiled["ttgir"])
    ptx = ptx_instructions(compiled["ptx"])

    counters = {}  # (line, col, kind) → Counter
    not_modelled = {}
    user_ops = {}
    for op in ops:
        if op["where"] is None:
            continue
        file, line, col = op["where"]
        key = (line, col, op["kind"])
        if op["kind"] not in ("load", "store") or op["layout"] is None:
            why = {"atomic": "atomics", "cp.async": "pipelined `cp.async` loads (num_stages ≥ 2 with tl.dot)",
                   "tma": "TMA (tensor descriptors) makes no LSU requests"}.get(
                op["kind"], f"a `{(op['layout_text'] or '?').split('<')[0]}` layout")
            name = "load" if op["kind"] in ("cp.async", "tma") and "load" in op["op"] or op["kind"] == "cp.async" else op["kind"]
            not_modelled[(line, op["kind"])] = {"file": request["file"], "line": line, "op": name, "why": why}
            continue
        user_ops.setdefault(key, op)

    def width_of(line, kind, elem_bytes):
        found = [p["bytes"] for p in ptx if p["line"] == line and p["kind"] == kind]
        return (max(set(found), key=found.count) if found else elem_bytes), found

    def counter_for(line, col, kind, shape, elem_bytes):
        key = (line, col, kind)
        c = counters.get(key)
        if c is not None:
            return c
        op = user_ops.get(key) or next((o for k, o in user_ops.items() if k[0] == line and k[2] == kind), None)
        if op is None:
            return None
        width, found = width_of(line, kind, elem_bytes)
        flat = element_map(np, op["layout"], op["shape"] or list(shape), num_warps)
        texts = sorted({p["text"] for p in ptx if p["line"] == line and p["kind"] == kind})
        ncu = sorted({p["ncu_line"] for p in ptx if p["line"] == line and p["kind"] == kind})
        c = Counter(np, op, flat, elem_bytes, width, {"texts": texts, "ncu_lines": ncu, "count": len(found)})
        counters[key] = c
        return c

    def where():
        f = sys._getframe(2)
        while f is not None:
            if os.path.realpath(f.f_code.co_filename) == path:
                line, col = f.f_lineno, None
                try:
                    pos = list(f.f_code.co_positions())[f.f_lasti // 2]
                    line, col = pos[0] or line, (pos[2] + 1) if pos[2] is not None else None
                except Exception:
                    pass
                return line, col
            f = f.f_back
        return None, None

    def record(kind, ptrs, mask):
        line, col = where()
        if line is None:
            return
        addrs = ptrs.data
        m = mask.data if mask is not None else None
        act = addrs if m is None else addrs[np.broadcast_to(m, addrs.shape)]
        eb = ptrs.get_element_ty().primitive_bitwidth // 8
        if act.size:
            lo, hi = int(act.min()), int(act.max()) + eb
            if not any(b0 <= lo and hi <= b1 for b0, b1, _ in ranges):
                bad = [int(x) for x in act.reshape(-1) if not any(b0 <= int(x) and int(x) + eb <= b1 for b0, b1, _ in ranges)]
                if bad:
                    near = min(ranges, key=lambda r: min(abs(bad[0] - r[0]), abs(bad[0] - r[1])))
                    off = (bad[0] - near[0]) // eb
                    raise Failure(f"line {line}: the {kind} reaches outside every buffer "
                                  f"(element {off} of `{near[2]}`, which has {(near[1] - near[0]) // eb}): "
                                  "an unmasked access out of bounds, which a GPU would not survive either")
        key = (line, col, kind)
        if any(k[0] == line and (k[1] == kind or k[1] in ("cp.async", "tma")) for k in not_modelled):
            return
        c = counter_for(line, col, kind, addrs.shape, eb)
        if c is None:
            not_modelled.setdefault((line, kind), {"file": request["file"], "line": line, "op": kind,
                                                   "why": "no matching memory op in the compiled kernel"})
            return
        if c.flat.max() >= addrs.size:
            not_modelled[(line, kind)] = {"file": request["file"], "line": line, "op": kind,
                                          "why": "the interpreted block's shape differs from the compiled one"}
            return
        c.add(np, addrs, m)

    # A GPU wraps on integer overflow rather than checking every add (the check is a third of
    # the interpreter's time on an elementwise kernel).
    import dataclasses

    it.interpreter_builder.options = dataclasses.replace(it.interpreter_builder.options, sanitize_overflow=False)
    B = it.InterpreterBuilder
    orig_load, orig_store = B.create_masked_load, B.create_masked_store

    # The trailing cache/eviction/volatile arguments differ between Triton versions (3.6 passes
    # `cache_modifier, eviction_policy`, 3.9 one `cache_policy`); they are passed on untouched.
    def load(self, ptrs, mask, other, *rest):
        record("load", ptrs, mask)
        return orig_load(self, ptrs, mask, other, *rest)

    def store(self, ptrs, value, mask, *rest):
        record("store", ptrs, mask)
        return orig_store(self, ptrs, value, mask, *rest)

    B.create_masked_load, B.create_masked_store = load, store

    grid = list(request["grid"]) + [1] * (3 - len(request["grid"]))
    chosen = programs_of(grid, request.get("programs"))
    inner = fn.rewrite()
    # Triton 3.6's interpreter turns a scalar into an index with `int(data)` of a 1-element array,
    # which numpy 2.4 refuses (`range(0, K, BLOCK)` fails); 3.9 squeezes first. `.item()` serves
    # both. Every (re)patch of the language goes through `_patch_lang_tensor`, so it is wrapped.
    orig_patch_tensor = it._patch_lang_tensor

    def patch_tensor(tensor, scope):
        orig_patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.item()))

    it._patch_lang_tensor = patch_tensor
    patch = it._patch_lang(inner)
    try:
        args = {n: (v if n in request.get("meta", {}) else it._implicit_cvt(v)) for n, v in values.items()}
        it.interpreter_builder.set_grid_dim(*grid)
        for (x, y, z) in chosen:
            it.interpreter_builder.set_grid_idx(x, y, z)
            inner(**args)
    except Failure:
        raise
    except Exception as e:
        msg = str(e).strip().splitlines()
        raise Failure(f"interpreting `{request['kernel']}` failed: {type(e).__name__}: {msg[-1] if msg else ''}")
    finally:
        patch.restore()
    return counters, not_modelled, chosen, grid


def main(argv):
    if len(argv) == 3 and argv[1] == "compile":
        request = json.loads(argv[2])
        print(json.dumps(compile_kernel(request)))
        return 0
    request = json.loads(argv[1])
    import numpy as np

    # Compile in a child (no TRITON_INTERPRET) while this process interprets.
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    child = subprocess.Popen([sys.executable, __file__, "compile", json.dumps(request)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    result = {}

    def wait_compiled():
        out, err = child.communicate()
        if child.returncode != 0:
            last = [l for l in err.splitlines() if l.startswith("error: ")]
            if last:
                raise Failure(last[-1][len("error: "):], child.returncode)
            raise Failure(f"compiling `{request['kernel']}` failed: {(err.strip().splitlines() or ['?'])[-1]}")
        result.update(json.loads(out))
        return result

    try:
        counters, not_modelled, chosen, grid = interpret(np, request, wait_compiled)
    finally:
        if child.poll() is None:
            child.kill()
    compiled = result
    total = grid[0] * grid[1] * grid[2]
    scale = total / len(chosen)
    rows = []
    for (line, col, kind), c in sorted(counters.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0, kv[0][2])):
        ncu = c.ptx["ncu_lines"]
        for i in range(c.instr):
            rows.append({
                "file": request["file"], "line": line, "col": col, "op": kind, "instruction": i,
                "ptx": c.ptx["texts"][0] if c.ptx["texts"] else None,
                "ncu_line": ncu[0] if len(ncu) == 1 else (ncu[0] if ncu else None),
                "access_bytes": c.per * c.eb, "layout": c.op["layout"].get("text"),
                "executions": c.executions[i] * scale, "requests": c.requests[i] * scale,
                "sectors": c.sectors[i] * scale, "ideal_sectors": c.ideal[i] * scale,
                "threads": c.threads[i] * scale,
            })
    doc = {
        "schema": "coalprof-triton/1", "kernel": request["kernel"], "file": request["file"],
        "triton": compiled["triton"], "target": f"cuda:{request['cc']}", "arch": f"sm_{request['cc']}",
        "num_warps": request["num_warps"], "num_stages": request["num_stages"], "grid": grid,
        "programs": {"total": total, "run": len(chosen), "scaled": len(chosen) < total,
                     "sampled": [list(p) for p in chosen] if len(chosen) < total else None},
        "specialisation": compiled["specialisation"],
        "instructions": rows,
        "not_modelled": sorted(not_modelled.values(), key=lambda n: (n["line"], n["op"])),
    }
    json.dump(doc, sys.stdout)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Failure as e:
        sys.stderr.write("error: " + str(e).replace("\n", " ") + "\n")
        sys.exit(e.code)
    except KeyboardInterrupt:
        sys.exit(130)
