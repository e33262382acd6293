"""Stage 3, schedule: apply Cuvil's transform scripts to the linalg module.

A schedule is a list of (script, entry) pairs, applied in order. The
default CPU schedule:
  * matmul_cpu: every linalg.matmul and 2-D linalg.transpose -> tiled,
    AVX-512 FMA / 16x16 shuffle kernels;
  * batch_matmul_cpu: batched contractions (attention's q.k^T and p.v) ->
    one head per scf.forall iteration, the same FMA register kernel;
  * elementwise_cpu: everything else that is not i1 -> row reductions with
    vector accumulators, N-D transposes, vectorized elementwise ops;
  * conv_cpu: the NCHW convolutions that raising left as convolutions (few
    channels, batch > 1; the others became Winograd or im2col matmuls):
    output channels packed, register-tiled FMA kernels; pooling and the pads
    in front of them.
Whatever a script does not match stays scalar loops (convert-linalg-to-loops).

On hosts with dot-product units (cuvil.cpu_features) the large matmuls of
their types have their weights packed into VNNI panels in the raise step
(pack_entry) and matmul_dot_cpu schedules them first: bf16 x bf16 -> f32 as
vdpbf16ps (AVX512-BF16, x86vector), int8 x int8 -> int32 as vpdpbusd
(AVX512-VNNI; cuvil-unsigned-int8-lhs gives them the u8 x s8 form it
multiplies). On hosts with AMX, the matmul_dot_cpu entries @cuvil_amx_bf16 /
@cuvil_amx_int8 take those of AMX's types before: forall tiles marked for
cuvil-amx-matmul, which writes them as AMX tile code after bufferization
(tdpbf16ps, tdpbusd on the same panels). With precision="bf16" on hosts
with AMX-BF16 or AVX512-BF16, attention's batched products are narrowed,
packed per batch and tiled for the AMX tiles or vdpbf16ps too. Elsewhere the
fp32 kernels take bf16 operands (converted to f32, FMAs) and int8 ones
sign-extended to i32 (multiplies and adds).
"""
from typing import FrozenSet, Optional, Tuple

from . import transform

DEFAULT_SCHEDULE = (("matmul_cpu", "__transform_main"),
                    ("batch_matmul_cpu", "__transform_main"),
                    ("elementwise_cpu", "cuvil_elementwise"),
                    ("conv_cpu", "cuvil_conv_cpu"))

#: Before DEFAULT_SCHEDULE where a dot-product kernel applies.
DOT_SCHEDULE = (("matmul_dot_cpu", "__transform_main"),)

#: Before DOT_SCHEDULE on AMX hosts: the VNNI matmuls of the tile unit's types
#: as AMX tiles (marked here, written as tile code by cuvil-amx-matmul).
AMX_BF16_SCHEDULE = (("matmul_dot_cpu", "cuvil_amx_bf16"),)
AMX_INT8_SCHEDULE = (("matmul_dot_cpu", "cuvil_amx_int8"),)

#: pack_cpu.mlir entry points (run in the raise step): B panels for the FMA
#: kernels; with the dot-product kernels also VNNI panels for the matmuls of
#: their types: (bf16 dot, int8 dot) -> entry.
PACK_ENTRY = "cuvil_pack_matmul_rhs"
PACK_ENTRIES = {(False, False): PACK_ENTRY,
                (True, False): "cuvil_pack_matmul_rhs_bf16_vnni",
                (False, True): "cuvil_pack_matmul_rhs_int8_vnni",
                (True, True): "cuvil_pack_matmul_rhs_bf16_int8_vnni"}
#: The bf16 entries also pack attention's bf16 batched products (the raise
#: step narrows them, batched_bf16_contractions) and Winograd's bf16 batch
#: matmuls per batch. On AMX-BF16 hosts: the same, K padded to whole tile
#: rows for the matmuls the tiles take (cuvil-amx-matmul then reads A in
#: place): int8 kernel (None, "dot", "amx") -> entry.
AMX_BF16_PACK_ENTRIES = {None: "cuvil_pack_matmul_rhs_amx_bf16",
                         "dot": "cuvil_pack_matmul_rhs_amx_bf16_int8",
                         "amx": "cuvil_pack_matmul_rhs_amx_bf16_int8_tiles"}


