"""The embedding precision: what `auto` picks (only a precision this machine runs natively
and the model held the quality guard in, else fp32), what an explicit choice may be, and
which precisions may share an index."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.embedding.models import GUARD_DEV_SETS, ModelSpec, PrecisionGuard, model_spec
from core.embedding.precision import (
    VARIANTS,
    Hardware,
    PrecisionError,
    choose_precision,
    cpu_flags,
    detect_hardware,
    precision_label,
    shares_index_with,
)
from core.embedding.runtimes import (
    EmbeddingConfigError,
    load_local_embedder,
    planned_precision,
    planned_runtime,
)
from core.settings import Settings

AVX2 = Hardware(frozenset({"sse4_2", "avx2", "fma"}))
AVX512_BF16 = Hardware(frozenset({"avx2", "avx512f", "avx512_vnni", "avx512_bf16"}))
BARE = Hardware(frozenset({"sse4_2"}))


def guard(precision: str, runtime: str, **changes: object) -> PrecisionGuard:
    measured = PrecisionGuard(
        runtime=runtime,
        precision=precision,
        variant=VARIANTS[precision],
        cosine_mean=0.997,
        cosine_p1=0.995,
        ndcg_drop=0.001,
        measured="test",
        ndcg_sets=GUARD_DEV_SETS,
    )
    return replace(measured, **changes)  # type: ignore[arg-type]


def spec_with(*guards: PrecisionGuard) -> ModelSpec:
    return ModelSpec(model_id="org/model", dim=8, precision_guards=guards)


def test_auto_picks_int8_on_onnx_where_the_cpu_has_it_and_the_guard_held():
    choice = choose_precision("auto", "onnx", spec_with(guard("int8", "onnx")), AVX2)
    assert choice.precision == "int8"


@pytest.mark.parametrize(
    "failed",
    [
        {"cosine_mean": 0.993},  # the default ORT quantization was 0.93
        {"cosine_p1": 0.97},
        {"ndcg_drop": 0.004},
        {"ndcg_drop": None},  # retrieval not measured yet
        {"ndcg_sets": ("scifact", "cosqa", "hotpotqa-100")},  # a dev set still missing
        {"variant": "another-policy"},  # measured for a quantization no longer made
    ],
)
def test_auto_stays_fp32_when_the_guard_did_not_hold(failed):
    spec = spec_with(guard("int8", "onnx", **failed))
    choice = choose_precision("auto", "onnx", spec, AVX2)
    assert choice.precision == "fp32"
    assert "int8" in choice.reason


def test_auto_stays_fp32_when_the_cpu_lacks_the_feature():
    spec = spec_with(guard("int8", "onnx"), guard("bf16", "torch"))
    assert choose_precision("auto", "onnx", spec, BARE).precision == "fp32"
    # bf16 without AVX512_BF16/AMX is emulated (50x slower than fp32 on an AVX2 box).
    torch_choice = choose_precision("auto", "torch", spec, AVX2)
    assert torch_choice.precision == "fp32"
    assert "not native" in torch_choice.reason
    assert choose_precision("auto", "torch", spec, AVX512_BF16).precision == "bf16"


def test_auto_stays_fp32_for_an_unmeasured_model():
    choice = choose_precision("auto", "onnx", spec_with(), AVX2)
    assert (choice.precision, "unmeasured" in choice.reason) == ("fp32", True)


def test_a_guard_counts_only_for_the_runtime_it_was_measured_on():
    spec = spec_with(guard("fp16", "mlx"))
    apple = Hardware(frozenset({"apple_gpu"}))
    assert choose_precision("auto", "mlx", spec, apple).precision == "fp16"
    assert choose_precision("auto", "torch", spec, apple).precision == "fp32"


def test_an_explicit_precision_must_exist_for_the_runtime():
    spec = spec_with()
    with pytest.raises(PrecisionError, match="fp16 runs on mlx"):
        choose_precision("fp16", "onnx", spec, AVX2)
    with pytest.raises(PrecisionError, match="int8"):
        choose_precision("int8", "torch", spec, AVX2)
    assert choose_precision("fp32", "http", spec, AVX2).precision == "fp32"


def test_an_explicit_precision_runs_even_unguarded_and_emulated_and_says_so():
    choice = choose_precision("bf16", "torch", spec_with(), AVX2)
    assert choice.precision == "bf16"
    assert "emulated" in choice.reason


def test_cpu_flags_are_read_from_x86_and_arm_cpuinfo():
    x86 = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512_vnni\nbogomips\t: 1\n"
    arm = "processor\t: 0\nFeatures\t: fp asimd asimddp bf16\n"
    assert {"avx2", "avx512_vnni"} <= cpu_flags(x86)
    assert {"asimddp", "bf16"} <= cpu_flags(arm)
    assert cpu_flags("") == frozenset()


def test_apple_silicon_has_the_gpu_mlx_runs_fp16_on(tmp_path):
    assert detect_hardware("Darwin", "arm64").native("fp16")
    missing = detect_hardware("Linux", "x86_64", cpuinfo=tmp_path / "absent")
    assert missing.features == frozenset()
    assert missing.native("fp32")


def test_guarded_precisions_share_an_index_with_fp32_and_others_only_with_themselves():
    spec = spec_with(guard("int8", "onnx"), guard("bf16", "torch", cosine_mean=0.99))
    int8, bf16 = precision_label("int8"), precision_label("bf16")
    assert int8 == f"int8:{VARIANTS['int8']}"  # the variant too: another one is other vectors
    assert shares_index_with(spec, "fp32") == {"fp32", int8}
    assert shares_index_with(spec, "int8") == {"fp32", int8}
    assert shares_index_with(spec, "bf16") == {bf16}
    assert shares_index_with(spec_with(), "int8") == {int8}


def test_the_registry_guards_are_measured_figures_that_decide_consistently():
    for spec in (model_spec("all-minilm-l6-v2"),):
        for measured in spec.precision_guards:
            # Measured for the variant made today: a changed quantization is re-measured.
            assert measured.variant == VARIANTS[measured.precision]
            assert measured.measured  # when, where and how it was measured
            held = (
                measured.cosine_mean >= 0.995
                and measured.cosine_p1 >= 0.98
                and measured.ndcg_drop is not None
                and measured.ndcg_drop <= 0.003
                and set(GUARD_DEV_SETS) <= set(measured.ndcg_sets)
            )
            assert measured.passed == held


@pytest.mark.parametrize(("precision", "runtime"), [("bf16", "torch"), ("int8", "onnx")])
def test_with_the_runtime_on_auto_an_explicit_precision_picks_the_runtime_that_has_it(
    precision, runtime, tmp_path
):
    settings = Settings(embedding_precision=precision, model_cache_dir=tmp_path)
    assert planned_runtime(settings)[0] == runtime
    assert planned_precision(settings, runtime).precision == precision


def test_a_precision_the_chosen_runtime_lacks_is_a_configuration_error(tmp_path):
    settings = Settings(
        embedding_runtime="onnx", embedding_precision="bf16", model_cache_dir=tmp_path
    )
    with pytest.raises(EmbeddingConfigError, match="bf16 runs on torch"):
        load_local_embedder(settings, "onnx")
