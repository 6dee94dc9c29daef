"""Verify a config-only parameter count against the Hub's per-dtype totals of a quantized repo.

The Hub's ``safetensors`` totals of a quantized checkpoint count stored elements: quantized
weights (FP8, int8, or int4 packed eight to an I32), their scales, zero points and indices,
and everything kept in floating point. They are not parameters, but they can prove a config
count exact. For the scheme the config declares (:mod:`cardaudit.extract.quant_schemes`:
FP8 block, GPTQ, AWQ, compressed-tensors) and the decoder's linear weights by family
(:mod:`cardaudit.extract.linear_families`), every combination of quantized families is
tried — quantizers differ on attention, shared experts, dense MLPs, MTP layers, routers and
the LM head — with the MTP layers stored or dropped and, where the tools wrote them, with
or without a zero bias beside every quantized linear. A combination fits when:

* every non-float dtype total the scheme writes (F8_E4M3, I8, I32, I64) equals the elements
  the combination stores in it, exactly;
* the floating-point total (BF16 + F16 + F32) equals the combination's scale elements plus
  the config's parameters (with MTP layers if stored, and stored buffers: DeepSeek's
  ``e_score_correction_bias``, zero biases) minus the parameters it quantized.

Exactly one fit must remain (fits that give identical figures count once); otherwise, or for
any scheme or architecture not enumerated, the answer is None and the repo's headers are read
in full.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import product
from typing import Any

from cardaudit.extract.config_count import count_from_config
from cardaudit.extract.linear_families import LinearFamilies, linear_families, stored_buffers
from cardaudit.extract.quant_schemes import FLOAT_DTYPES, WIDTHS, StorageScheme, scheme_of

METHOD = "config count verified against Hub dtype totals"


@dataclass(frozen=True)
class VerifiedCount:
    """Exact parameters of a quantized repo, proven by the Hub's per-dtype totals."""

    total: int
    by_dtype: Mapping[str, int]
    quantized: int
    scales: int
    #: Tensors stored beside the parameters transformers counts: DeepSeek's
    #: ``e_score_correction_bias``, the zero biases older GPTQ tools write.
    buffers: int
    mtp: int
    experts: int
    #: The scheme's name ("fp8-block", "gptq", "awq", "compressed-tensors pack-quantized"...).
    scheme: str
    #: Bytes of scales, zero points, indices and shapes (storage, not parameters).
    aux_bytes: int
    #: The linear families found quantized (see :class:`LinearFamilies`).
    quantized_families: tuple[str, ...]
    #: The equations that held, in words.
    verification: str


@dataclass(frozen=True)
class _FamilyStorage:
    """What one family of linears stores under a scheme."""

    elements: Mapping[str, int]
    scales: int
    parameters: int


@dataclass(frozen=True)
class _Fit:
    families: tuple[str, ...]
    with_mtp: bool
    mtp: int
    parameters: int
    quantized: int
    scales: int
    buffers: int


def verify_quantized(
    config: Mapping[str, Any] | None, hub_parameters: Mapping[str, int]
) -> VerifiedCount | None:
    """The config count of a quantized repo, if the Hub's per-dtype totals prove it exact
    (see the module doc); None otherwise."""
    if not isinstance(config, Mapping):
        return None
    scheme = scheme_of(config.get("quantization_config"))
    if scheme is None or scheme.quantized_dtype not in hub_parameters:
        return None
    if set(hub_parameters) - scheme.dtypes - FLOAT_DTYPES:
        return None
    layout = linear_families(config)
    fits = _fits(config, layout, scheme, hub_parameters) if layout is not None else []
    if layout is None or len(fits) != 1:
        return None  # nothing fits, or the totals cannot tell two combinations apart
    (fit,) = fits
    return _verified(scheme, layout, fit, hub_parameters)