def amx_bf16(features: FrozenSet[str]) -> bool:
    """Whether bf16 matmuls run on AMX tiles (tdpbf16ps)."""
    return {"amx_tile", "amx_bf16"} <= features


def amx_int8(features: FrozenSet[str]) -> bool:
    """Whether int8 matmuls run on AMX tiles (tdpbusd)."""
    return {"amx_tile", "amx_int8"} <= features


def bf16_dot_product(features: FrozenSet[str]) -> bool:
    """Whether bf16 matmuls run on vdpbf16ps (AVX512-BF16)."""
    return "avx512_bf16" in features


def int8_dot_product(features: FrozenSet[str]) -> bool:
    """Whether int8 matmuls run on vpdpbusd (AVX512-VNNI, 16 lanes: the kernel's width)."""
    return "avx512_vnni" in features


def default_schedule(features: FrozenSet[str]) -> Tuple[Tuple[str, str], ...]:
    """The default schedule for a target with these CPU features."""
    dot = bf16_dot_product(features) or int8_dot_product(features)
    return ((AMX_BF16_SCHEDULE if amx_bf16(features) else ()) + (AMX_INT8_SCHEDULE if amx_int8(features) else ())
            + (DOT_SCHEDULE if dot else ()) + DEFAULT_SCHEDULE)


def pack_entry(features: FrozenSet[str], narrow_type: str = "") -> str:
    """The raise step's packing: VNNI panels for the types a dot-product or
    AMX kernel takes (both read the same panels). Not the bf16 ones where
    precision="fp16" (`narrow_type` "f16"): pack_cpu's matchers see bit
    widths only, and its f16 x f16 -> f32 contractions have no dot-product
    kernel (packed, they ran as generic vector code or, on AMX hosts, loops)."""
    bf16 = narrow_type != "f16"
    int8 = int8_dot_product(features) or amx_int8(features)
    if bf16 and amx_bf16(features):
        return AMX_BF16_PACK_ENTRIES["amx" if amx_int8(features) else "dot" if int8 else None]
    return PACK_ENTRIES[bf16 and bf16_dot_product(features), int8]


def int8_k_multiple(features: FrozenSet[str]) -> int:
    """The raise step's K multiple for int8 conv windows (pipeline.raise_passes):
    on AMX-INT8 hosts an int8 conv's windows are gathered with K a multiple of
    a tile row's 64 bytes, so that its matmul needs no padded copy (0: as
    they are)."""
    return 64 if amx_int8(features) else 0


def int8_shifted_rows(features: FrozenSet[str]) -> bool:
    """Whether the raise step writes stride-1 int8 convs as one contraction
    over shifted rows of the padded input (pipeline.raise_passes), no im2col
    windows gathered: on AMX-INT8 hosts, whose tile loads read those rows in
    place, and on hosts with vpdpbusd, whose kernel (matmul_dot_cpu's
    @cuvil_vnni_shifted_rows) reads each tap's rows from the padded input."""
    return amx_int8(features) or int8_dot_product(features)


#: On the dot-product kernel, whose time is its multiply-adds, an int8 conv
#: over shifted rows gains only when the extra rows it computes (the padded
#: width's columns, the rows up to a whole 64-row tile) are few. ResNet-18
#: int8, AMD Zen 5, 1 thread, per-kernel A/B against gather + matmul:
#: 56 x 56 x 64 (4% extra) 1.23 -> 1.07 ms, 28 x 28 x 128 (14%) 0.85 -> 0.89.
VNNI_SHIFTED_ROWS_MAX_EXTRA_PERCENT = 8


