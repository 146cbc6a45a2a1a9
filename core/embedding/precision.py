"""Which numeric precision a local runtime embeds in, and which precisions may share an index.

`choose_precision` resolves RAG_EMBEDDING_PRECISION for a runtime:
- an explicit precision must be one the runtime has (fp16 is MLX's, bf16 torch's, int8 ONNX
  Runtime's); on hardware without native support it still runs, emulated and slower, and
  the reason says so;
- `auto` takes the runtime's fastest precision that this machine runs natively *and* that
  held the model's quality guard (the registry's `PrecisionGuard`, for the variant made
  today), else fp32. Unmeasured means fp32.

Native support, from the CPU's flags: bf16 needs AVX512_BF16 or AMX (x86) or the BF16
extension (Arm); without them oneDNN emulates bf16, measured 50x slower than fp32 on the
AVX2-only development box. Dynamic int8 in ONNX Runtime uses VNNI where present and
AVX2's VPMADDUBSW otherwise (the reduce_range policy is for the latter), or Arm's dot
product. fp16 is for the Apple GPU that MLX runs on.

Sharing an index: vectors of one model in two precisions may sit in one index only when
every precision involved is fp32 or held the guard; the index records its precisions and
the ingest refuses a mix (core/store: `bind_model`).
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

from core.embedding.models import ModelSpec, PrecisionGuard
from core.embedding.onnx_quantize import INT8_POLICY, QUANTIZE_VERSION

PRECISIONS = ("fp32", "bf16", "int8", "fp16")
# Per runtime, the precisions it can run, fastest first; fp32 always last.
RUNTIME_PRECISIONS: dict[str, tuple[str, ...]] = {
    "onnx": ("int8", "fp32"),
    "torch": ("bf16", "fp32"),
    "mlx": ("fp16", "fp32"),
    "http": ("fp32",),  # the server's business; its vectors are taken as the model's
}
# Any one of these hardware features makes the precision native (faster than fp32).
NATIVE_FEATURES: dict[str, frozenset[str]] = {
    "bf16": frozenset({"avx512_bf16", "amx_bf16", "bf16"}),
    "int8": frozenset({"avx512_vnni", "avx_vnni", "avx2", "asimddp"}),
    "fp16": frozenset({"apple_gpu"}),
}
# How each lower precision is made today; a guard measured for another variant does not count.
VARIANTS = {
    "int8": f"{INT8_POLICY.name}-q{QUANTIZE_VERSION}",
    "bf16": "autocast",
    "fp16": "fp16-weights",
}


class PrecisionError(ValueError):
    """The precision asked for does not exist for the runtime (e.g. fp16 outside MLX)."""


@dataclass(frozen=True)
class Hardware:
    """What this machine offers the precisions: CPU flags, plus `apple_gpu` on Apple Silicon."""

    features: frozenset[str]

    def native(self, precision: str) -> bool:
        return precision == "fp32" or bool(self.features & NATIVE_FEATURES.get(precision, set()))


def detect_hardware(
    system: str | None = None, machine: str | None = None, cpuinfo: Path = Path("/proc/cpuinfo")
) -> Hardware:
    system = platform.system() if system is None else system
    machine = platform.machine() if machine is None else machine
    if system == "Darwin" and machine == "arm64":
        return Hardware(frozenset({"apple_gpu", "asimddp"}))
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return Hardware(frozenset())
    return Hardware(cpu_flags(text))


def cpu_flags(cpuinfo_text: str) -> frozenset[str]:
    """The first processor's feature flags ("flags" on x86, "Features" on Arm)."""
    for line in cpuinfo_text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def guard_for(spec: ModelSpec, runtime: str, precision: str) -> PrecisionGuard | None:
    """The model's guard measurement of today's variant of `precision` on `runtime`."""
    for guard in spec.precision_guards:
        if (guard.runtime, guard.precision, guard.variant) == (
            runtime,
            precision,
            VARIANTS.get(precision),
        ):
            return guard
    return None


def guard_passed(spec: ModelSpec, runtime: str, precision: str) -> bool:
    if precision == "fp32":
        return True
    guard = guard_for(spec, runtime, precision)
    return guard is not None and guard.passed


@dataclass(frozen=True)
class PrecisionChoice:
    precision: str
    reason: str


def choose_precision(
    requested: str, runtime: str, spec: ModelSpec, hardware: Hardware
) -> PrecisionChoice:
    """The precision `runtime` embeds `spec`'s model in (rules in the module docstring)."""
    available = RUNTIME_PRECISIONS.get(runtime, ("fp32",))
    if requested != "auto":
        if requested not in available:
            owners = [r for r, ps in RUNTIME_PRECISIONS.items() if requested in ps]
            raise PrecisionError(
                f"RAG_EMBEDDING_PRECISION={requested} is not available on the {runtime} "
                f"runtime (it has {', '.join(available)}; {requested} runs on "
                f"{', '.join(owners) or 'no runtime'})"
            )
        if not hardware.native(requested):
            return PrecisionChoice(requested, "asked for; emulated on this machine (slower)")
        return PrecisionChoice(requested, "asked for")
    for precision in available[:-1]:
        if hardware.native(precision) and guard_passed(spec, runtime, precision):
            return PrecisionChoice(precision, "auto: native here and held the quality guard")
    return PrecisionChoice("fp32", _why_fp32(spec, runtime, hardware, available[:-1]))


def _why_fp32(spec: ModelSpec, runtime: str, hardware: Hardware, lower: tuple[str, ...]) -> str:
    if not lower:
        return f"auto: the {runtime} runtime has no lower precision"
    reasons = []
    for precision in lower:
        if not hardware.native(precision):
            reasons.append(f"{precision} is not native on this machine")
        elif guard_for(spec, runtime, precision) is None:
            reasons.append(f"{precision} is unmeasured for {spec.model_id}")
        else:
            reasons.append(f"{precision} did not hold the quality guard for {spec.model_id}")
    return "auto: " + "; ".join(reasons)


def precision_label(precision: str) -> str:
    """What an index records and a cache keys for vectors of `precision`: the precision and
    the variant that made it ("int8:ffn-down-fp32-rr-q1"), so that vectors of a changed
    quantization never pass for the old one's; "fp32" alone."""
    return precision if precision == "fp32" else f"{precision}:{VARIANTS.get(precision, '')}"


def shares_index_with(spec: ModelSpec, precision: str) -> frozenset[str]:
    """The labels (`precision_label`) whose vectors may sit beside `precision`'s in one index
    of the model: fp32 and every guarded precision, if `precision` is one of them; else only
    its own."""
    guarded = {
        precision_label(g.precision)
        for g in spec.precision_guards
        if guard_passed(spec, g.runtime, g.precision)
    }
    family = frozenset({"fp32", *guarded})
    label = precision_label(precision)
    return family if label in family else frozenset({label})