def _family_storage(layout: LinearFamilies, scheme: StorageScheme) -> dict[str, _FamilyStorage]:
    """Per family whose every linear the scheme can store: what it stores."""
    storage: dict[str, _FamilyStorage] = {}
    for family, shapes in layout.families.items():
        elements: dict[str, int] = {}
        scales = 0
        for out, inp in shapes:
            stored = scheme.stored(out, inp)
            if stored is None:
                break
            for dtype, n in stored[0].items():
                elements[dtype] = elements.get(dtype, 0) + n
            scales += stored[1]
        else:
            parameters = sum(out * inp for out, inp in shapes)
            storage[family] = _FamilyStorage(elements, scales, parameters)
    return storage


def _fits(
    config: Mapping[str, Any],
    layout: LinearFamilies,
    scheme: StorageScheme,
    hub_parameters: Mapping[str, int],
) -> list[_Fit]:
    """Every distinct combination of quantized families that satisfies both equations."""
    count = count_from_config(config)
    if count is None:
        return []
    storage = _family_storage(layout, scheme)
    floats = sum(n for dtype, n in hub_parameters.items() if dtype in FLOAT_DTYPES)
    mtp = count.components.get("mtp", 0)
    fits: dict[tuple[int, int, int, int], _Fit] = {}
    for chosen in _subsets(sorted(storage)):
        parts = [storage[family] for family in chosen]
        if any(
            sum(part.elements.get(dtype, 0) for part in parts) != hub_parameters.get(dtype, 0)
            for dtype in scheme.dtypes
        ):
            continue
        scales = sum(part.scales for part in parts)
        quantized = sum(part.parameters for part in parts)
        zero_biases = (0, layout.unbiased_outputs(chosen)) if scheme.zero_biases else (0,)
        for with_mtp, biases in product((True, False) if mtp else (True,), zero_biases):
            if not with_mtp and "mtp" in chosen:
                continue
            buffers = stored_buffers(config, with_mtp=with_mtp) + biases
            parameters = count.total + (mtp if with_mtp else 0) + buffers
            if floats == scales + parameters - quantized:
                key = (parameters, quantized, scales, buffers)
                fits.setdefault(key, _Fit(chosen, with_mtp, mtp if with_mtp else 0, *key))
    return list(fits.values())


def _verified(
    scheme: StorageScheme,
    layout: LinearFamilies,
    fit: _Fit,
    hub_parameters: Mapping[str, int],
) -> VerifiedCount | None:
    floats = {d: n for d, n in hub_parameters.items() if d in FLOAT_DTYPES}
    exact = [dtype for dtype, n in floats.items() if n == fit.scales]
    fitting = [dtype for dtype in scheme.scale_dtypes if floats.get(dtype, 0) >= fit.scales]
    scale_dtype = exact[0] if len(exact) == 1 else next(iter(fitting), None)
    if scale_dtype is None:
        return None
    by_dtype = dict(floats)
    by_dtype[scale_dtype] -= fit.scales
    by_dtype[scheme.label] = by_dtype.get(scheme.label, 0) + fit.quantized
    stored = sum(hub_parameters.get(d, 0) * WIDTHS[d] for d in scheme.dtypes)
    aux_bytes = stored - fit.quantized * scheme.bits // 8 + fit.scales * WIDTHS[scale_dtype]
    return VerifiedCount(
        total=fit.parameters,
        by_dtype={dtype: n for dtype, n in sorted(by_dtype.items()) if n},
        quantized=fit.quantized,
        scales=fit.scales,
        buffers=fit.buffers,
        mtp=fit.mtp,
        experts=layout.expert_parameters - (0 if fit.with_mtp else layout.mtp_expert_parameters),
        scheme=scheme.name,
        aux_bytes=aux_bytes,
        quantized_families=fit.families,
        verification=(
            f"{scheme.equations}; the {'/'.join(sorted(scheme.dtypes))} totals = what the "
            "quantized linears store; the float total = their scales + the config count "
            "(+ stored buffers) - their parameters; exactly one combination of quantized "
            "families fits; the Hub's totals are bound to this commit by the shard sizes"
        ),
    )


def _subsets(names: list[str]) -> Iterable[tuple[str, ...]]:
    """Every non-empty combination of ``names``."""
    for mask in range(1, 1 << len(names)):
        yield tuple(name for bit, name in enumerate(names) if mask >> bit & 1)