def shifted_rows_max_extra(features: FrozenSet[str]) -> int:
    """The im2col conv pass's shifted-rows-max-extra (percent; 0: any): AMX
    tiles, bound by their reads of A, gain at 14% extra too."""
    return VNNI_SHIFTED_ROWS_MAX_EXTRA_PERCENT if unsigned_shifted_rows(features) else 0


def unsigned_shifted_rows(features: FrozenSet[str]) -> bool:
    """Whether those convs read an unsigned lhs (cuvil-unsigned-int8-lhs
    {shifted-rows}): vpdpbusd's u8 x s8; AMX's tdpbssd takes them signed."""
    return int8_shifted_rows(features) and not amx_int8(features)


#: Weights (bytes at the compiled precision) above which the AMX kernels
#: prefetch them (cuvil-amx-matmul's prefetch-groups); see prefetch_weights.
PREFETCH_MIN_WEIGHT_BYTES = 64 << 20


def prefetch_weights(weight_bytes: Optional[int]) -> bool:
    """Whether the AMX tiles prefetch B (the weights) ahead of the products:
    for models whose weights do not stay in the last-level cache from one
    call to the next, or whose size is not known. Measured on a Xeon model
    207 (2 cores of it: a 300 MB L3 shared with other tenants), 1 thread,
    no prefetch over prefetch (in the first row block), interleaved in one
    process: BERT-base bf16 (219 MB of weights) 1.07x the time, int8 (109 MB)
    1.03x; 64x1024-4096-4096-1024 bf16 (50 MB) 0.96x, int8 (25 MB) 0.95x;
    ResNet-18 int8 (12 MB) 0.955x."""
    return weight_bytes is None or weight_bytes > PREFETCH_MIN_WEIGHT_BYTES


def batched_bf16_contractions(features: FrozenSet[str], narrow_type: str) -> bool:
    """Whether precision="bf16" narrows attention's batched products too:
    where AMX tiles (matmul_dot_cpu's @cuvil_amx_bf16) or vdpbf16ps
    (@cuvil_vnni_bmm_cpu) take them. Elsewhere the FMA kernel would only add
    the conversions, so they stay f32."""
    return narrow_type == "bf16" and (amx_bf16(features) or bf16_dot_product(features))


def im2col_min_input_channels(features: FrozenSet[str], narrow_type: str) -> int:
    """The im2col conv pass's min-input-channels (0: its default, 16): 1
    where precision="bf16" runs matmuls on vdpbf16ps and no AMX, so that a
    conv with few input channels (ResNet's 3-channel stem) becomes a matmul
    on the dot-product kernel, not a direct conv that converts its bf16
    operands to f32 for FMAs (ResNet-18's stem, Zen 5, 1 thread: 2.70 ms
    direct -> 0.61-0.69 ms matmul + 0.30-0.34 ms gather; its max pool then
    runs channels-last too, 0.61 -> 0.19-0.22 ms)."""
    return 1 if narrow_type == "bf16" and bf16_dot_product(features) and not amx_bf16(features) else 0


def apply_schedule(module, schedule=DEFAULT_SCHEDULE, params=None):
    """Applies the scripts of `schedule` in order; returns their ApplyReports.
    `params` ({name: int}) goes to every script with a parameter of that name
    (TM, RM, RN: matmul_cpu and batch_matmul_cpu; EW_ROWS, ...: elementwise_cpu;
    see transform.parameters); a name no script has is an error."""
    from .errors import TransformError

    scripts = [(transform.load(script), entry) for script, entry in schedule]
    if params:
        known = [transform.parameters(text, entry) for text, entry in scripts]
        unknown = sorted(set(params) - set().union(*known))
        if unknown:
            raise TransformError(f"no script of the schedule has parameters named {unknown}; "
                                 f"they have {sorted(set().union(*known))}")
    reports = []
    for i, (text, entry) in enumerate(scripts):
        mine = {k: v for k, v in (params or {}).items() if k in known[i]} if params else None
        reports.append(transform.apply(module, text, entry=entry, params=mine))
    return reports
